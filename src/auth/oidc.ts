// SPDX-License-Identifier: MIT
import { AuthUpstreamError, kindOf, throwConfigError } from './errors.ts';
import type { AlgorithmName } from './jws/algorithms.ts';
import { KEY_SET_UNAVAILABLE, type KeySource } from './jws/key-source.ts';
import { fetchJsonObject, keySetCache, readHttpsUrl, withoutQuery } from './key-set.ts';
import { attemptGate } from './attempt-gate.ts';
import { clockOf, type InternalOptions } from './internal-options.ts';
import { createJwtEntry, type JwtOptions } from './jwt.ts';
import { DPOP_OPTION_NAMES } from './dpop-options.ts';
import { ENTRY_OPTION_NAMES, readEntryOptions, readKeySetAlgorithms } from './jwt-options.ts';
import { checkOptionNames } from './options.ts';
import { fitsTemplate } from './tenants.ts';
import type { AuthFn } from './types.ts';

/** Options of `oidc()`: those of `jwt()` but the key source and `issuer`, which is required. */
export interface OidcOptions
  extends Pick<
    JwtOptions,
    | 'allowAnyAudience'
    | 'typ'
    | 'scopes'
    | 'scopeImplies'
    | 'clockToleranceSec'
    | 'principal'
    | 'cache'
    | 'resourceMetadata'
    | 'dpop'
    | 'dpopAlgorithms'
    | 'dpopMaxAgeSec'
    | 'dpopOrigin'
    | 'dpopReplay'
    | 'tenants'
    | 'tenantClaim'
    | '_internal'
  > {
  /**
   * The provider's issuer; must equal the discovery document's `issuer` and every token's `iss`
   * exactly. Or a template with one `{tenantid}` path segment (Entra:
   * `https://login.microsoftonline.com/{tenantid}/v2.0`): a token's `iss` must equal it with its
   * `tid` put in; it needs `tenants` and `discovery`.
   */
  issuer: string;
  /**
   * `aud` must contain one of these: the API's resource identifier (the access token's audience),
   * never the client id, which is the `aud` of the provider's ID tokens: those must not open an API.
   * Required unless `allowAnyAudience` is `true`.
   */
  audience?: string | readonly string[];
  /** Replaces `<issuer>/.well-known/openid-configuration`. */
  discoveryUrl?: string | URL;
  /**
   * The discovery document of an issuer template: its `common` or `organizations` form (Entra:
   * `https://login.microsoftonline.com/organizations/v2.0/.well-known/openid-configuration`),
   * whose `issuer` is the template itself or the template with one tenant put in. The same option as
   * `discoveryUrl`, by the name the tenant setup uses; give one of them.
   */
  discovery?: string | URL;
  /** Allowed `alg` values among `RS*`, `PS*`, `ES256`, `ES384`, `ES512`, `EdDSA`; default `RS256`, `ES256`. */
  algorithms?: readonly string[];
}

/**
 * A `jwt()` whose keys come from an OpenID Connect provider: the discovery document is fetched
 * once, on first use; its `issuer` must equal `issuer` exactly and its `jwks_uri` must be
 * `https:` (an `http:` issuer is allowed only on localhost, 127.0.0.1 or [::1], and then an
 * `http:` `jwks_uri` on the same host name). Principal: `authenticator: 'oidc'`, `issuer` = the
 * token's `iss`. Access tokens: set `audience` to the API's resource identifier, and `typ:
 * 'at+jwt'` where the provider issues RFC 9068 tokens; never the client id (ID tokens carry it).
 * @example
 * const entry = oidc({ issuer: 'https://accounts.example.com', audience: 'https://agent.example.com/api', typ: 'at+jwt' });
 */
export function oidc(options: OidcOptions): AuthFn {
  const helper = 'oidc()';
  if (typeof options !== 'object' || options === null)
    throwConfigError(helper, 'options { issuer, audience } are required');
  checkOptionNames(helper, options, [...ENTRY_OPTION_NAMES, ...DPOP_OPTION_NAMES, 'discoveryUrl', 'discovery']);
  const { issuer } = options;
  if (typeof issuer !== 'string' || issuer.length === 0)
    throwConfigError(helper, `issuer is required (a non-empty string); got ${kindOf(issuer)}`);
  // An http: issuer is refused now, whatever discoveryUrl says, not by a 401 to every token later.
  const issuerUrl = new URL(readHttpsUrl(helper, 'issuer', issuer));
  if (options.discovery !== undefined && options.discoveryUrl !== undefined)
    throwConfigError(helper, 'give discovery or discoveryUrl, not both: they name the same document');
  const given = options.discovery ?? options.discoveryUrl;
  const named = options.discovery === undefined ? 'discoveryUrl' : 'discovery';
  const shared = readEntryOptions(helper, options);
  const template = shared.tenants?.template;
  if (template !== undefined && given === undefined)
    throwConfigError(
      helper,
      "an issuer template needs discovery: the provider's common or organizations document URL, e.g. https://login.microsoftonline.com/organizations/v2.0/.well-known/openid-configuration",
    );
  const discoveryUrl =
    given === undefined
      ? readHttpsUrl(helper, 'issuer', `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`)
      : readHttpsUrl(helper, named, given);
  const algorithms = readKeySetAlgorithms(helper, options.algorithms);
  // The document's issuer: the configured one exactly, or for a template the template with a tenant (or itself) put in.
  const issues = (named: unknown) => (template === undefined ? named === issuer : fitsTemplate(template, named));
  return createJwtEntry({
    helper,
    authenticator: 'oidc',
    source: discoveredKeySet(discoveryUrl, issuerUrl, issues, algorithms, shared.internal),
    algorithms,
    ...shared,
  });
}

/**
 * The key set named by the discovery document, discovered on first use (never at creation:
 * Workers forbid I/O at start-up) and then kept. Concurrent requests share one discovery
 * (on Workers each makes its own); a failed one is retried at most once per 30 s and the
 * requests in between skip.
 */
function discoveredKeySet(
  url: string,
  issuerUrl: URL,
  issues: (issuer: unknown) => boolean,
  algorithms: readonly AlgorithmName[],
  internals: InternalOptions,
): KeySource {
  const now = clockOf(internals);
  let keys: KeySource | undefined;

  const discover = async (): Promise<boolean> => {
    try {
      const document = await fetchJsonObject(url, internals);
      if (!issues(document.issuer)) {
        throw new AuthUpstreamError(
          'AGENT_AUTH_UPSTREAM_INVALID',
          `its issuer ${JSON.stringify(String(document.issuer).slice(0, 200))} is not the configured issuer`,
        );
      }
      const jwksUri =
        typeof document.jwks_uri === 'string' && URL.canParse(document.jwks_uri)
          ? new URL(document.jwks_uri)
          : undefined;
      const local =
        issuerUrl.protocol === 'http:' && jwksUri?.protocol === 'http:' && jwksUri.hostname === issuerUrl.hostname;
      if (jwksUri?.protocol !== 'https:' && !local)
        throw new AuthUpstreamError(
          'AGENT_AUTH_UPSTREAM_INVALID',
          'its jwks_uri is not an https: URL (http: only on the host of a local http: issuer)',
        );
      keys ??= keySetCache((jwksUri as URL).href, algorithms, internals);
      return true;
    } catch (error) {
      console.warn(
        `agentward: OIDC discovery at ${withoutQuery(url)} failed (${(error as Error).message}); tokens skip, next attempt in 30 s`,
      );
      return false;
    }
  };
  const discoveries = attemptGate(internals, discover);

  return {
    keysFor(header) {
      if (keys !== undefined) return keys.keysFor(header);
      const discovered = discoveries.next(now());
      return discovered === undefined
        ? KEY_SET_UNAVAILABLE
        : discovered.then(() => (keys === undefined ? KEY_SET_UNAVAILABLE : keys.keysFor(header)));
    },
    holds: (key) => keys?.holds?.(key) === true,
  };
}
