// One decision (design §32): may this principal do these operations, on this surface, on this
// resource? Every surface asks `authorize()`: the HTTP routes, `/ui`, MCP and the built worker
// (which serves through the same handler). Nothing else in the handler compares scopes or owners.
import type { Principal, SessionMode } from '../agent/types.ts';
import { mayUseOwner } from '../agent/sessions.ts';
import { hasScopes, type EntryGrant } from '../auth/internal.ts';
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
  /** The session the operation touches, when its owner is already known. */
  readonly session?: { readonly mode: SessionMode; readonly owner: unknown };
}

/** Why a request is refused: a method the route does not list, scopes the principal lacks, a session not the caller's. */
export type AuthorizeReason = 'method' | 'scope' | 'not-found';

/** `authorize()`'s answer: allowed, or refused with its status, reason word and (403) the scopes to obtain. */
export type Decision = { readonly allow: true } | Refused;

/** A refusal: its status, reason word, and what its answer names. */
export interface Refused {
  readonly allow: false;
  readonly status: 403 | 404 | 405;
  readonly reason: AuthorizeReason;
  /** 403: the whole union of design §25, which the challenge names. */
  readonly scopes?: readonly string[];
  /** 405: the route's methods. */
  readonly allowed?: readonly string[];
}

export const ALLOW: Decision = Object.freeze({ allow: true });

/**
 * The decision (design §25, §32), in this order: a method the route does not list is 405; then
 * the scopes: the accepting entry's own (under its `scopeImplies`), on MCP `scopes.mcp`, each
 * operation's group and on MCP the tool's (under the handler's `scopeImplies`), all held or 403
 * naming them all; then a session under `'owned'` that is not the caller's is 404, as one that
 * does not exist.
 */
export function authorize(input: AuthorizeInput): Decision {
  const { operations, principal, grant, config } = input;
  if (operations === undefined) return { allow: false, status: 405, reason: 'method', allowed: input.methods ?? [] };
  if (grant !== undefined) {
    const mcp = input.surface === 'mcp' ? { tool: input.tool ?? input.agentTool } : undefined;
    const handlerScopes = requiredScopes(config, operations, mcp, undefined);
    if ((grant.scopes.length > 0 || handlerScopes.length > 0) && !granted(principal, grant, handlerScopes, config))
      return {
        allow: false,
        status: 403,
        reason: 'scope',
        scopes: requiredScopes(config, operations, mcp, grant.scopes),
      };
  }
  const { session } = input;
  if (session !== undefined && !mayUseOwner(session.mode, session.owner, principal))
    return { allow: false, status: 404, reason: 'not-found' };
  return ALLOW;
}

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
