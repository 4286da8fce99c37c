// What the route handler asks of an agent before `authorize()` decides (design §32, §33): a
// session's owner, an approval's session, owner, requester and tool, and the queue of pending
// approvals, read without running anything. Kept beside the agent, never on it: not public API.
import type { Agent, DecidedBy, OwnerKey } from './types.ts';

/** A pending approval as `authorize()` sees it. */
export interface ApprovalResource {
  readonly approvalId: string;
  readonly sessionId: string;
  /** The session's owner: `null` for none (trusted code's, or made while `'shared'`). */
  readonly owner: OwnerKey | null;
  /** The owner key of the principal that started the run; absent: trusted code started it. */
  readonly requester: OwnerKey | undefined;
  readonly tool: string;
  readonly arguments: unknown;
  readonly createdAt: string;
}

/** One page of the queue: pending approvals oldest first, after `after` (`[createdAt, approvalId]`). */
export interface QueueQuery {
  /** Only approvals of sessions this key owns (the `'owner'` rule); absent: every one. */
  readonly owner?: OwnerKey;
  readonly limit: number;
  readonly after?: readonly [createdAt: string, approvalId: string];
}

/** One read of the queue: the store's page, those of its approvals whose session is gone left out. */
export interface QueueRead {
  readonly found: ApprovalResource[];
  /** The last approval of the store's page, gone or not (`[createdAt, approvalId]`): where the next read starts. */
  readonly last: readonly [createdAt: string, approvalId: string] | undefined;
  /** Whether the store's page was full: it may have more after `last`. */
  readonly more: boolean;
}

export interface AgentResources {
  /** The owner of a session: `undefined` when there is no such session, `null` when it has none. */
  sessionOwner(sessionId: string): Promise<OwnerKey | null | undefined>;
  approval(approvalId: string): Promise<ApprovalResource | undefined>;
  queue(query: QueueQuery): Promise<QueueRead>;
  /** The pool whose connection each turn of the agent's store holds (a PostgreSQL store's), when the store names one. */
  readonly storePool?: object | undefined;
}

/**
 * An option key the route handler passes once `authorize()` has decided ownership: the agent's
 * operation then compares no owner again (its in-process callers still get the §9 rule).
 * `expired` (on `decide`): the approval waited past `approvals.ttlSec`, and is decided as denied.
 * `expiredIf` (on `send`, which still checks its session itself): whether a pending approval made
 * at `createdAt` is past `approvals.ttlSec`; the send then denies it (reason `expired`) and
 * resumes its run before the message goes (design §33).
 */
export const AUTHORIZED: unique symbol = Symbol('agentward.authorized') as never;
export interface Authorized {
  readonly [AUTHORIZED]?: {
    readonly expired?: boolean;
    readonly expiredIf?: (createdAt: string | undefined) => boolean;
  };
}

const registry = new WeakMap<Agent, AgentResources>();
export const registerResources = (agent: Agent, resources: AgentResources): void => void registry.set(agent, resources);
/** The resources of an agent made by `createAgent`; `undefined` for any other object. */
export const resourcesOf = (agent: Agent): AgentResources | undefined => registry.get(agent);

/** An agent event joining the handler's audit log (design §34): a tool call run, an approval requested or decided. */
export type AgentAuditEvent =
  | { readonly type: 'tool-call'; readonly tool: string; readonly arguments: unknown }
  | {
      readonly type: 'approval-requested';
      readonly approvalId: string;
      readonly tool: string;
      readonly requester?: DecidedBy;
    }
  | {
      readonly type: 'approval-decided';
      readonly approvalId: string;
      readonly tool: string;
      readonly approved: boolean;
      readonly reason?: string;
      readonly decidedBy?: DecidedBy;
    };

/**
 * Where a run's events go, once written (a rejection stops the run before its next step: the
 * tool does not run). An option key of `send` and `decide` the route handler passes; not public API.
 */
export const AUDIT_EVENTS: unique symbol = Symbol('agentward.auditEvents') as never;
export type AuditSink = (event: AgentAuditEvent) => Promise<void>;
export interface AuditEvents {
  [AUDIT_EVENTS]?: AuditSink;
}
