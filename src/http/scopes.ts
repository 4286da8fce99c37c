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

export const SCOPE_GROUPS = ['send', 'read', 'approve', 'sessions', 'mcp'] as const;
export type ScopeGroup = (typeof SCOPE_GROUPS)[number];

export function readRouteScopes(
  helper: string,
  value: unknown,
  auth: unknown,
): Readonly<Partial<Record<ScopeGroup, readonly string[]>>> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null)
    throw new AuthConfigError(`${helper}: scopes must be { send?, read?, approve?, sessions?, mcp? }`);
  checkOptionNames(`${helper}: scopes`, value, SCOPE_GROUPS);
  if (auth === undefined)
    throw new AuthConfigError(`${helper}: scopes need auth (without it no caller has claims to grant them)`);
  const scopes: Partial<Record<ScopeGroup, readonly string[]>> = {};
  for (const group of SCOPE_GROUPS) {
    const list = (value as Record<string, unknown>)[group];
    if (list === undefined) continue;
    if (!isScopeList(list))
      throw new AuthConfigError(`${helper}: scopes.${group} must be a non-empty list of RFC 6749 scope tokens`);
    // No challenge names offline_access (design §29) and no access token carries it: nothing could meet it.
    if (list.includes('offline_access'))
      throw new AuthConfigError(
        `${helper}: scopes.${group} must not include offline_access: it asks for a refresh token, no access token carries it, so no token could satisfy it`,
      );
    scopes[group] = Object.freeze([...list]);
  }
  return Object.freeze(scopes);
}
