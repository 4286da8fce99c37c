// One decision (design §32): may this principal do these operations, on this surface, on this
// resource? Every surface asks `authorize()`: the HTTP routes, `/ui`, MCP and the built worker
// (which serves through the same handler). Nothing else in the handler compares scopes or owners.
import type { Principal, SessionMode } from '../agent/types.ts';
import { mayUseOwner, ownerCaller } from '../agent/sessions.ts';
import type { ApprovalResource } from '../agent/resources.ts';
import { DEFAULT_APPROVALS, isExpired, type ApprovalsConfig } from './approvals.ts';
import { callerKey, hasScopes, sameCaller, type EntryGrant } from '../auth/internal.ts';
import { requiredScopes, type McpTool, type Operation, type ScopeConfig } from './operations.ts';

/** Where a request came in: an HTTP route, useChat's `/ui`, or the MCP route. */
export type Surface = 'http' | 'ui' | 'mcp';

/** What `authorize()` is asked. */
export interface AuthorizeInput {
  readonly surface: Surface;
  /** What the request does; `undefined`: its method is one the route does not list (405). */
  readonly operations: readonly Operation[] | undefined;
  /** The methods the route lists, for a 405's `Allow`. */
  readonly methods?: readonly string[];
  readonly principal: Principal | undefined;
  /** What the accepting entry grants, as data; `undefined` on a handler without auth. */
  readonly grant: EntryGrant | undefined;
  /** The handler's `scopes`, `mcp.scopes` and `scopeImplies`. */
  readonly config: ScopeConfig;
  /** On MCP, the tool a `tools/call` names (when the agent offers it). */
  readonly tool?: McpTool;
  /** On MCP, the agent tool a `tools/call` names (`mcp.tools`, design §36): its `mcp.scopes` entry, no group's. */
  readonly agentTool?: string;
  /**
   * The session the operation touches, when its owner is already known (`owner` `undefined`: no
   * such session). `approvals`: only its pending approvals are read, which under `approvals.by`
   * other than `'owner'` an approver may read too.
   */
  readonly session?: { readonly mode: SessionMode; readonly owner: unknown; readonly approvals?: boolean };
  /** The pending approval a `decide` touches (`undefined` entries: no such approval). */
  readonly approval?: {
    readonly mode: SessionMode;
    readonly found: ApprovalResource | undefined;
  };
  /** `GET <base>/approvals` without `sessionId`: the queue (under `'approvers'`/`'others'` it needs `scopes.approve` too). */
  readonly queue?: boolean;
  /** The handler's `approvals` option (design §33). */
  readonly approvals?: ApprovalsConfig;
}

/** Why a request is refused: a method the route does not list, scopes the principal lacks, a session not the caller's. */
export type AuthorizeReason = 'method' | 'scope' | 'not-found' | 'self-approval';

/**
 * `authorize()`'s answer: allowed (`expired`: the approval waited past `approvals.ttlSec`, and is
 * decided as denied), or refused with its status, reason word and (403) the scopes to obtain.
 */

/** A refusal: its status, reason word, and what its answer names. */
export interface Refused {
  readonly allow: false;
  readonly status: 403 | 404 | 405;
  readonly reason: AuthorizeReason;
  /** 404: what was not found, for the answer an unknown id gets. */
  readonly missing?: 'session' | 'approval';
  /** 403: the whole union of design §25, which the challenge names. */
  readonly scopes?: readonly string[];
  /** 405: the route's methods. */
  readonly allowed?: readonly string[];
}

export type Decision = { readonly allow: true; readonly expired?: boolean } | Refused;

export const ALLOW: Decision = Object.freeze({ allow: true });
const EXPIRED: Decision = Object.freeze({ allow: true, expired: true });

/**
 * The decision (design §25, §32), in this order: a method the route does not list is 405; then
 * the scopes: the accepting entry's own (under its `scopeImplies`), on MCP `scopes.mcp`, each
 * operation's group and on MCP the tool's (under the handler's `scopeImplies`), all held or 403
 * naming them all; then a session under `'owned'` that is not the caller's is 404, as one that
 * does not exist.
 */
export function authorize(input: AuthorizeInput): Decision {
  const { operations, principal, grant, config } = input;
  const approvals = input.approvals ?? DEFAULT_APPROVALS;
  if (operations === undefined) return { allow: false, status: 405, reason: 'method', allowed: input.methods ?? [] };
  // The queue of others' approvals is read with the approve group's scopes too (design §33).
  const asked = input.queue === true && approvals.by !== 'owner' ? [...operations, 'decide' as const] : operations;
  const mcp = input.surface === 'mcp' ? { tool: input.tool ?? input.agentTool } : undefined;
  const refusedScopes = (extra: readonly string[]) => ({
    allow: false as const,
    status: 403 as const,
    reason: 'scope' as const,
    scopes: [...new Set([...requiredScopes(config, asked, mcp, grant?.scopes), ...extra])],
  });
  if (grant !== undefined) {
    const handlerScopes = requiredScopes(config, asked, mcp, undefined);
    if ((grant.scopes.length > 0 || handlerScopes.length > 0) && !granted(principal, grant, handlerScopes, config))
      return refusedScopes(NONE);
  }
  const { session, approval } = input;
  if (session !== undefined) {
    const approver = session.approvals === true && approvals.by !== 'owner' && holdsApprove(principal, config);
    if (session.owner === undefined || (!approver && !mayUseOwner(session.mode, session.owner, principal)))
      return { allow: false, status: 404, reason: 'not-found', missing: 'session' };
  }
  if (approval === undefined) return ALLOW;
  // Ownership first: a caller who may not see the approval learns nothing of it, not even its tool's scopes.
  const { found } = approval;
  if (found === undefined || !maySee(approvals, approval.mode, found, principal, config))
    return { allow: false, status: 404, reason: 'not-found', missing: 'approval' };
  if (approvals.by === 'others' && startedBy(found, principal))
    return { allow: false, status: 403, reason: 'self-approval' };
  const toolScopes = approvals.scopes.get(found.tool);
  if (toolScopes !== undefined && !holds(principal, toolScopes, config)) return refusedScopes(toolScopes);
  return isExpired(approvals, found.createdAt) ? EXPIRED : ALLOW;
}

/**
 * May `principal` see (list, decide) a pending approval (design §33)? Under `'owner'` the §9 rule
 * on its session's owner (under `'shared'`: anyone); under `'approvers'` and `'others'` also
 * whoever holds `scopes.approve`.
 */
export function maySee(
  approvals: ApprovalsConfig,
  mode: SessionMode,
  found: ApprovalResource,
  principal: Principal | undefined,
  config: ScopeConfig,
): boolean {
  if (mayUseOwner(mode, found.owner, principal)) return true;
  return approvals.by !== 'owner' && holdsApprove(principal, config);
}

/** Did `principal` start the run that waits for this approval? One caller key against the other (design §32). */
export const startedBy = (found: ApprovalResource, principal: Principal | undefined): boolean =>
  principal !== undefined &&
  found.requester !== undefined &&
  sameCaller(ownerCaller(found.requester), callerKey(principal));

/** Whether the principal holds `scopes.approve` (set whenever `approvals.by` is not `'owner'`). */
const holdsApprove = (principal: Principal | undefined, config: ScopeConfig): boolean => {
  const approve = config.groups?.approve;
  return approve !== undefined && approve.length > 0 && holds(principal, approve, config);
};

/** Whether the principal's verified claims hold `scopes` (under the handler's `scopeImplies`). */
const holds = (principal: Principal | undefined, scopes: readonly string[], config: ScopeConfig): boolean =>
  principal?.claims !== undefined && hasScopes(principal.claims, scopes, config.implies);

const NONE: readonly string[] = Object.freeze([]);

/**
 * Whether the principal's verified claims hold the entry's scopes (under the entry's
 * `scopeImplies`, or the handler's) and the handler's (under the handler's). A principal without
 * claims (API token, Basic) holds none.
 */
function granted(
  principal: Principal | undefined,
  grant: EntryGrant,
  handlerScopes: readonly string[],
  config: ScopeConfig,
): boolean {
  const claims = principal?.claims;
  if (claims === undefined) return false;
  const entry = grant.scopes;
  const entryHeld =
    entry.length === 0 ||
    hasScopes(claims, entry, grant.scopeImplies) ||
    (config.implies !== undefined && hasScopes(claims, entry, config.implies));
  return entryHeld && (handlerScopes.length === 0 || hasScopes(claims, handlerScopes, config.implies));
}
