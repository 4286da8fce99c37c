import { AuthConfigError } from './errors.ts';
import type { AlgorithmName } from './jose/algorithms.ts';
import { NO_KEYS, type KeySource } from './jose/key-source.ts';
import {
  DEFAULT_KEY_SET_ALGORITHMS, KEY_SET_ALGORITHMS, KEY_SET_TIMEOUT_MS,
  attemptGate, fetchJsonObject, isWorkersRuntime, keySetCache, keySetInternals, readKeySetUrl, type KeySetInternals,
} from './jose/key-set.ts';
import { createJwtEntry, readAlgorithms, readClaimsPolicy, readPrincipalMapper, type JwtPrincipalMapper } from './jwt.ts';
import type { AuthFn } from './types.ts';

/** Options of `oidc()`. */
export interface OidcOptions {
  /** The provider's issuer; must equal the discovery document's `issuer` and every token's `iss` exactly. */
  issuer: string;
  /** `aud` must contain one of these. Required unless `allowAnyAudience` is `true`. */
  audience?: string | readonly string[];
  /** Skips the audience check on purpose. */
  allowAnyAudience?: boolean;
  /** Replaces `<issuer>/.well-known/openid-configuration`. */
  discoveryUrl?: string | URL;
  /** Allowed `alg` values among `RS256`, `RS384`, `RS512`, `ES256`, `ES384`; default `RS256`, `ES256`. */
  algorithms?: readonly string[];
  /** Skew allowed for `exp`, `nbf`, `iat`; default 60, at most 300. */
  clockToleranceSec?: number;
  /** Replaces the default principal. */
  principal?: JwtPrincipalMapper;
}

/**
 * A `jwt()` whose keys come from an OpenID Connect provider: the discovery document is fetched
 * once, on first use; its `issuer` must equal `issuer` exactly and its `jwks_uri` must be
 * `https:`. Principal: `authenticator: 'oidc'`, `issuer` = the token's `iss`.
 * @example
 * const entry = oidc({ issuer: 'https://accounts.example.com', audience: 'agent-api' });
 */
export function oidc(options: OidcOptions): AuthFn {
  const helper = 'oidc()';
  if (typeof options !== 'object' || options === null) throw new AuthConfigError(`${helper}: options { issuer, audience } are required`);
  const { issuer } = options;
  if (typeof issuer !== 'string' || issuer.length === 0) throw new AuthConfigError(`${helper}: issuer is required (a non-empty string)`);
  const discoveryUrl = options.discoveryUrl === undefined
    ? readKeySetUrl(helper, 'issuer', `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`)
    : readKeySetUrl(helper, 'discoveryUrl', options.discoveryUrl);
  const algorithms = options.algorithms === undefined
    ? DEFAULT_KEY_SET_ALGORITHMS
    : readAlgorithms(helper, options.algorithms, KEY_SET_ALGORITHMS, 'a key set (RSA and EC keys only, never HMAC)');
  return createJwtEntry({
    helper,
    authenticator: 'oidc',
    source: discoveredKeySet(discoveryUrl, issuer, algorithms, keySetInternals(options)),
    algorithms,
    claims: readClaimsPolicy(helper, { ...options, issuer }),
    principal: readPrincipalMapper(helper, options.principal),
  });
}

/**
 * The key set named by the discovery document, discovered on first use (never at creation:
 * Workers forbid I/O at start-up) and then kept. Concurrent requests share one discovery
 * (on Workers each makes its own); a failed one is retried at most once per 30 s and the
 * requests in between skip.
 */
function discoveredKeySet(url: string, issuer: string, algorithms: readonly AlgorithmName[], internals: KeySetInternals): KeySource {
  const fetchImpl = internals.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  const now = internals.now ?? (() => Date.now()); // looked up per call: a test may fake the global clock
  let keys: KeySource | undefined;

  const discover = async (): Promise<void> => {
    try {
      const document = await fetchJsonObject(url, fetchImpl, internals.timeoutMs ?? KEY_SET_TIMEOUT_MS);
      if (document.issuer !== issuer) {
        throw new Error(`its issuer ${JSON.stringify(String(document.issuer).slice(0, 200))} is not the configured issuer`);
      }
      const jwksUri = typeof document.jwks_uri === 'string' && URL.canParse(document.jwks_uri) ? new URL(document.jwks_uri) : undefined;
      if (jwksUri?.protocol !== 'https:') throw new Error('its jwks_uri is not an https: URL');
      keys ??= keySetCache(jwksUri.href, algorithms, internals);
    } catch (error) {
      console.warn(`agentgate: OIDC discovery at ${url} failed (${(error as Error).message}); tokens skip, next attempt in 30 s`);
    }
  };
  const discoveries = attemptGate(internals.perRequestFetch ?? isWorkersRuntime(), discover);

  return {
    keysFor(header) {
      if (keys !== undefined) return keys.keysFor(header);
      const discovered = discoveries.next(now());
      return discovered === undefined ? NO_KEYS : discovered.then(() => (keys === undefined ? NO_KEYS : keys.keysFor(header)));
    },
  };
}
