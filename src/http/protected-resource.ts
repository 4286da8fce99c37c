import { AuthConfigError } from '../auth/errors.ts';
import { readHttpsUrl } from '../auth/jose/key-set.ts';
import { checkOptionNames } from '../auth/options.ts';

/** RFC 9728 protected resource metadata: what OAuth clients (MCP) read to find where to get a token. */
export interface ProtectedResourceOptions {
  /** The resource identifier: the API's `https:` URL as clients call it, e.g. `https://agent.example.com/agent`; no query or fragment. */
  resource: string;
  /** Issuer identifiers of the authorization servers whose access tokens the API accepts (RFC 8414). */
  authorizationServers: readonly string[];
  /** Scopes clients may request, e.g. `['agent:invoke']`. */
  scopesSupported?: readonly string[];
}

const WELL_KNOWN = '/.well-known/oauth-protected-resource';
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const HEADERS = { 'content-type': 'application/json', 'cache-control': 'public, max-age=3600', 'access-control-allow-origin': '*' };

/**
 * The path of the metadata document of `resource` (RFC 9728 §3.1): the well-known prefix, then
 * the resource's path (`https://agent.example.com/agent` → `/.well-known/oauth-protected-resource/agent`).
 */
export function protectedResourcePath(resource: string): string {
  const { pathname } = new URL(resource);
  return pathname === '/' ? WELL_KNOWN : WELL_KNOWN + pathname;
}

/** A URL option of the document: `https:` (or `http:` on localhost), written as it is published, without query or fragment. */
function readDocumentUrl(helper: string, option: string, value: unknown): string {
  const href = readHttpsUrl(helper, option, value);
  const { search, hash } = new URL(href);
  if (typeof value !== 'string' || search !== '' || hash !== '' || (href !== value && href !== `${value}/`)) {
    throw new AuthConfigError(`${helper}: ${option} must be a URL string without query or fragment, written as clients compare it (e.g. "https://agent.example.com/agent")`);
  }
  return value;
}

/**
 * Checks `protectedResource` at creation and answers its document: `GET` (and `HEAD`) of
 * `path` gives the JSON with `bearer_methods_supported: ["header"]`, cacheable for an hour and
 * open to any origin (it is public); any other method 405.
 */
export function protectedResourceRoute(helper: string, options: unknown): { path: string; respond(request: Request): Response } {
  if (typeof options !== 'object' || options === null) throw new AuthConfigError(`${helper}: protectedResource must be { resource, authorizationServers, scopesSupported? }`);
  checkOptionNames(`${helper}: protectedResource`, options, ['resource', 'authorizationServers', 'scopesSupported']);
  const { resource, authorizationServers, scopesSupported } = options as Partial<ProtectedResourceOptions>;
  const document: Record<string, unknown> = { resource: readDocumentUrl(helper, 'protectedResource.resource', resource) };
  if (!Array.isArray(authorizationServers) || authorizationServers.length === 0) {
    throw new AuthConfigError(`${helper}: protectedResource.authorizationServers must be a non-empty list of issuer URLs`);
  }
  document.authorization_servers = authorizationServers.map((issuer) => readDocumentUrl(helper, 'protectedResource.authorizationServers entry', issuer));
  if (scopesSupported !== undefined) {
    if (!Array.isArray(scopesSupported) || !scopesSupported.every((scope) => typeof scope === 'string' && SCOPE.test(scope))) {
      throw new AuthConfigError(`${helper}: protectedResource.scopesSupported must be a list of RFC 6749 scope tokens (no spaces, quotes or backslashes)`);
    }
    document.scopes_supported = [...scopesSupported];
  }
  document.bearer_methods_supported = ['header'];
  const body = JSON.stringify(document);
  return {
    path: protectedResourcePath(resource as string),
    respond(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return new Response('{"error":"Method Not Allowed"}', { status: 405, headers: { 'content-type': 'application/json', allow: 'GET, HEAD' } });
      }
      return new Response(request.method === 'HEAD' ? null : body, { headers: HEADERS });
    },
  };
}
