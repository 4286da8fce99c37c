// SPDX-License-Identifier: MIT
import { SCOPE_TOKEN, throwConfigError } from './errors.ts';
import { readHttpsUrl } from './key-set.ts';
import { checkOptionNames } from './options.ts';
import type { Challenge } from './types.ts';

/** RFC 9728 protected resource metadata: what OAuth clients (MCP) read to find where to get a token. */
export interface ProtectedResourceOptions {
  /** The resource identifier: the API's `https:` URL as clients call it, e.g. `https://agent.example.com/agent`; no query or fragment. */
  resource: string;
  /** Issuer identifiers of the authorization servers whose access tokens the API accepts (RFC 8414). */
  authorizationServers: readonly string[];
  /** Scopes clients may request, e.g. `['agent:invoke']`; `offline_access` is left out of the document (MCP 2026-07-28). */
  scopesSupported?: readonly string[];
  /** A name for people (`resource_name`). */
  resourceName?: string;
  /** How tokens may be sent (`bearer_methods_supported`); default `['header']`, the only way this API reads them. */
  bearerMethodsSupported?: readonly ('header' | 'body' | 'query')[];
  /** The DPoP proof algorithms the API accepts (`dpop_signing_alg_values_supported`, RFC 9449 §5.1). */
  dpopSigningAlgValuesSupported?: readonly string[];
  /** Whether the API takes only DPoP-bound tokens (`dpop_bound_access_tokens_required`). */
  dpopBoundAccessTokensRequired?: boolean;
}

/** The RFC 9728 document of one resource and where it is served. */
export interface ProtectedResourceMetadata {
  /** The well-known path of the document: `/.well-known/oauth-protected-resource` + the resource's path. */
  readonly path: string;
  /** The document's URL: the resource's origin + `path`. Give it to `resourceMetadata` of `jwt()`/`oidc()`. */
  readonly url: string;
  /** The document's answer to a request for `path` (`GET`/`HEAD`; other methods 405); `undefined` for any other path. */
  respond(request: Request | { readonly method: string; readonly url: string }): Response | undefined;
}

/**
 * How a document learns the DPoP algorithms of the entries that point at it (design §20): the
 * `DPoP algs` their 401 advertises. Without `dpopSigningAlgValuesSupported` the document lists
 * them; with it, a list that differs is an `AuthConfigError` naming `helper`.
 */
export const DPOP_ALGS: unique symbol = Symbol.for('agentward.dpopAlgs') as never;
type AdoptDpopAlgs = (helper: string, algs: readonly string[]) => void;

/** The `DPoP algs="…"` an auth list's challenges advertise, each once, in list order. */
export function advertisedDpopAlgs(entries: readonly { readonly challenges?: readonly Challenge[] }[]): string[] {
  const algs: string[] = [];
  for (const { challenges = [] } of entries) {
    for (const { scheme, params } of challenges) {
      if (scheme.toLowerCase() !== 'dpop' || params?.algs === undefined) continue;
      for (const alg of params.algs.split(' ')) if (alg !== '' && !algs.includes(alg)) algs.push(alg);
    }
  }
  return algs;
}

const WELL_KNOWN = '/.well-known/oauth-protected-resource';
const HEADERS = {
  'content-type': 'application/json',
  'cache-control': 'public, max-age=3600',
  'access-control-allow-origin': '*',
};
const OPTION_NAMES = [
  'resource',
  'authorizationServers',
  'scopesSupported',
  'resourceName',
  'bearerMethodsSupported',
  'dpopSigningAlgValuesSupported',
  'dpopBoundAccessTokensRequired',
];

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
    throwConfigError(
      helper,
      `${option} must be a URL string without query or fragment, written as clients compare it (e.g. "https://agent.example.com/agent")`,
    );
  }
  return value;
}

/** The list option `option` of `options`, copied, or `undefined` when absent. */
function readList(
  helper: string,
  options: ProtectedResourceOptions,
  option: 'scopesSupported' | 'bearerMethodsSupported' | 'dpopSigningAlgValuesSupported',
  valid: (item: unknown) => boolean,
  what: string,
): string[] | undefined {
  const value: unknown = options[option];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every(valid)) throwConfigError(helper, `${option} must be a list of ${what}`);
  return [...value];
}

/**
 * Serves the RFC 9728 protected resource metadata of one resource from any Web server (an MCP
 * server made with another SDK, a Hono app), without `agentHandler`. Checked now; the document
 * is public: `GET`/`HEAD` of `path` answers it, cacheable for an hour, open to any origin.
 * Give the result to `resourceMetadata` of `jwt()`/`oidc()` and to `protectedResource` of
 * `agentHandler`/`serve`, so the 401's `resource_metadata` and the document cannot disagree.
 * @example
 * const metadata = protectedResourceMetadata({ resource: 'https://mcp.example.com/mcp', authorizationServers: ['https://id.example.com'] });
 * const auth = routeAuth([oidc({ issuer: 'https://id.example.com', audience: metadata.resource, resourceMetadata: metadata })]);
 * export default { fetch: (request: Request) => metadata.respond(request) ?? serveMcp(request, auth) };
 */
export function protectedResourceMetadata(
  options: ProtectedResourceOptions,
  helper = 'protectedResourceMetadata()',
): ProtectedResourceMetadata & { readonly resource: string } {
  if (typeof options !== 'object' || options === null)
    throwConfigError(helper, 'options { resource, authorizationServers } are required');
  checkOptionNames(helper, options, OPTION_NAMES);
  const { authorizationServers, resourceName, dpopBoundAccessTokensRequired: bound } = options;
  const resource = readDocumentUrl(helper, 'resource', options.resource);
  const document: Record<string, unknown> = { resource };
  if (!Array.isArray(authorizationServers) || authorizationServers.length === 0) {
    throwConfigError(helper, 'authorizationServers must be a non-empty list of issuer URLs');
  }
  document.authorization_servers = authorizationServers.map((issuer) =>
    readDocumentUrl(helper, 'authorizationServers entry', issuer),
  );
  const scopes = readList(
    helper,
    options,
    'scopesSupported',
    (scope) => typeof scope === 'string' && SCOPE_TOKEN.test(scope),
    'RFC 6749 scope tokens (no spaces, quotes or backslashes)',
  );
  // MCP 2026-07-28: offline_access is the authorization server's to offer, never the resource's to list.
  const listed = scopes?.filter((scope) => scope !== 'offline_access');
  if (listed?.length) document.scopes_supported = listed;
  if (resourceName !== undefined) {
    if (typeof resourceName !== 'string' || resourceName === '')
      throwConfigError(helper, 'resourceName must be a non-empty string');
    document.resource_name = resourceName;
  }
  document.bearer_methods_supported = readList(
    helper,
    options,
    'bearerMethodsSupported',
    (method) => method === 'header' || method === 'body' || method === 'query',
    '"header", "body" or "query"',
  ) ?? ['header'];
  const given = readList(
    helper,
    options,
    'dpopSigningAlgValuesSupported',
    (alg) => typeof alg === 'string' && alg !== '' && alg.toLowerCase() !== 'none',
    'JWS algorithm names',
  );
  const algs = given ?? [];
  if (bound !== undefined) {
    if (typeof bound !== 'boolean') throwConfigError(helper, 'dpopBoundAccessTokensRequired must be a boolean');
    document.dpop_bound_access_tokens_required = bound;
  }
  let body: string | undefined;
  const adopt: AdoptDpopAlgs = (by, advertised) => {
    if (given === undefined) {
      for (const alg of advertised) if (!algs.includes(alg)) algs.push(alg);
      body = undefined;
    } else if (advertised.length !== given.length || advertised.some((alg) => !given.includes(alg))) {
      throwConfigError(
        by,
        `the DPoP algorithms its entries advertise (${advertised.join(', ')}) are not the protected resource document's dpopSigningAlgValuesSupported (${given.join(', ')}); give one list, or leave the document's out`,
      );
    }
  };
  const path = protectedResourcePath(resource);
  return Object.freeze({
    resource,
    path,
    url: new URL(path, resource).href,
    [DPOP_ALGS]: adopt,
    respond(request: Request | { readonly method: string; readonly url: string }): Response | undefined {
      if (pathOf(request.url) !== path) return undefined;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return new Response('{"error":"Method Not Allowed"}', {
          status: 405,
          headers: { 'content-type': 'application/json', allow: 'GET, HEAD' },
        });
      }
      body ??= JSON.stringify(algs.length === 0 ? document : { ...document, dpop_signing_alg_values_supported: algs });
      return new Response(request.method === 'HEAD' ? null : body, { headers: HEADERS });
    },
  });
}

/** The path of a request URL, without query or fragment (an absolute URL or a path). */
function pathOf(url: string): string {
  const start = url.startsWith('/') ? 0 : url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  const end = url.search(/[?#]/);
  return url.slice(start, end < 0 ? undefined : end);
}

/** Has a document of `protectedResourceMetadata()` list (or check) the DPoP algorithms its entries advertise. */
export function adoptDpopAlgs(metadata: ProtectedResourceMetadata, helper: string, algs: readonly string[]): void {
  if (algs.length > 0) (metadata as { [DPOP_ALGS]?: AdoptDpopAlgs })[DPOP_ALGS]?.(helper, algs);
}

/** Whether `value` is what `protectedResourceMetadata()` returns. */
export function isProtectedResourceMetadata(value: unknown): value is ProtectedResourceMetadata {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ProtectedResourceMetadata).respond === 'function' &&
    typeof (value as ProtectedResourceMetadata).url === 'string'
  );
}
