import {
  isProtectedResourceMetadata,
  protectedResourceMetadata,
  type ProtectedResourceMetadata,
  type ProtectedResourceOptions,
} from '../auth/internal.ts';

export type { ProtectedResourceOptions } from '../auth/internal.ts';
export { protectedResourcePath } from '../auth/internal.ts';

/** The `protectedResource` option of `agentHandler`/`serve`: `protectedResourceMetadata()`'s result, or its options. */
export function protectedResourceRoute(
  helper: string,
  value: ProtectedResourceOptions | ProtectedResourceMetadata,
): ProtectedResourceMetadata {
  return isProtectedResourceMetadata(value) ? value : protectedResourceMetadata(value, `${helper}: protectedResource`);
}

const WELL_KNOWN = '/.well-known/oauth-protected-resource';

/**
 * The paths the handler answers its RFC 9728 document at (design §29): the resource's own
 * well-known path, and, with the MCP route on, RFC 9728 §3.1's path for the MCP endpoint
 * (`/.well-known/oauth-protected-resource/agent/mcp` for `…/agent/mcp`), where MCP clients look
 * when they do not follow `resource_metadata`, when the resource covers that endpoint. The
 * document is the same: its `resource` stays the configured one, a prefix of the endpoint's URL,
 * which MCP clients accept and ask their tokens for, so the entries' audience still matches.
 */
export function metadataPaths(metadata: ProtectedResourceMetadata, basePath: string, mcp: boolean): Set<string> {
  const paths = new Set([metadata.path]);
  const resourcePath = metadata.path.slice(WELL_KNOWN.length);
  const endpoint = `${basePath}/mcp`;
  if (
    mcp &&
    (resourcePath === '' || resourcePath === '/' || endpoint.startsWith(`${resourcePath.replace(/\/$/, '')}/`))
  )
    paths.add(WELL_KNOWN + endpoint);
  return paths;
}
