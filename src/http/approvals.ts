// The route option `approvals` (design §33): who may list and decide a pending approval (`by`),
// the scopes a call of a given tool needs beside `scopes.approve`, and how long one waits before
// it is shown `expired` and decided as denied. Read once, at creation; authorize.ts applies it.
import { AuthConfigError, checkOptionNames, isScopeList, kindOf } from '../auth/internal.ts';
import { freeze, isInteger, isObject } from '../agent/shapes.ts';
import { NOT_A_SCOPE_LIST, NO_OFFLINE_ACCESS } from './scopes.ts';

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

export const APPROVALS_OPTION_NAMES = freeze(['by', 'scopes', 'ttlSec']);
const RULES: readonly string[] = ['owner', 'approvers', 'others'];
/** A year: a longer wait is a typo (milliseconds for seconds). */
const MAX_TTL_SEC = 365 * 24 * 3600;

export const DEFAULT_APPROVALS: ApprovalsConfig = freeze({ by: 'owner', scopes: new Map(), ttlSec: undefined });

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
  const fail = (message: string) => new AuthConfigError(`${helper}: approvals${message}`);
  if (!isObject(value)) throw fail(` must be { by?, scopes?, ttlSec }; got ${kindOf(value)}`);
  checkOptionNames(`${helper}: approvals`, value, APPROVALS_OPTION_NAMES);
  const { by = 'owner', scopes = {}, ttlSec } = value as ApprovalsOptions;
  if (!RULES.includes(by as string)) throw fail(".by must be 'owner', 'approvers' or 'others'");
  if (by !== 'owner' && (approveScopes === undefined || approveScopes.length === 0))
    throw fail(`.by '${by}' needs scopes.approve: without it every caller would be an approver`);
  if (!isObject(scopes)) throw fail('.scopes must be { toolName: [scopes] }');
  const perTool = new Map<string, readonly string[]>();
  for (const [tool, list] of Object.entries(scopes)) {
    if (!isScopeList(list)) throw fail(`.scopes.${tool}${NOT_A_SCOPE_LIST}`);
    if (list.includes('offline_access')) throw fail(`.scopes.${tool}${NO_OFFLINE_ACCESS}`);
    perTool.set(tool, freeze([...list]));
  }
  if (perTool.size > 0 && auth === undefined) throw fail('.scopes need auth (without it no caller has claims)');
  if (ttlSec !== undefined && (!isInteger(ttlSec) || ttlSec < 1 || ttlSec > MAX_TTL_SEC))
    throw fail(`.ttlSec must be an integer from 1 to ${MAX_TTL_SEC} (seconds)`);
  return freeze({ by, scopes: perTool, ttlSec });
}

/** Is an approval made at `createdAt` past `ttlSec` at `now` (ms)? */
export const isExpired = (config: ApprovalsConfig, createdAt: string, now = Date.now()): boolean =>
  config.ttlSec !== undefined && now - Date.parse(createdAt) > config.ttlSec * 1000;
