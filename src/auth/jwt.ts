// SPDX-License-Identifier: MIT
import { credentialsStart, readsHeadersOnly } from './authorization.ts';
import {
  accessTokenHash,
  boundThumbprint,
  checkProof,
  DPOP_OPTION_NAMES,
  entryChallenges,
  INVALID_DPOP_PROOF,
  type DpopOptions,
  type DpopPolicy,
} from './dpop.ts';
import { AuthError, kindOf, throwConfigError } from './errors.ts';
import {
  ENTRY_OPTION_NAMES,
  readAlgorithms,
  readEntryOptions,
  readKeySetAlgorithms,
  type EntryOptions,
} from './jwt-options.ts';
import { checkOptionNames } from './options.ts';
import { algorithmsFor, type AlgorithmName } from './jws/algorithms.ts';
import { checkClaims, hasScopes, type ClaimsPolicy } from './jws/claims.ts';
import type { CompactJws } from './jws/compact.ts';
import { parseJsonObject } from './jws/json.ts';
import {
  importHmacVerifyKey,
  importVerifyKey,
  staticKeySource,
  type KeySource,
  type VerifyKey,
} from './jws/key-source.ts';
import { keySetCache, keySetInternals, readHttpsUrl } from './key-set.ts';
import { describeKey, isKeyShaped, MIN_SECRET_BYTES, readPublicKey } from './jws/keys.ts';
import type { RefusalReason } from './refusals.ts';
import { skip, verifyCompactJws, type Accept, type HeaderPolicy, type Refuse as RefuseWith } from './jws/verify.ts';
import { completePrincipal, principalOfClaims } from './principal.ts';
import type { ProtectedResourceMetadata } from './protected-resource.ts';
import { WITH_REFUSALS, type ReportRefusal } from './refusals.ts';
import { tokenCache, type TokenCache } from './token-cache.ts';
import { verifiesAccessToken } from './presented-token.ts';
import type { AuthFn, Principal, PrincipalInput } from './types.ts';

/** Hears why this entry refused a token, any of its reasons. */
type Refuse = RefuseWith<RefusalReason>;

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
  readonly dpop: DpopPolicy;
  /** The clock, in seconds since the epoch. Internal: tests pin it; default `Date.now() / 1000`. */
  readonly now?: () => number;
}

const KEY_SOURCES = ['secret', 'publicKey', 'jwksUrl'] as const;
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
  if (typeof options !== 'object' || options === null) throwConfigError(helper, 'options must be an object');
  checkOptionNames(helper, options, [...KEY_SOURCES, ...ENTRY_OPTION_NAMES, ...DPOP_OPTION_NAMES]);
  const given = KEY_SOURCES.filter((name) => options[name] !== undefined);
  if (given.length !== 1) {
    // `secret: env.JWT_SECRET` with the variable unset: say the key is there, holding undefined.
    const unset = KEY_SOURCES.filter((name) => name in options && options[name] === undefined);
    const got = given.length > 0 ? given.join(' and ') : unset.length > 0 ? `${unset.join(' and ')} undefined` : 'none';
    throwConfigError(helper, `give exactly one key source: secret, publicKey or jwksUrl (got ${got})`);
  }
  const shared = readEntryOptions(helper, options);
  let algorithms: readonly AlgorithmName[];
  let source: KeySource;
  if (given[0] === 'secret') {
    const given = options.secret;
    if (typeof given !== 'string' && !(given instanceof Uint8Array))
      throwConfigError(helper, `secret must be a string or a Uint8Array; got ${kindOf(given)}`);
    // A copy: a later change to the caller's bytes does not change the key.
    const secret = typeof given === 'string' ? new TextEncoder().encode(given) : new Uint8Array(given);
    if (secret.length < MIN_SECRET_BYTES)
      throwConfigError(helper, `secret must be at least ${MIN_SECRET_BYTES} bytes (got ${secret.length})`);
    if (isKeyShaped(secret))
      throwConfigError(
        helper,
        'secret looks like a PEM/JWK key; give the public key as publicKey (used as an HMAC secret, anyone who has it could sign tokens)',
      );
    algorithms = readAlgorithms(helper, options.algorithms, algorithmsFor('oct'), 'the secret');
    source = staticKeySource(algorithms, (algorithm) => importHmacVerifyKey(secret, algorithm));
  } else if (given[0] === 'publicKey') {
    const spec = readPublicKey(options.publicKey);
    if (typeof spec === 'string') throwConfigError(helper, `publicKey ${spec}`);
    algorithms = readAlgorithms(helper, options.algorithms, spec.algorithms, `the publicKey (${describeKey(spec)})`);
    source = staticKeySource(algorithms, (algorithm) => importVerifyKey(spec, algorithm));
  } else {
    algorithms = readKeySetAlgorithms(helper, options.algorithms);
    source = keySetCache(readHttpsUrl(helper, 'jwksUrl', options.jwksUrl), algorithms, keySetInternals(options));
  }
  return createJwtEntry({ helper, authenticator: 'jwt', source, algorithms, ...shared, now });
}

/**
 * The entry of `jwt()` and `oidc()`: bearer (or DPoP) token, parse, pick key, verify signature,
 * claims, binding and proof, scopes, principal. Skips return `null`, no `Error`; the reporting form
 * (`WITH_REFUSALS`, only with `onRefused`) also says why.
 */
export function createJwtEntry(config: JwtEntryConfig): AuthFn {
  const {
    helper,
    authenticator,
    source,
    claims: policy,
    principal: mapper,
    typ,
    scopes,
    resourceMetadata,
    dpop,
    now = systemClock,
  } = config;
  const header: HeaderPolicy = { algorithms: new Set(config.algorithms), typ };
  const cache = config.cacheSize ? tokenCache(config.cacheSize) : undefined;

  /** The claims of a JWS whose signature verified, when they pass and the token is presented as its binding asks (design §16). */
  const checkedClaims = (
    jws: CompactJws,
    refuse: Refuse | undefined,
    viaDpop: boolean,
  ): Readonly<Record<string, unknown>> | null => {
    const claims = parseJsonObject(jws.payload);
    if (claims === null) return skip(refuse, 'malformed', jws);
    const failed = checkClaims(claims, policy, now());
    if (failed !== null) return skip(refuse, failed, jws, claims);
    // A bound token never comes as Bearer (RFC 9449 §7.2: no downgrade); an unbound one never with DPoP.
    if ((boundThumbprint(claims) !== undefined) !== viaDpop) return skip(refuse, 'dpop-binding', jws, claims);
    return claims;
  };

  /** Scopes, then the principal: the last steps, once the token (and its proof) held. */
  const toPrincipal = (
    jws: CompactJws,
    refuse: Refuse | undefined,
    key: VerifyKey,
    claims: Readonly<Record<string, unknown>>,
  ): PrincipalInput | null | Promise<PrincipalInput | null> => {
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
    return whenSettled(mapper(claims), (mapped) => {
      const principal = completeMapped(mapped);
      if (principal !== null) cache?.put(jws.token, { claims, key, principal: undefined });
      return principal ?? skip(refuse, 'no-subject', jws, claims);
    });
  };

  const acceptBearer = (jws: CompactJws, refuse: Refuse | undefined, key: VerifyKey) => {
    const claims = checkedClaims(jws, refuse, false);
    return claims === null ? null : toPrincipal(jws, refuse, key, claims);
  };

  /** The proof of a DPoP request, checked on every request (never cached): then `then()`, else a skip saying invalid_dpop_proof. */
  const withProof = <T>(
    request: Request,
    jws: CompactJws | null,
    refuse: Refuse | undefined,
    ath: string,
    claims: Readonly<Record<string, unknown>>,
    then: () => T,
  ) =>
    checkProof(request, ath, boundThumbprint(claims) as string, dpop, now).then((failed) => {
      if (failed === null) return then();
      refuse?.(failed, jws, claims);
      return INVALID_DPOP_PROOF as unknown as null;
    });

  /** The principal of a cached token still valid (`undefined`: not cached, or dropped, and the full path decides). */
  const fromCache = (request: Request, token: string, viaDpop: boolean, refuse: Refuse | undefined) => {
    const hit = (cache as TokenCache).take(token, now(), policy.clockToleranceSec, source);
    if (hit === undefined) return undefined;
    if ((boundThumbprint(hit.claims) !== undefined) !== viaDpop) return skip(refuse, 'dpop-binding', null, hit.claims);
    const principal = () => hit.principal ?? whenSettled((mapper as JwtPrincipalMapper)(hit.claims), completeMapped);
    // The token's hash is kept with it: 6 µs of a 143 µs cached DPoP request (bench suite dpop, in-process, Node 22).
    return viaDpop
      ? withProof(request, null, refuse, (hit.ath ??= accessTokenHash(token)), hit.claims, principal)
      : principal();
  };

  const completeMapped = (mapped: PrincipalInput | null | undefined): Principal | null => {
    if (mapped === null || mapped === undefined) return null;
    const withDefault =
      typeof mapped === 'object' && mapped.authenticator === undefined ? { ...mapped, authenticator } : mapped;
    const principal = completePrincipal(withDefault);
    if (principal === null)
      throw new TypeError(
        `${helper}: the principal mapper returned an invalid principal (needs id, and type "user" or "service")`,
      );
    return principal;
  };

  // One path for both forms; `refuse` is `undefined` without a listener, so a skip allocates nothing for it.
  const verifyRequest = (request: Request, refuse: Refuse | undefined) => {
    // The token is read in place, unsliced, and without the b64token pattern: the compact parser
    // accepts only base64url segments and dots, a strict subset of it.
    const value = request.headers.get('authorization');
    if (value === null) return null;
    const bearer = credentialsStart(value, 'bearer');
    const viaDpop = bearer < 0;
    const start = viaDpop ? credentialsStart(value, 'dpop') : bearer;
    if (start < 0) return null;
    if (!viaDpop && dpop.required) return skip(refuse, 'dpop-required', null);
    const hit = cache === undefined ? undefined : fromCache(request, value.slice(start), viaDpop, refuse);
    if (hit !== undefined) return hit;
    const accept: Accept<unknown, RefusalReason> = viaDpop
      ? (jws, refusing, key) => {
          const claims = checkedClaims(jws, refusing, true);
          return claims === null
            ? null
            : withProof(request, jws, refusing, accessTokenHash(jws.token), claims, () =>
                toPrincipal(jws, refusing, key, claims),
              );
        }
      : acceptBearer;
    return verifyCompactJws(value, start, header, source, accept, refuse);
  };
  const entry: AuthFn = (request) => verifyRequest(request, undefined) as ReturnType<AuthFn>;
  const reporting = (request: Request, report: ReportRefusal) =>
    verifyRequest(request, (reason, jws, claims) => {
      // The unverified payload's `iss` too: it tells the operator whose token it was.
      const iss = (claims ?? (jws === null ? null : parseJsonObject(jws.payload)))?.iss;
      report(authenticator, reason, jws?.header.kid, typeof iss === 'string' ? iss : undefined);
      return null;
    });
  Object.defineProperty(entry, WITH_REFUSALS, { value: reporting });
  entry.challenges = entryChallenges(dpop, resourceMetadata, scopes);
  return verifiesAccessToken(readsHeadersOnly(entry));
}

/** `then(value)`, at once for a value, once settled for a promise (a mapper may answer either way). */
function whenSettled<T, R>(value: T | PromiseLike<T>, then: (value: T) => R): R | Promise<R> {
  return typeof (value as PromiseLike<T> | null)?.then === 'function'
    ? Promise.resolve(value).then(then)
    : then(value as T);
}
