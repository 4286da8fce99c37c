import { credentialsStart, readsHeadersOnly } from './authorization.ts';
import { checkQuotable, DEFAULT_CHALLENGES } from './challenges.ts';
import { AuthConfigError, AuthError } from './errors.ts';
import { checkOptionNames } from './options.ts';
import { ALGORITHM_NAMES, algorithmsFor, defaultAlgorithms, jwsAlgorithm, type AlgorithmName } from './jose/algorithms.ts';
import { checkClaims, hasScopes, normalizeAudience, type ClaimsPolicy } from './jose/claims.ts';
import { mediaType, type CompactJws } from './jose/compact.ts';
import { parseJsonObject } from './jose/json.ts';
import { importHmacVerifyKey, importVerifyKey, staticKeySource, type KeySource, type VerifyKey } from './jose/key-source.ts';
import { DEFAULT_KEY_SET_ALGORITHMS, KEY_SET_ALGORITHMS, keySetCache, keySetInternals, readHttpsUrl } from './jose/key-set.ts';
import { describeKey, MIN_SECRET_BYTES, readPublicKey } from './jose/keys.ts';
import { skip, verifyCompactJws, type HeaderPolicy, type Refuse } from './jose/verify.ts';
import { completePrincipal, principalOfClaims } from './principal.ts';
import { WITH_REFUSALS, type ReportRefusal } from './refusals.ts';
import { readCacheSize, TokenCache } from './token-cache.ts';
import type { AuthFn, Challenge, Principal, PrincipalInput } from './types.ts';
import { isProtectedResourceMetadata, type ProtectedResourceMetadata } from './protected-resource.ts';

/** Maps the verified claims to a principal; `null` or `undefined` skips, `AuthError(403)` stops with 403. */
export type JwtPrincipalMapper = (
  claims: Readonly<Record<string, unknown>>,
) => PrincipalInput | null | undefined | Promise<PrincipalInput | null | undefined>;

/** Options of `jwt()`. Exactly one key source: `secret`, `publicKey` or `jwksUrl`. */
export interface JwtOptions {
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
  /** `iss` must equal one of these exactly. */
  issuer?: string | readonly string[];
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
}

/** What `createJwtEntry` needs: where the keys come from, the allowed algorithms, and the options `readEntryOptions` checked. */
export interface JwtEntryConfig extends Partial<Omit<EntryOptions, 'claims'>> {
  /** Names the helper in errors: `'jwt()'`, `'oidc()'`. */
  readonly helper: string;
  /** `authenticator` of the default principal and the mapper's default. */
  readonly authenticator: string;
  readonly source: KeySource;
  readonly algorithms: readonly AlgorithmName[];
  readonly claims: ClaimsPolicy;
  /** The clock, in seconds since the epoch. Internal: tests pin it; default `Date.now() / 1000`. */
  readonly now?: () => number;
}

const MAX_TOLERANCE_SEC = 300;

/** The options `jwt()` and `oidc()` share (all but the key source, `issuer`'s role and `discoveryUrl`). */
export const ENTRY_OPTION_NAMES = Object.freeze([
  'algorithms', 'typ', 'scopes', 'issuer', 'audience', 'allowAnyAudience', 'clockToleranceSec', 'principal', 'cache', 'resourceMetadata',
]);
const JWT_OPTION_NAMES = Object.freeze(['secret', 'publicKey', 'jwksUrl', ...ENTRY_OPTION_NAMES]);
const systemClock = (): number => Date.now() / 1000;

/**
 * Accepts `Authorization: Bearer <JWT>` signed by the configured key; every failed check skips.
 * Options are checked now: what cannot work throws `AuthConfigError` (`AGENT_AUTH_CONFIG_INVALID`).
 * @example
 * const entry = jwt({ publicKey: env.JWT_PUBLIC_KEY, issuer: 'https://id.example.com', audience: 'agent-api' });
 */
export function jwt(options: JwtOptions): AuthFn {
  return jwtWithClock(options, systemClock);
}

/** `jwt()` with an injected clock (seconds). Internal: for tests that pin time. */
export function jwtWithClock(options: JwtOptions, now: () => number): AuthFn {
  const helper = 'jwt()';
  if (typeof options !== 'object' || options === null) throw new AuthConfigError(`${helper}: options must be an object`);
  checkOptionNames(helper, options, JWT_OPTION_NAMES);
  const given = (['secret', 'publicKey', 'jwksUrl'] as const).filter((name) => options[name] !== undefined);
  if (given.length !== 1) {
    const got = given.length === 0 ? 'none' : given.join(' and ');
    throw new AuthConfigError(`${helper}: give exactly one key source: secret, publicKey or jwksUrl (got ${got})`);
  }
  const shared = readEntryOptions(helper, options);
  let algorithms: readonly AlgorithmName[];
  let source: KeySource;
  if (given[0] === 'secret') {
    const given = options.secret;
    if (typeof given !== 'string' && !(given instanceof Uint8Array)) throw new AuthConfigError(`${helper}: secret must be a string or a Uint8Array`);
    // A copy: a later change to the caller's bytes does not change the key.
    const secret = typeof given === 'string' ? new TextEncoder().encode(given) : new Uint8Array(given);
    if (secret.length < MIN_SECRET_BYTES) throw new AuthConfigError(`${helper}: secret must be at least ${MIN_SECRET_BYTES} bytes (got ${secret.length})`);
    algorithms = readAlgorithms(helper, options.algorithms, algorithmsFor('oct'), 'the secret');
    source = staticKeySource(algorithms, (algorithm) => importHmacVerifyKey(secret, algorithm));
  } else if (given[0] === 'publicKey') {
    const spec = readPublicKey(options.publicKey);
    if (typeof spec === 'string') throw new AuthConfigError(`${helper}: publicKey ${spec}`);
    algorithms = readAlgorithms(helper, options.algorithms, spec.algorithms, `the publicKey (${describeKey(spec)})`);
    source = staticKeySource(algorithms, (algorithm) => importVerifyKey(spec, algorithm));
  } else {
    algorithms = readKeySetAlgorithms(helper, options.algorithms);
    source = keySetCache(readHttpsUrl(helper, 'jwksUrl', options.jwksUrl), algorithms, keySetInternals(options));
  }
  return createJwtEntry({ helper, authenticator: 'jwt', source, algorithms, ...shared, now });
}

/**
 * The entry of `jwt()` and `oidc()`: bearer token, parse, pick key, verify signature, claims and scopes, principal.
 * Skips return `null`, no `Error`; the reporting form (`WITH_REFUSALS`, only with `onRefused`) also says why.
 */
export function createJwtEntry(config: JwtEntryConfig): AuthFn {
  const { helper, authenticator, source, claims: policy, principal: mapper, typ, scopes, resourceMetadata, now = systemClock } = config;
  const header: HeaderPolicy = { algorithms: new Set(config.algorithms), typ };
  const cache = config.cacheSize ? new TokenCache(config.cacheSize) : undefined;

  const toPrincipal = (jws: CompactJws, refuse: Refuse | undefined, key: VerifyKey): PrincipalInput | null | Promise<PrincipalInput | null> => {
    const claims = parseJsonObject(jws.payload);
    if (claims === null) return skip(refuse, 'malformed', jws);
    const failed = checkClaims(claims, policy, now());
    if (failed !== null) return skip(refuse, failed, jws, claims);
    if (scopes !== undefined && !hasScopes(claims, scopes)) {
      skip(refuse, 'scope', jws, claims);
      // RFC 6750 §3.1 insufficient_scope: the token is valid, the call is not allowed; the 403 names the scopes to obtain.
      throw new AuthError(403, { scope: scopes });
    }
    if (mapper === undefined) {
      const { sub, iss } = claims;
      if (typeof sub !== 'string' || sub.length === 0) return skip(refuse, 'no-subject', jws, claims);
      // The client's own token (client credentials, RFC 9068 §2.2): its subject is the client.
      const type = claims.client_id === sub || claims.azp === sub ? 'service' : 'user';
      const principal = principalOfClaims(sub, type, authenticator, iss as string | undefined, claims);
      cache?.put(jws.token, { claims, key, principal });
      return principal;
    }
    const mapped = mapper(claims);
    const complete = (value: PrincipalInput | null | undefined) => {
      const principal = completeMapped(value);
      if (principal !== null) cache?.put(jws.token, { claims, key, principal: undefined });
      return principal ?? skip(refuse, 'no-subject', jws, claims);
    };
    return isThenable(mapped) ? Promise.resolve(mapped).then(complete) : complete(mapped);
  };

  /** The principal of a cached token still valid (`undefined`: not cached, or dropped, and the full path decides). */
  const fromCache = (token: string): Principal | null | Promise<Principal | null> | undefined => {
    const hit = (cache as TokenCache).take(token, now(), policy.clockToleranceSec, source);
    if (hit === undefined || hit.principal !== undefined) return hit?.principal;
    const mapped = (mapper as JwtPrincipalMapper)(hit.claims);
    return isThenable(mapped) ? Promise.resolve(mapped).then(completeMapped) : completeMapped(mapped);
  };

  const completeMapped = (mapped: PrincipalInput | null | undefined): Principal | null => {
    if (mapped === null || mapped === undefined) return null;
    const withDefault = typeof mapped === 'object' && mapped.authenticator === undefined ? { ...mapped, authenticator } : mapped;
    const principal = completePrincipal(withDefault);
    if (principal === null) throw new TypeError(`${helper}: the principal mapper returned an invalid principal (needs id, and type "user" or "service")`);
    return principal;
  };

  // One path for both forms; `refuse` is `undefined` without a listener, so a skip allocates nothing for it.
  const verifyRequest = (request: Request, refuse: Refuse | undefined) => {
    // The token is read in place, unsliced, and without the b64token pattern: the compact parser
    // accepts only base64url segments and dots, a strict subset of it.
    const value = request.headers.get('authorization');
    const start = value === null ? -1 : credentialsStart(value, 'bearer');
    if (start < 0) return null;
    const hit = cache === undefined ? undefined : fromCache((value as string).slice(start));
    return hit !== undefined ? hit : verifyCompactJws(value as string, start, header, source, toPrincipal, refuse);
  };
  const entry: AuthFn = (request) => verifyRequest(request, undefined);
  const reporting = (request: Request, report: ReportRefusal) => verifyRequest(request, (reason, jws, claims) => {
    // The unverified payload's `iss` too: it tells the operator whose token it was.
    const iss = (claims ?? (jws === null ? null : parseJsonObject(jws.payload)))?.iss;
    report(authenticator, reason, jws?.header.kid, typeof iss === 'string' ? iss : undefined);
    return null;
  });
  Object.defineProperty(entry, WITH_REFUSALS, { value: reporting });
  entry.challenges = bearerChallenges(resourceMetadata, scopes);
  return readsHeadersOnly(entry);
}

/** The Bearer challenge of an entry: `resource_metadata` (RFC 9728) and the `scope` it requires (MCP asks for exactly these). */
export function bearerChallenges(resourceMetadata: string | undefined, scopes: readonly string[] | undefined): readonly Challenge[] {
  if (resourceMetadata === undefined && scopes === undefined) return DEFAULT_CHALLENGES;
  const params: Record<string, string> = {};
  if (resourceMetadata !== undefined) params.resource_metadata = resourceMetadata;
  if (scopes !== undefined) params.scope = scopes.join(' ');
  return Object.freeze([Object.freeze({ scheme: 'Bearer', params: Object.freeze(params) })]);
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === 'function';
}

/** Checks `algorithms` against the key: each a supported `alg` of the key's family; default the whole family. */
export function readAlgorithms(helper: string, value: unknown, fits: readonly AlgorithmName[], key: string): readonly AlgorithmName[] {
  if (value === undefined) return defaultAlgorithms(fits);
  if (!Array.isArray(value) || value.length === 0) throw new AuthConfigError(`${helper}: algorithms must be a non-empty list of strings`);
  const algorithms = new Set<AlgorithmName>();
  for (const name of value as unknown[]) {
    if (typeof name !== 'string') throw new AuthConfigError(`${helper}: algorithms must be a non-empty list of strings`);
    if (name.toLowerCase() === 'none') throw new AuthConfigError(`${helper}: algorithms must not contain "none"`);
    const shown = JSON.stringify(name.slice(0, 16));
    if (jwsAlgorithm(name) === undefined) {
      throw new AuthConfigError(`${helper}: algorithms entry ${shown} is not supported (supported: ${ALGORITHM_NAMES.join(', ')})`);
    }
    if (!fits.includes(name as AlgorithmName)) {
      throw new AuthConfigError(`${helper}: algorithms entry ${shown} does not fit ${key}, which allows ${fits.join(', ')}`);
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
  value === undefined ? DEFAULT_KEY_SET_ALGORITHMS : readAlgorithms(helper, value, KEY_SET_ALGORITHMS, 'a key set (RSA, EC and Ed25519 keys, never HMAC)');

function readNames(helper: string, option: string, value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined;
  const names = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(names) || names.length === 0 || !names.every((name) => typeof name === 'string' && name.length > 0)) {
    throw new AuthConfigError(`${helper}: ${option} must be a non-empty string or a non-empty list of non-empty strings`);
  }
  return Object.freeze([...(names as string[])]);
}

export function readClaimsPolicy(
  helper: string,
  options: Pick<JwtOptions, 'issuer' | 'audience' | 'allowAnyAudience' | 'clockToleranceSec'>,
): ClaimsPolicy {
  const { allowAnyAudience, clockToleranceSec = 60 } = options;
  const issuers = readNames(helper, 'issuer', options.issuer);
  const names = readNames(helper, 'audience', options.audience);
  // URL audiences compared normalized (design §15): configured ones normalized once, here.
  const audiences = names === undefined ? undefined : Object.freeze(names.map(normalizeAudience));
  if (allowAnyAudience !== undefined && typeof allowAnyAudience !== 'boolean') throw new AuthConfigError(`${helper}: allowAnyAudience must be a boolean`);
  if (audiences === undefined && allowAnyAudience !== true) {
    throw new AuthConfigError(`${helper}: audience is required; set allowAnyAudience: true to skip the audience check on purpose`);
  }
  if (audiences !== undefined && allowAnyAudience === true) throw new AuthConfigError(`${helper}: give audience or allowAnyAudience: true, not both`);
  if (typeof clockToleranceSec !== 'number' || !Number.isFinite(clockToleranceSec) || clockToleranceSec < 0 || clockToleranceSec > MAX_TOLERANCE_SEC) {
    throw new AuthConfigError(`${helper}: clockToleranceSec must be a number from 0 to ${MAX_TOLERANCE_SEC} (got ${String(clockToleranceSec)})`);
  }
  return Object.freeze({ issuers, audiences, clockToleranceSec });
}

type EntryOptions = ReturnType<typeof readEntryOptions>;

/** Checks the options `jwt()` and `oidc()` share: all but the key source and `algorithms`. `typ` is normalized as the header's. */
export function readEntryOptions(helper: string, options: Omit<JwtOptions, 'secret' | 'publicKey' | 'jwksUrl' | 'algorithms'>) {
  const { typ, scopes, principal } = options;
  const claims = readClaimsPolicy(helper, options);
  if (typ !== undefined && (typeof typ !== 'string' || mediaType(typ).length === 0)) throw new AuthConfigError(`${helper}: typ must be a non-empty string, e.g. "at+jwt"`);
  if (scopes !== undefined && (!Array.isArray(scopes) || scopes.length === 0 || !scopes.every((scope) => typeof scope === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope)))) {
    throw new AuthConfigError(`${helper}: scopes must be a non-empty list of RFC 6749 scope tokens (no spaces, quotes or backslashes)`);
  }
  if (principal !== undefined && typeof principal !== 'function') throw new AuthConfigError(`${helper}: principal must be a function of the verified claims`);
  return {
    claims,
    typ: typ === undefined ? undefined : mediaType(typ),
    scopes: scopes === undefined ? undefined : Object.freeze([...scopes]),
    principal,
    cacheSize: readCacheSize(helper, options.cache),
    resourceMetadata: readResourceMetadata(helper, options.resourceMetadata),
  };
}
