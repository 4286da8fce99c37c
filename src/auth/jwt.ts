// SPDX-License-Identifier: MIT
import { credentialsStart } from './authorization.ts';
import { builtInEntry, type EntryContext } from './built-in.ts';
import type { ChallengeErrorSkip } from './challenges.ts';
import { accessTokenHash, boundThumbprint, checkProof, proofSkip } from './dpop.ts';
import { DPOP_OPTION_NAMES, entryChallenges, type DpopPolicy } from './dpop-options.ts';
import { AuthConfigError, AuthError, kindOf, throwConfigError } from './errors.ts';
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
import { keySetCache, readHttpsUrl } from './key-set.ts';
import { clockOf } from './internal-options.ts';
import { describeKey, isKeyShaped, MIN_SECRET_BYTES, readPublicKey } from './jws/keys.ts';
import { readCompactJws, skip, verifiedKey, type HeaderPolicy, type Refuse as RefuseWith } from './jws/verify.ts';
import { completePrincipal, principalOfClaims } from './principal.ts';
import type { RefusalReason, ReportRefusal } from './refusals.ts';
import { tokenCache, type CachedToken } from './token-cache.ts';
import { verifiesAccessToken } from './presented-token.ts';
import { isRsaModulusText } from './weak-secrets.ts';
import { acceptedTenant } from './tenants.ts';
import type { AuthFn, Principal, RequestView as View } from './types.ts';
import type { JwtOptions, JwtPrincipalMapper } from './jwt-options.ts';

export type { JwtOptions, JwtPrincipalMapper } from './jwt-options.ts';

/** Hears why this entry refused a token, any of its reasons. */
type Refuse = RefuseWith<RefusalReason>;
type Claims = Readonly<Record<string, unknown>>;
/** What the entry answers: a principal, a skip, or the skip that asks for `invalid_dpop_proof` or `use_dpop_nonce`. */
type Answer = Principal | null | ChallengeErrorSkip;

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
}

const KEY_SOURCES = ['secret', 'publicKey', 'jwksUrl'] as const;

/**
 * Accepts `Authorization: Bearer <JWT>` signed by the configured key; every failed check skips.
 * Options are checked now: what cannot work throws `AuthConfigError` (`AGENT_AUTH_CONFIG_INVALID`).
 * @example
 * const entry = jwt({ publicKey: env.JWT_PUBLIC_KEY, issuer: 'https://id.example.com', audience: 'agent-api' });
 */
export function jwt(options: JwtOptions): AuthFn {
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
    // A key in another form, or an RSA JWK's `n` (its modulus, base64url): public, so anyone could sign with it.
    if (isKeyShaped(secret) || (typeof given === 'string' && isRsaModulusText(given.trim())))
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
    source = keySetCache(readHttpsUrl(helper, 'jwksUrl', options.jwksUrl), algorithms, shared.internal);
  }
  return createJwtEntry({ helper, authenticator: 'jwt', source, algorithms, ...shared });
}

/**
 * The entry of `jwt()` and `oidc()`: the bearer (or DPoP) token, parsed with its header checked,
 * the cache, the key that verifies its signature, its claims and binding, the DPoP proof, then
 * scopes and principal. Synchronous until the signature, so a token refused before it allocates
 * no promise; every skip is `null`, and with `onRefused` the context's `report` also hears why.
 * With `deferScopes` (the route handler) a token without the entry's scopes is accepted: the
 * handler's `authorize()` decides them with the operation's (design §32).
 */
export function createJwtEntry(config: JwtEntryConfig): AuthFn {
  const { authenticator, source, claims: policy, principal: mapper, typ, scopes, implies, dpop, tenants } = config;
  const clock = clockOf(config.internal ?? {});
  const now = () => clock() / 1000;
  const header: HeaderPolicy = { algorithms: new Set(config.algorithms), typ };
  const cache = config.cacheSize ? tokenCache(config.cacheSize) : undefined;

  // One path for both forms; `refuse` is `undefined` without a listener, so a skip allocates nothing for it.
  function verifyRequest(request: View, refuse?: Refuse, defer = false): Answer | Promise<Answer> {
    // The token is read in place, unsliced, and without the b64token pattern: the compact parser
    // accepts only base64url segments and dots, a strict subset of it.
    const value = request.headers.get('authorization');
    if (value === null) return null;
    const bearer = credentialsStart(value, 'bearer');
    const viaDpop = bearer < 0;
    const start = viaDpop ? credentialsStart(value, 'dpop') : bearer;
    if (start < 0) return null;
    if (!viaDpop && dpop.required) return skip(refuse, 'dpop-required', null);
    if (cache !== undefined) {
      const token = value.slice(start);
      const hit = cache.take(token, now(), policy.clockToleranceSec, source);
      if (hit !== undefined) return fromCache(request, token, hit, viaDpop, refuse);
    }
    const jws = readCompactJws(value, start, header, refuse);
    return jws === null ? null : verifyToken(request, jws, viaDpop, defer, refuse);
  }

  async function verifyToken(request: View, jws: CompactJws, viaDpop: boolean, defer: boolean, refuse?: Refuse) {
    const key = await verifiedKey(jws, source, refuse);
    if (key === null) return null;
    const claims = checkedClaims(jws, viaDpop, refuse);
    if (claims === null) return null;
    const tenant = tenants === undefined ? undefined : await acceptedTenant(tenants, claims, jws, refuse);
    if (tenant === null) return null;
    const failed = viaDpop && (await proofFails(request, accessTokenHash(jws.token), claims, jws, refuse));
    return failed || toPrincipal(jws, key, claims, defer, tenant, refuse);
  }

  /** The claims of a JWS whose signature verified, when they pass and the token is presented as its binding asks (design §16). */
  function checkedClaims(jws: CompactJws, viaDpop: boolean, refuse?: Refuse): Claims | null {
    const claims = parseJsonObject(jws.payload);
    if (claims === null) return skip(refuse, 'malformed', jws);
    const failed = checkClaims(claims, policy, now());
    if (failed !== null) return skip(refuse, failed, jws, claims);
    return bindingHolds(claims, viaDpop) ? claims : skip(refuse, 'dpop-binding', jws, claims);
  }

  /** The DPoP proof of the request, checked on every request (never cached); a failure tells `refuse` why, and is the skip that says it. */
  async function proofFails(request: View, ath: string, claims: Claims, jws: CompactJws | null, refuse?: Refuse) {
    const failed = await checkProof(request, ath, boundThumbprint(claims) ?? '', dpop, now);
    if (failed === null) return undefined;
    refuse?.(failed, jws, claims);
    return proofSkip(failed);
  }

  /** Scopes, then the principal (of the accepted `tenant`): the last steps, once the token (and its proof) held. */
  function toPrincipal(
    jws: CompactJws,
    key: VerifyKey,
    claims: Claims,
    defer: boolean,
    tenant?: string,
    refuse?: Refuse,
  ) {
    const lacking = scopes !== undefined && !hasScopes(claims, scopes, implies);
    if (lacking && !defer) {
      skip(refuse, 'scope', jws, claims);
      // RFC 6750 §3.1 insufficient_scope: the token is valid, the call is not allowed; the 403 names the scopes to obtain.
      throw new AuthError(403, { scope: scopes });
    }
    // A token without the scopes is never cached: a cache hit skips the check.
    if (mapper !== undefined) return mapped(claims, tenant, jws, refuse, lacking ? undefined : key);
    const principal = defaultPrincipal(claims, tenant);
    if (principal === null) return skip(refuse, 'no-subject', jws, claims);
    // A tenants function is asked again on every hit: the principal is built again then.
    if (!lacking) cache?.put(jws.token, { claims, key, principal: tenants?.dynamic ? undefined : principal });
    return principal;
  }

  function defaultPrincipal(claims: Claims, tenant: string | undefined): Principal | null {
    const { sub, iss } = claims;
    if (typeof sub !== 'string' || sub.length === 0) return null;
    // The client's own token (client credentials, RFC 9068 §2.2): its subject is the client.
    const type = claims.client_id === sub || claims.azp === sub ? 'service' : 'user';
    return principalOfClaims(sub, type, authenticator, iss as string | undefined, claims, tenant);
  }

  /**
   * The mapper's principal, completed with this entry's `authenticator`; its `null` skips. A token
   * just verified with `key` is kept for its next use, without the principal: the mapper runs on every hit.
   */
  async function mapped(claims: Claims, tenant?: string, jws?: CompactJws | null, refuse?: Refuse, key?: VerifyKey) {
    const input = await (mapper as JwtPrincipalMapper)(claims);
    if (input === null || input === undefined) return skip(refuse, 'no-subject', jws ?? null, claims);
    // The accepted tenant is the principal's, whatever the mapper said.
    const named = input.authenticator === undefined ? { ...input, authenticator } : input;
    const principal = completePrincipal(tenants === undefined ? named : { ...named, tenant });
    if (principal === null)
      throw new AuthConfigError(
        `${config.helper}: the principal mapper returned an invalid principal (needs id, and type "user" or "service")`,
      );
    if (key !== undefined) cache?.put((jws as CompactJws).token, { claims, key, principal: undefined });
    return principal;
  }

  /** The principal of a cached token still valid: its binding and proof are checked again, the mapper runs again. */
  function fromCache(request: View, token: string, hit: CachedToken, viaDpop: boolean, refuse?: Refuse) {
    if (!bindingHolds(hit.claims, viaDpop)) return skip(refuse, 'dpop-binding', null, hit.claims);
    if (viaDpop) return cachedWithProof(request, token, hit, refuse);
    return hit.principal ?? cachedPrincipal(hit.claims, refuse);
  }

  async function cachedWithProof(request: View, token: string, hit: CachedToken, refuse?: Refuse): Promise<Answer> {
    // The token's hash is kept with it (docs/design.md §30, "Speed tricks and what they bought").
    const failed = await proofFails(request, (hit.ath ??= accessTokenHash(token)), hit.claims, null, refuse);
    return failed ?? hit.principal ?? cachedPrincipal(hit.claims, refuse);
  }

  /** A cached token's principal built again: its tenant asked for again, the mapper run again. */
  async function cachedPrincipal(claims: Claims, refuse?: Refuse): Promise<Answer> {
    const tenant = tenants === undefined ? undefined : await acceptedTenant(tenants, claims, null, refuse);
    if (tenant === null) return null;
    return mapper === undefined ? defaultPrincipal(claims, tenant) : mapped(claims, tenant, null, refuse);
  }

  const reporter =
    (report: ReportRefusal): Refuse =>
    (reason, jws, claims) => {
      // The unverified payload's `iss` too: it tells the operator whose token it was.
      const iss = (claims ?? (jws === null ? null : parseJsonObject(jws.payload)))?.iss;
      // No key for a token of an issuer the entry does not name: its issuer is why (design §12), not the key.
      const foreign =
        (reason === 'no-key' || reason === 'signature') &&
        policy.issuers !== undefined &&
        !policy.issuers.includes(iss as string);
      report(authenticator, foreign ? 'issuer' : reason, jws?.header.kid, typeof iss === 'string' ? iss : undefined);
      return null;
    };
  // The answer that asks for invalid_dpop_proof is a skip routeAuth reads; to a caller it is no principal.
  const call = (request: View, { report, deferScopes }: EntryContext) =>
    verifyRequest(request, report && reporter(report), deferScopes === true);
  const grant = { entry: authenticator, scopes: scopes ?? [], scopeImplies: implies };
  const entry = builtInEntry(grant, call, dpop.nonces !== undefined);
  entry.challenges = entryChallenges(dpop, config.resourceMetadata, scopes);
  return verifiesAccessToken(entry);
}

/** A bound token never comes as Bearer (RFC 9449 §7.2: no downgrade); an unbound one never with DPoP. */
const bindingHolds = (claims: Claims, viaDpop: boolean): boolean => (boundThumbprint(claims) !== undefined) === viaDpop;
