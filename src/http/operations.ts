// The operations of design §25: what a caller does, whatever surface it comes through (an HTTP
// route, useChat's `/ui`, an MCP tool), and the scopes each needs there. Every surface asks this
// table; none has a list of its own.
import type { ScopeImplies } from '../auth/internal.ts';
import type { RouteScopes, ScopeGroup } from './scopes.ts';

/** Sending a message, deciding an approval, reading a session, listing or deleting sessions. */
export type Operation = 'send' | 'decide' | 'read' | 'sessions';

/** The scope group of each operation (`agentHandler`'s `scopes`). */
export const OPERATION_GROUP: Readonly<Record<Operation, Exclude<ScopeGroup, 'mcp'>>> = Object.freeze({
  send: 'send',
  decide: 'approve',
  read: 'read',
  sessions: 'sessions',
});

/** The MCP tools, and the operation each performs: `read` lists the pending approvals the caller may decide. */
export const MCP_TOOLS: Readonly<Record<McpTool, Operation>> = Object.freeze({
  ask: 'send',
  decide: 'decide',
  read: 'read',
});
export type McpTool = 'ask' | 'decide' | 'read';

/** The operations that run the model: `limits.tokens` meters their turns. */
export const runsModel = (operations: readonly Operation[]): boolean =>
  operations.some((operation) => operation === 'send' || operation === 'decide');

/** The scope configuration of one handler: the groups (`scopes`) and the MCP tools' (`mcp.scopes`). */
export interface ScopeConfig {
  readonly groups: Readonly<RouteScopes> | undefined;
  /** `mcp.scopes`: of `ask`, `decide`, `read` and the agent tools exposed (design §36). */
  readonly tools: Readonly<Record<string, readonly string[]>>;
  /** `scopeImplies` (design §29): a scope held grants every scope it implies. */
  readonly implies?: ScopeImplies;
}

/**
 * The scopes `operations` need on a surface (design §25), each once: the accepting entry's own,
 * then on MCP `scopes.mcp`, then each operation's group, then on MCP the tool's `mcp.scopes`.
 * `mcp`: the request came through the MCP route (`tool`: the tool it calls, if any: `ask`, `decide`,
 * `read` or an agent tool, which performs no operation and so brings no group's scopes, design §36).
 */
export function requiredScopes(
  config: ScopeConfig,
  operations: readonly Operation[],
  mcp: { tool?: string | undefined } | undefined,
  entry: readonly string[] | undefined,
): readonly string[] {
  const { groups, tools } = config;
  const union = new Set(entry);
  for (const scope of (mcp && groups?.mcp) ?? []) union.add(scope);
  for (const operation of operations) for (const scope of groups?.[OPERATION_GROUP[operation]] ?? []) union.add(scope);
  for (const scope of (mcp?.tool !== undefined && Object.hasOwn(tools, mcp.tool) && tools[mcp.tool]) || [])
    union.add(scope);
  return [...union];
}
