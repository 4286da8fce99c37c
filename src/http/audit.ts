// The record of every decision (design §32): one `AuditRecord` per request past the guards,
// allowed or refused at any step, handed to the `audit` option. Never a token, a password, a
// proof or a header value: only what the handler decided, and about whom.
import { AuthConfigError, checkOptionNames, kindOf } from '../auth/internal.ts';
import type { Surface } from './authorize.ts';

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

/**
 * The `audit` option: a function, or `{ log, required? }` (kept log stores come later; `log` is a
 * function of records until then).
 */
export type AuditOption = AuditFunction | { readonly log: AuditFunction; readonly required?: boolean };

/** What the handler calls for each record. */
export type Audit = (record: AuditRecord) => void;

/** A minute: an audit function's failures are reported at most this often. */
const REPORT_EVERY_MS = 60_000;

/** Reads `audit`: a function, or `{ log, required? }`; errors at creation. */
export function readAudit(helper: string, value: unknown): Audit | undefined {
  if (value === undefined) return undefined;
  let log: unknown = value;
  if (typeof value === 'object' && value !== null && typeof value !== 'function') {
    checkOptionNames(`${helper}: audit`, value, ['log', 'required']);
    const { log: given, required } = value as { log?: unknown; required?: unknown };
    if (required !== undefined && required !== false)
      throw new AuthConfigError(
        `${helper}: audit.required is not supported yet: a record that cannot be kept does not refuse the request; omit it`,
      );
    log = given;
  }
  if (typeof log !== 'function')
    throw new AuthConfigError(
      `${helper}: audit must be a function of each AuditRecord, or { log }; got ${kindOf(log)}`,
    );
  return keepingAnswers(log as AuditFunction);
}

/**
 * `log`, made harmless to the answer: what it throws, or its promise rejects with, is reported
 * on stderr at most once a minute (with how many failed since), never the record.
 */
function keepingAnswers(log: AuditFunction): Audit {
  let lastReport = -Infinity;
  let unreported = 0;
  const failed = (error: unknown) => {
    unreported++;
    const now = Date.now();
    if (now - lastReport < REPORT_EVERY_MS) return;
    lastReport = now;
    console.error(
      `agentward: the audit function failed (${unreported} time${unreported === 1 ? '' : 's'} since the last report); the answers were unchanged:`,
      error instanceof Error ? error.message : String(error),
    );
    unreported = 0;
  };
  return (record) => {
    try {
      const result = log(Object.freeze(record));
      if (result !== undefined && typeof (result as Promise<void>).then === 'function')
        (result as Promise<void>).then(undefined, failed);
    } catch (error) {
      failed(error);
    }
  };
}
