// The record of every decision (design §32): one `AuditRecord` per request past the guards,
// allowed or refused at any step, handed to the `audit` option. Never a token, a password, a
// proof or a header value: only what the handler decided, and about whom.
import { AuthConfigError, checkOptionNames, kindOf } from '../auth/internal.ts';
import type { Surface } from './authorize.ts';
import type { AuditSink } from '../agent/resources.ts';
import { HttpError } from './responses.ts';
import { canonicalJson } from '../agent/canonical-json.ts';
import { sha256Hex } from '../agent/audit-chain.ts';
import { isoNow } from '../agent/clock.ts';

/** The caller a record is about: its caller key's parts, and its type. */
export interface AuditCaller {
  /** The tenant (`principal.tenant`, docs/tenants.md); `''` for a caller without one. */
  readonly tenant: string;
  /** The issuer, `''` when the principal has none. */
  readonly issuer: string;
  /** The principal's authenticator (`jwt`, `oidc`, `api-token`, `basic`, …). */
  readonly authenticator: string;
  readonly id: string;
  readonly type: 'user' | 'service';
}

/** One decision of the route handler, allowed or refused. */
export interface AuditRecord {
  /** When the answer was made, ISO 8601. */
  readonly time: string;
  /** This record's own id (a random UUID): the handler reads no request id off a header. */
  readonly requestId: string;
  readonly surface: Surface;
  /** What the request did or asked to do (`send`, `decide`, `read`, `sessions`); empty when not known (a refused auth, a 405). */
  readonly operations: readonly string[];
  /** `refused` for a 401, 403, 404, 405 or 429; `allowed` for any other answer. */
  readonly outcome: 'allowed' | 'refused';
  readonly status: number;
  /**
   * Why it was refused: an auth refusal reason (`expired`, `signature`, `scope`, …, or
   * `unauthenticated` when no entry said), `method`, `not-found`, `scope`, or `limit`.
   */
  readonly reason?: string;
  /** The accepting or refusing entry's helper name (`jwt`, `apiToken`, …), when one is known. */
  readonly entry?: string;
  /** The accepted caller; absent on a 401 and on a handler without auth. */
  readonly caller?: AuditCaller;
  readonly sessionId?: string;
  readonly approvalId?: string;
  /** The MCP tool a `tools/call` named, cut to 64 characters. */
  readonly tool?: string;
  /** On a 403: the scopes the request needs, all of them. */
  readonly scopes?: readonly string[];
}

/** A function that receives each record; what it throws or rejects never changes the answer. */
export type AuditFunction = (record: AuditRecord) => void | Promise<void>;

/** A kept log (design §34): `memoryAuditLog()`, `postgresAuditLog()`, the Durable Object log; what the handler needs of it. */
export interface AuditAppender {
  append(record: Record<string, unknown>): Promise<unknown>;
}

/**
 * The `audit` option: a function of each record, or `{ log, required?, recordArguments? }` where
 * `log` is a kept audit log (`memoryAuditLog()`, `postgresAuditLog()`, the Durable Object log) or
 * a function. `required: true`: a request whose record cannot be written is answered 503 before
 * its operation runs, and a run whose event cannot be written stops before its next step.
 * `recordArguments: true`: a tool call's record holds its arguments, not only their SHA-256.
 */
export type AuditOption =
  | AuditFunction
  | {
      readonly log: AuditFunction | AuditAppender;
      readonly required?: boolean;
      readonly recordArguments?: boolean;
    };

/** What the handler calls: `record` after each answer; `keep` (required) before the operation, resolving false when it could not. */
export interface Audit {
  readonly required: boolean;
  readonly recordArguments: boolean;
  /** After the answer; never changes it. */
  record(record: AuditRecord): void;
  /** With `required`: writes the record now; `false` when it could not be written (the request is answered 503). */
  keep(record: AuditRecord): Promise<boolean>;
  /** An agent event of the request `requestId`: written, or (required) a rejection that stops the run. */
  event(requestId: string, fields: Record<string, unknown>): Promise<void>;
}

/** A minute: an audit function's failures are reported at most this often. */
const REPORT_EVERY_MS = 60_000;

/** Reads `audit`: a function, or `{ log, required?, recordArguments? }`; errors at creation. */
export function readAudit(helper: string, value: unknown): Audit | undefined {
  if (value === undefined) return undefined;
  let log: unknown = value;
  let required = false;
  let recordArguments = false;
  if (typeof value === 'object' && value !== null && typeof value !== 'function') {
    checkOptionNames(`${helper}: audit`, value, ['log', 'required', 'recordArguments']);
    const given = value as { log?: unknown; required?: unknown; recordArguments?: unknown };
    if (given.required !== undefined && typeof given.required !== 'boolean')
      throw new AuthConfigError(`${helper}: audit.required must be true or false`);
    if (given.recordArguments !== undefined && typeof given.recordArguments !== 'boolean')
      throw new AuthConfigError(`${helper}: audit.recordArguments must be true or false`);
    required = given.required === true;
    recordArguments = given.recordArguments === true;
    log = given.log;
  }
  // Run events (tool calls, approvals, token exchanges) join an audit log's chain; a function of
  // each AuditRecord receives the request records only, the shape its type says.
  const isLog = typeof log === 'object' && log !== null && typeof (log as { append?: unknown }).append === 'function';
  const append = isLog
    ? (record: Record<string, unknown>) => (log as unknown as AuditAppender).append(record)
    : typeof log === 'function'
      ? (record: Record<string, unknown>) => (log as AuditFunction)(record as unknown as AuditRecord)
      : undefined;
  if (append === undefined)
    throw new AuthConfigError(
      `${helper}: audit must be a function of each AuditRecord, or { log } with an audit log or a function; got ${kindOf(log)}`,
    );
  return auditOf(append, required, recordArguments, isLog);
}

/**
 * The log, made harmless to the answer unless `required`: what it throws, or its promise rejects
 * with, is reported on stderr at most once a minute (with how many failed since), never the record.
 */
function auditOf(
  append: (record: Record<string, unknown>) => unknown,
  required: boolean,
  recordArguments: boolean,
  events: boolean,
): Audit {
  let lastReport = -Infinity;
  let unreported = 0;
  const failed = (error: unknown) => {
    unreported++;
    const now = Date.now();
    if (now - lastReport < REPORT_EVERY_MS) return;
    lastReport = now;
    console.error(
      `agentward: the audit log failed (${unreported} time${unreported === 1 ? '' : 's'} since the last report)${required ? '' : '; the answers were unchanged'}:`,
      error instanceof Error ? error.message : String(error),
    );
    unreported = 0;
  };
  /** Appends, resolving true once written, false (reported) when not. */
  const write = async (record: Record<string, unknown>): Promise<boolean> => {
    try {
      await append(Object.freeze(record));
      return true;
    } catch (error) {
      failed(error);
      return false;
    }
  };
  return {
    required,
    recordArguments,
    record(record) {
      void write(record as unknown as Record<string, unknown>);
    },
    keep: (record) => write(record as unknown as Record<string, unknown>),
    async event(requestId, fields) {
      if (!events) return;
      const written = await write({ time: isoNow(), requestId, ...fields });
      // The run stops before its step; the request is answered 503, as when its record could not be written.
      if (!written && required) throw new HttpError(503, 'Service Unavailable');
    },
  };
}

/**
 * The sink a request's run writes its events to (design §34): each with the request's id; a tool
 * call's arguments as the SHA-256 of their canonical JSON (RFC 8785) unless `recordArguments`.
 */
export function auditSink(audit: Audit, requestId: string): AuditSink {
  return async (event) => {
    if (event.type !== 'tool-call') return audit.event(requestId, { ...event });
    const { tool, arguments: args } = event;
    const fields: Record<string, unknown> = { type: 'tool-call', tool };
    if (audit.recordArguments) fields.arguments = args;
    else fields.argumentsSha256 = sha256Hex(canonicalJson(args ?? null));
    return audit.event(requestId, fields);
  };
}
