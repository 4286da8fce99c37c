// The scopes of agentHandler()'s route groups (design §15); authorize.ts checks them.
import { AuthConfigError, isScopeList, checkOptionNames } from '../auth/internal.ts';

/** Scopes per group of routes (`agentHandler`'s `scopes`). */
export interface RouteScopes {
  send?: readonly string[];
  read?: readonly string[];
  approve?: readonly string[];
  sessions?: readonly string[];
  mcp?: readonly string[];
}

/** What is said of a scope list that is not one, and of scopes given without auth (by the MCP route's `scopes` too). */
export const NOT_A_SCOPE_LIST = ' must be a non-empty list of RFC 6749 scope tokens';
/** No challenge names `offline_access` (design §29) and no access token carries it: a requirement nothing could meet. */
export const NO_OFFLINE_ACCESS =
  ' must not include offline_access: it asks for a refresh token, no access token carries it, so no token could satisfy it';
export const SCOPES_NEED_AUTH = ' need auth (without it no caller has claims to grant them)';

export const SCOPE_GROUPS = ['send', 'read', 'approve', 'sessions', 'mcp'] as const;
export type ScopeGroup = (typeof SCOPE_GROUPS)[number];

export function readRouteScopes(
  helper: string,
  value: unknown,
  auth: unknown,
): Readonly<Partial<Record<ScopeGroup, readonly string[]>>> | undefined {
  if (value === undefined) return undefined;
  const fail = (message: string) => new AuthConfigError(`${helper}: scopes${message}`);
  if (typeof value !== 'object' || value === null) throw fail(' must be { send?, read?, approve?, sessions?, mcp? }');
  checkOptionNames(`${helper}: scopes`, value, SCOPE_GROUPS);
  if (auth === undefined) throw fail(SCOPES_NEED_AUTH);
  const scopes: Partial<Record<ScopeGroup, readonly string[]>> = {};
  for (const group of SCOPE_GROUPS) {
    const list = (value as Record<string, unknown>)[group];
    if (list === undefined) continue;
    if (!isScopeList(list)) throw fail(`.${group}${NOT_A_SCOPE_LIST}`);
    if (list.includes('offline_access')) throw fail(`.${group}${NO_OFFLINE_ACCESS}`);
    scopes[group] = Object.freeze([...list]);
  }
  return Object.freeze(scopes);
}
