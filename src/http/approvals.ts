// The route option `approvals` (design §33): who may list and decide a pending approval (`by`),
// the scopes a call of a given tool needs beside `scopes.approve`, and how long one waits before
// it is shown `expired` and decided as denied. Read once, at creation; authorize.ts applies it.
import { AuthConfigError, checkOptionNames, isScopeList, kindOf } from '../auth/internal.ts';

/**
 * Who may decide: `'owner'`, the session's owner (under `'shared'`: whoever knows the session id);
 * `'approvers'`, the owner and any principal holding `scopes.approve`; `'others'`, like
 * `'approvers'` but never the caller that started the run (four eyes).
 */
export type ApproversRule = 'owner' | 'approvers' | 'others';

/** `agentHandler`'s `approvals` option. */
export interface ApprovalsOptions {
  /** Who may list and decide a pending approval; default `'owner'`. Other than `'owner'` needs `scopes.approve`. */
  by?: ApproversRule;
  /** Per tool, scopes deciding a call of it needs beside `scopes.approve`: `{ deploy: ['ops:approve'] }`. */
  scopes?: Readonly<Record<string, readonly string[]>>;
  /** Seconds a pending approval waits; older, it is shown `expired` and decided as denied (reason `expired`). */
  ttlSec?: number;
}

/** The option as read: closed, checked, frozen. */
export interface ApprovalsConfig {
  readonly by: ApproversRule;
  readonly scopes: ReadonlyMap<string, readonly string[]>;
  readonly ttlSec: number | undefined;
}

export const APPROVALS_OPTION_NAMES = Object.freeze(['by', 'scopes', 'ttlSec']);
const RULES: readonly string[] = ['owner', 'approvers', 'others'];
/** A year: a longer wait is a typo (milliseconds for seconds). */
const MAX_TTL_SEC = 365 * 24 * 3600;

export const DEFAULT_APPROVALS: ApprovalsConfig = Object.freeze({ by: 'owner', scopes: new Map(), ttlSec: undefined });

/**
 * `approvals` checked at creation. `approveScopes`: the handler's `scopes.approve`, which a rule
 * other than `'owner'` needs (without it every caller would be an approver).
 */
export function readApprovals(
  helper: string,
  value: unknown,
  approveScopes: readonly string[] | undefined,
  auth: unknown,
): ApprovalsConfig {
  if (value === undefined) return DEFAULT_APPROVALS;
  if (typeof value !== 'object' || value === null)
    throw new AuthConfigError(`${helper}: approvals must be { by?, scopes?, ttlSec? }; got ${kindOf(value)}`);
  checkOptionNames(`${helper}: approvals`, value, APPROVALS_OPTION_NAMES);
  const { by = 'owner', scopes = {}, ttlSec } = value as ApprovalsOptions;
  if (!RULES.includes(by as string))
    throw new AuthConfigError(`${helper}: approvals.by must be 'owner', 'approvers' or 'others'; got ${kindOf(by)}`);
  if (by !== 'owner' && (approveScopes === undefined || approveScopes.length === 0))
    throw new AuthConfigError(
      `${helper}: approvals.by '${by}' needs scopes.approve: without it every caller would be an approver`,
    );
  if (typeof scopes !== 'object' || scopes === null)
    throw new AuthConfigError(`${helper}: approvals.scopes must be { toolName: [scopes] }; got ${kindOf(scopes)}`);
  const perTool = new Map<string, readonly string[]>();
  for (const [tool, list] of Object.entries(scopes)) {
    if (!isScopeList(list))
      throw new AuthConfigError(
        `${helper}: approvals.scopes.${tool} must be a non-empty list of RFC 6749 scope tokens`,
      );
    if (list.includes('offline_access'))
      throw new AuthConfigError(
        `${helper}: approvals.scopes.${tool} must not include offline_access: it asks for a refresh token, no access token carries it, so no token could satisfy it`,
      );
    perTool.set(tool, Object.freeze([...list]));
  }
  if (perTool.size > 0 && auth === undefined)
    throw new AuthConfigError(`${helper}: approvals.scopes need auth (without it no caller has claims)`);
  if (ttlSec !== undefined && (!Number.isInteger(ttlSec) || ttlSec < 1 || ttlSec > MAX_TTL_SEC))
    throw new AuthConfigError(`${helper}: approvals.ttlSec must be an integer from 1 to ${MAX_TTL_SEC} (seconds)`);
  return Object.freeze({ by, scopes: perTool, ttlSec });
}

/**
 * What a send is told of `ttlSec` (design §33): whether a pending approval made at `createdAt`
 * has expired, so the send denies it first; `undefined` without `ttlSec`.
 */
export const expiryOf = (config: ApprovalsConfig): ((createdAt: string | undefined) => boolean) | undefined =>
  config.ttlSec === undefined ? undefined : (createdAt) => createdAt !== undefined && isExpired(config, createdAt);

/** Is an approval made at `createdAt` past `ttlSec` at `now` (ms)? */
export const isExpired = (config: ApprovalsConfig, createdAt: string, now = Date.now()): boolean =>
  config.ttlSec !== undefined && now - Date.parse(createdAt) > config.ttlSec * 1000;
