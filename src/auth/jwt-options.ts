// SPDX-License-Identifier: MIT
// The options `jwt()` and `oidc()` share, checked at creation (design §3, §12, §13, §15, §16).
import { checkQuotable } from './challenges.ts';
import { readDpopPolicy } from './dpop-options.ts';
import { isScopeList, throwConfigError } from './errors.ts';
import { ALGORITHM_NAMES, defaultAlgorithms, jwsAlgorithm, type AlgorithmName } from './jws/algorithms.ts';
import { normalizeAudience, type ClaimsPolicy } from './jws/claims.ts';
import { mediaType } from './jws/compact.ts';
import { DEFAULT_KEY_SET_ALGORITHMS, KEY_SET_ALGORITHMS, readHttpsUrl } from './key-set.ts';
import { readInternalOptions } from './internal-options.ts';
import { adoptDpopAlgs, isProtectedResourceMetadata } from './protected-resource.ts';
import { readScopeImplies } from './scope-implies.ts';
import { readCacheSize } from './token-cache.ts';
import type { DpopOptions } from './dpop-options.ts';
import type { InternalOptions } from './internal-options.ts';
import type { ProtectedResourceMetadata } from './protected-resource.ts';
import { readTenantPolicy, isIssuerTemplate, type TenantsOption } from './tenants.ts';
import type { PrincipalInput } from './types.ts';
import { isNumberIn } from './options.ts';

/** Maps the verified claims to a principal; `null` or `undefined` skips, `AuthError(403)` stops with 403. */
export type JwtPrincipalMapper = (
  claims: Readonly<Record<string, unknown>>,
) => PrincipalInput | null | undefined | Promise<PrincipalInput | null | undefined>;

/** Options of `jwt()`. Exactly one key source: `secret`, `publicKey` or `jwksUrl`. DPoP (RFC 9449): the `dpop…` options. */
export interface JwtOptions extends DpopOptions {
  /** HMAC secret: a string (its UTF-8 bytes) or bytes, 32 or more. Allows `HS256`, `HS384`, `HS512`. */
  secret?: string | Uint8Array;
  /**
   * A PEM (`BEGIN PUBLIC KEY`, `BEGIN RSA PUBLIC KEY`, or `BEGIN CERTIFICATE`: its key is used, its
   * dates and chain are not checked) or a public JWK: RSA (2048 bits or more), EC P-256/P-384/P-521, Ed25519.
   */
  publicKey?: string | JsonWebKey;
  /** JWKS endpoint: `https:`, or `http:` on localhost. */
  jwksUrl?: string | URL;
  /**
   * Allowed `alg` values, compared exactly. Default: the key's family (RSA: `RS256/384/512`;
   * `PS*` only when named here), a key set's `RS256`, `ES256`.
   */
  algorithms?: readonly string[];
  /** Required header `typ`, e.g. `'at+jwt'` (RFC 9068 access tokens); compared case-insensitively, `application/` optional. */
  typ?: string;
  /** Scopes the token must grant, all of them, read from `scope` or `scp`; a valid token without them stops the list with 403. */
  scopes?: readonly string[];
  /**
   * Scope hierarchies for `scopes`: `{ 'agent:admin': ['agent:chat'] }` lets a token holding
   * `agent:admin` pass as holding `agent:chat` too (transitively; a cycle is an error). Challenges
   * still name `scopes` as given.
   */
  scopeImplies?: Readonly<Record<string, readonly string[]>>;
  /**
   * `iss` must equal one of these exactly; or one issuer template with a `{tenantid}` path segment
   * (`https://login.microsoftonline.com/{tenantid}/v2.0`): `iss` must equal it with the token's
   * `tid` put in, which is the tenant. A template needs `tenants`.
   */
  issuer?: string | readonly string[];
  /**
   * The tenants accepted (design §12): a list of tenant ids, a function of the id (sync or async;
   * only `true` accepts), or `'any'`. Required with an issuer template or `tenantClaim`.
   */
  tenants?: TenantsOption;
  /**
   * The claim naming the tenant, e.g. `'org_id'` (Auth0 organizations). With an issuer template
   * it must equal `tid`. The accepted tenant is `principal.tenant`.
   */
  tenantClaim?: string;
  /** `aud` must contain one of these. Required unless `allowAnyAudience` is `true`. */
  audience?: string | readonly string[];
  /** Skips the audience check on purpose. */
  allowAnyAudience?: boolean;
  /** Skew allowed for `exp`, `nbf`, `iat`; default 60, at most 300. */
  clockToleranceSec?: number;
  /** Replaces the default principal. */
  principal?: JwtPrincipalMapper;
  /**
   * Keeps verified tokens for their next use (design §13): `true` is 1,000, LRU. A hit re-checks
   * `exp`/`nbf` and that its key is still in the key set; a mapper still runs on every hit.
   */
  cache?: boolean | { maxEntries: number };
  /**
   * RFC 9728: this API's metadata document, sent in the 401 as `Bearer resource_metadata="<URL>"` so
   * OAuth clients (MCP) find the authorization server: `protectedResourceMetadata()`'s result (the
   * same one `agentHandler`/`serve` serve as `protectedResource`), or its URL.
   */
  resourceMetadata?: string | URL | ProtectedResourceMetadata;
  /** @internal The test hook (a clock, a fetch, a timeout): not part of the public API. See CONTRIBUTING.md. */
  _internal?: InternalOptions;
}

const MAX_TOLERANCE_SEC = 300;

/** The options `jwt()` and `oidc()` share (all but the key source, `issuer`'s role and `discoveryUrl`); then `DPOP_OPTION_NAMES`. */
export const ENTRY_OPTION_NAMES = [
  'algorithms',
  'typ',
  'scopes',
  'scopeImplies',
  'issuer',
  'tenants',
  'tenantClaim',
  'audience',
  'allowAnyAudience',
  'clockToleranceSec',
  'principal',
  'cache',
  'resourceMetadata',
  '_internal',
] as const;

/** Checks `algorithms` against the key: each a supported `alg` of the key's family; default the whole family. */
export function readAlgorithms(
  helper: string,
  value: unknown,
  fits: readonly AlgorithmName[],
  key: string,
): readonly AlgorithmName[] {
  if (value === undefined) return defaultAlgorithms(fits);
  const notList = 'algorithms must be a non-empty list of strings';
  if (!Array.isArray(value) || value.length === 0) throwConfigError(helper, notList);
  const algorithms = new Set<AlgorithmName>();
  for (const name of value as unknown[]) {
    if (typeof name !== 'string') throwConfigError(helper, notList);
    if (name.toLowerCase() === 'none') throwConfigError(helper, 'algorithms must not contain "none"');
    const shown = JSON.stringify(name.slice(0, 16));
    if (jwsAlgorithm(name) === undefined) {
      throwConfigError(helper, `algorithms entry ${shown} is not supported (supported: ${ALGORITHM_NAMES.join(', ')})`);
    }
    if (!fits.includes(name as AlgorithmName)) {
      throwConfigError(helper, `algorithms entry ${shown} does not fit ${key}, which allows ${fits.join(', ')}`);
    }
    algorithms.add(name as AlgorithmName);
  }
  return Object.freeze([...algorithms]);
}

/** Checks `resourceMetadata`: no control characters (it is quoted into a header), then as a key-set URL. */
export function readResourceMetadata(helper: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (isProtectedResourceMetadata(value)) return value.url;
  if (typeof value === 'string') checkQuotable(helper, 'resourceMetadata', value);
  return readHttpsUrl(helper, 'resourceMetadata', value);
}

/** `algorithms` of a key set (`jwksUrl`, `oidc()`): default `RS256`, `ES256`. */
export const readKeySetAlgorithms = (helper: string, value: unknown): readonly AlgorithmName[] =>
  value === undefined
    ? DEFAULT_KEY_SET_ALGORITHMS
    : readAlgorithms(helper, value, KEY_SET_ALGORITHMS, 'a key set (RSA, EC and Ed25519 keys, never HMAC)');

function readNames(helper: string, option: string, value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined;
  const names = typeof value === 'string' ? [value] : value;
  if (
    !Array.isArray(names) ||
    names.length === 0 ||
    !names.every((name) => typeof name === 'string' && name.length > 0)
  ) {
    throwConfigError(helper, `${option} must be a non-empty string or a non-empty list of non-empty strings`);
  }
  return Object.freeze([...(names as string[])]);
}

export function readClaimsPolicy(
  helper: string,
  options: Pick<JwtOptions, 'issuer' | 'audience' | 'allowAnyAudience' | 'clockToleranceSec'>,
): ClaimsPolicy {
  const { allowAnyAudience, clockToleranceSec = 60 } = options;
  // A template is checked by the tenant policy: iss is compared with the token's tid put in.
  const issuers = isIssuerTemplate(options.issuer) ? undefined : readNames(helper, 'issuer', options.issuer);
  const names = readNames(helper, 'audience', options.audience);
  // URL audiences compared normalized (design §15): configured ones normalized once, here.
  const audiences = names === undefined ? undefined : Object.freeze(names.map(normalizeAudience));
  if (allowAnyAudience !== undefined && typeof allowAnyAudience !== 'boolean')
    throwConfigError(helper, 'allowAnyAudience must be a boolean');
  if (audiences === undefined && allowAnyAudience !== true) {
    throwConfigError(helper, 'audience is required; set allowAnyAudience: true to skip the audience check on purpose');
  }
  if (audiences !== undefined && allowAnyAudience === true)
    throwConfigError(helper, 'give audience or allowAnyAudience: true, not both');
  if (!isNumberIn(clockToleranceSec, 0, MAX_TOLERANCE_SEC)) {
    throwConfigError(
      helper,
      `clockToleranceSec must be a number from 0 to ${MAX_TOLERANCE_SEC} (got ${String(clockToleranceSec)})`,
    );
  }
  return Object.freeze({ issuers, audiences, clockToleranceSec });
}

export type EntryOptions = ReturnType<typeof readEntryOptions>;

/** Checks the options `jwt()` and `oidc()` share: all but the key source and `algorithms`. `typ` is normalized as the header's. */
export function readEntryOptions(
  helper: string,
  options: Omit<JwtOptions, 'secret' | 'publicKey' | 'jwksUrl' | 'algorithms'>,
) {
  const { typ, scopes, principal, scopeImplies } = options;
  const claims = readClaimsPolicy(helper, options);
  if (typ !== undefined && (typeof typ !== 'string' || mediaType(typ).length === 0))
    throwConfigError(helper, 'typ must be a non-empty string, e.g. "at+jwt"');
  if (scopes !== undefined && !isScopeList(scopes)) {
    throwConfigError(
      helper,
      `scopes must be a non-empty list of RFC 6749 scope tokens (no spaces, quotes or backslashes)`,
    );
  }
  // No challenge names it (design §29) and no access token carries it: a requirement nothing could meet.
  if (scopes?.includes('offline_access'))
    throwConfigError(
      helper,
      'scopes must not include offline_access: it asks for a refresh token, no access token carries it, so no token could satisfy it',
    );
  if (scopeImplies !== undefined && scopes === undefined)
    throwConfigError(helper, 'scopeImplies needs scopes: it says which scopes grant them');
  if (principal !== undefined && typeof principal !== 'function')
    throwConfigError(helper, 'principal must be a function of the verified claims');
  const dpop = readDpopPolicy(helper, options, claims.clockToleranceSec);
  // The document this entry's 401 points at lists the algorithms its DPoP challenge advertises (design §20).
  if (dpop.advertised && isProtectedResourceMetadata(options.resourceMetadata))
    adoptDpopAlgs(options.resourceMetadata, helper, [...dpop.algorithms]);
  return {
    claims,
    typ: typ === undefined ? undefined : mediaType(typ),
    scopes: scopes === undefined ? undefined : Object.freeze([...scopes]),
    implies: readScopeImplies(helper, scopeImplies),
    principal,
    cacheSize: readCacheSize(helper, options.cache),
    resourceMetadata: readResourceMetadata(helper, options.resourceMetadata),
    dpop,
    tenants: readTenantPolicy(helper, options),
    internal: readInternalOptions(helper, options._internal),
  };
}
