// SPDX-License-Identifier: MIT
// Opaque access tokens (RFC 7662, design §17): the entry asks the authorization server whether a
// token is active, and what it says about it, then applies the checks jwt() applies to claims.
// Read or skip this file as a unit.
import { B64TOKEN, credentialsStart, readsHeadersOnly } from './authorization.ts';
import { sha256 } from './sha256.ts';
import {
  boundThumbprint,
  checkProof,
  DPOP_OPTION_NAMES,
  entryChallenges,
  INVALID_DPOP_PROOF,
  type DpopOptions,
} from './dpop.ts';
import { AuthError, kindOf, throwConfigError } from './errors.ts';
import { encodeBase64url } from './jws/base64url.ts';
import { checkClaims, hasScopes } from './jws/claims.ts';
import {
  fetchJsonObject,
  isWorkersRuntime,
  keySetInternals,
  readHttpsUrl,
  withoutQuery,
  type KeySetInternals,
} from './key-set.ts';
import { discoveredEndpoint, staticEndpoint } from './introspection-endpoint.ts';
import { callSlots } from './call-slots.ts';
import { basicCredentials, formEncode } from './client-auth.ts';
import { readEntryOptions } from './jwt-options.ts';
import type { JwtOptions, JwtPrincipalMapper } from './jwt.ts';
import { checkOptionNames, isNumberIn } from './options.ts';
import { completePrincipal, deepFreeze, makePrincipal } from './principal.ts';
import { verifiesAccessToken } from './presented-token.ts';
import { WITH_REFUSALS, type RefusalReason, type ReportRefusal } from './refusals.ts';
import type { AuthFn, Principal, PrincipalInput } from './types.ts';

/** Options of `introspection()`. Give `endpoint`, or `issuer` alone to discover it. */
export interface IntrospectionOptions
  extends DpopOptions,
    Pick<JwtOptions, 'audience' | 'allowAnyAudience' | 'scopes' | 'clockToleranceSec' | 'resourceMetadata'> {
  /** The introspection endpoint: `https:` (`http:` on loopback only). */
  endpoint?: string | URL;
  /** The authorization server: alone, its metadata names the endpoint (RFC 8414, else OpenID discovery); always, `iss` must equal it when the answer has one. */
  issuer?: string;
  /** The resource server's own client credentials at the authorization server (`client_secret_basic`). */
  clientId: string;
  clientSecret: string;
  /** Maps the answer (without `active`) to a principal; `null` skips, `AuthError(403)` stops with 403. */
  principal?: JwtPrincipalMapper;
  /** Answers kept for repeat tokens, keyed by the token's SHA-256: default `{ maxEntries: 1000, maxAgeSec: 60 }`; `false`: ask every time. */
  cache?: false | { maxEntries?: number; maxAgeSec?: number };
  /** How long a call may take; default 5,000 ms. */
  timeoutMs?: number;
}

/** The options of `introspection()`; then `DPOP_OPTION_NAMES`. */
const OPTION_NAMES = [
  'endpoint',
  'issuer',
  'clientId',
  'clientSecret',
  'audience',
  'allowAnyAudience',
  'scopes',
  'clockToleranceSec',
  'principal',
  'cache',
  'resourceMetadata',
  'timeoutMs',
] as const;
/** Calls in flight per entry at most, so a flood of garbage tokens cannot flood the server; beyond, requests wait in line. */
export const MAX_IN_FLIGHT = 16;
/** Requests waiting in line for a call per entry at most (each at most `timeoutMs`); beyond, they skip. */
export const MAX_WAITING = 1_000;
/** `token_type` values of an access token (RFC 6749 §7.1, RFC 9449 §5), compared case-insensitively. */
const ACCESS_TOKEN_TYPE = /^(?:bearer|dpop|access_token)$/i;
const MAX_ANSWER_BYTES = 65_536; // 64 KiB
/** An inactive answer is kept at most this long: a token just issued may be refused for that long. */
const INACTIVE_MAX_AGE_SEC = 10;

/**
 * A kept answer until `until` (seconds): the claims, or `inactive`; `principal` once an unbound
 * token passed every check with the default principal, so a repeat Bearer request is one lookup.
 */
interface Kept {
  readonly answer: Readonly<Record<string, unknown>> | 'inactive';
  readonly until: number;
  principal?: Principal;
}

/**
 * The cache key: the token's SHA-256 as 16 UTF-16 code units, two bytes each (the token itself is
 * not kept). Half the units of a byte per unit: 0.5 µs less per cache hit (bench suite `introspection`).
 */
function digestKey(token: string): string {
  const d = sha256(token);
  return String.fromCharCode(
    (d[0]! << 8) | d[1]!,
    (d[2]! << 8) | d[3]!,
    (d[4]! << 8) | d[5]!,
    (d[6]! << 8) | d[7]!,
    (d[8]! << 8) | d[9]!,
    (d[10]! << 8) | d[11]!,
    (d[12]! << 8) | d[13]!,
    (d[14]! << 8) | d[15]!,
    (d[16]! << 8) | d[17]!,
    (d[18]! << 8) | d[19]!,
    (d[20]! << 8) | d[21]!,
    (d[22]! << 8) | d[23]!,
    (d[24]! << 8) | d[25]!,
    (d[26]! << 8) | d[27]!,
    (d[28]! << 8) | d[29]!,
    (d[30]! << 8) | d[31]!,
  );
}

/** The `ath` (RFC 9449) of the token whose `digestKey()` is `key`: the same SHA-256, so the token is hashed once. */
function athOf(key: string): string {
  const digest = new Uint8Array(32);
  for (let i = 0; i < 16; i++) {
    const unit = key.charCodeAt(i);
    digest[2 * i] = unit >> 8;
    digest[2 * i + 1] = unit & 0xff;
  }
  return encodeBase64url(digest);
}

/** An answer the entry checked and took: its claims (the answer without `active`). */
type Claims = Readonly<Record<string, unknown>>;

function readCache(value: unknown): { maxEntries: number; maxAgeSec: number } | undefined {
  if (value === false) return undefined;
  if (value !== undefined && (typeof value !== 'object' || value === null))
    throwConfigError('introspection()', 'cache must be false or { maxEntries?, maxAgeSec? }');
  checkOptionNames('introspection(): cache', value ?? {}, ['maxEntries', 'maxAgeSec']);
  const { maxEntries = 1000, maxAgeSec = 60 } = (value ?? {}) as { maxEntries?: unknown; maxAgeSec?: unknown };
  if (!isNumberIn(maxEntries, 1, 100_000, true))
    throwConfigError('introspection()', 'cache.maxEntries must be an integer from 1 to 100000');
  if (!isNumberIn(maxAgeSec, 1, 3600))
    throwConfigError('introspection()', 'cache.maxAgeSec must be a number of seconds from 1 to 3600');
  return { maxEntries: maxEntries as number, maxAgeSec };
}

/**
 * Accepts opaque access tokens (RFC 7662): `Authorization: Bearer <token>` (or `DPoP`, with its
 * proof, for a token the answer binds with `cnf.jkt`) that the authorization server's
 * introspection endpoint calls active. The answer must be a JSON object with `active: true`;
 * then `exp`, `nbf` (with `clockToleranceSec`), `iss` (when `issuer` is set), `aud` (as for
 * `jwt()`) and `scopes` are checked. Default principal: `sub` as a user, else `client_id` as a
 * service, else skip; `authenticator: 'introspection'`. Answers are kept by the token's SHA-256
 * for at most `cache.maxAgeSec` (60 s; never past `exp`; inactive ones 10 s): a revoked token
 * is refused once its answer is older than that. An active answer whose `token_type` is not an
 * access token's (a refresh token) skips. At most 16 calls at once: other requests wait in line,
 * first in, first out (at most 1,000, each at most `timeoutMs`), and one for a token already being
 * asked joins that call. Every failure of the call, a full line or a wait that ran out skips (never a 500).
 * @example
 * const entry = introspection({ issuer: 'https://id.example.com', clientId: 'agent-api', clientSecret: env.INTROSPECTION_SECRET, audience: 'https://agent.example.com/agent' });
 */
export function introspection(options: IntrospectionOptions): AuthFn {
  const helper = 'introspection()';
  if (typeof options !== 'object' || options === null)
    throwConfigError(helper, 'options { endpoint or issuer, clientId, clientSecret, audience } are required');
  checkOptionNames(helper, options, [...OPTION_NAMES, ...DPOP_OPTION_NAMES]);
  const { clientId, clientSecret, issuer, timeoutMs = 5_000 } = options;
  if (typeof clientId !== 'string' || clientId === '')
    throwConfigError(helper, `clientId must be a non-empty string; got ${kindOf(clientId)}`);
  if (typeof clientSecret !== 'string' || clientSecret === '')
    throwConfigError(helper, `clientSecret must be a non-empty string; got ${kindOf(clientSecret)}`);
  if (!isNumberIn(timeoutMs, 1, 60_000, true))
    throwConfigError(helper, 'timeoutMs must be a whole number of milliseconds from 1 to 60000');
  if (options.endpoint === undefined && issuer === undefined)
    throwConfigError(helper, 'give endpoint, or issuer to discover it');
  if (issuer !== undefined && (typeof issuer !== 'string' || issuer === ''))
    throwConfigError(helper, 'issuer must be a non-empty string');
  const shared = readEntryOptions(helper, { ...options, issuer, cache: undefined, principal: options.principal });
  const cacheOptions = readCache(options.cache);
  const internals: KeySetInternals = { ...keySetInternals(options), timeoutMs };
  const endpointOf =
    options.endpoint !== undefined
      ? staticEndpoint(readHttpsUrl(helper, 'endpoint', options.endpoint))
      : discoveredEndpoint(issuer as string, readHttpsUrl(helper, 'issuer', issuer), internals);
  const { claims: policy, scopes, principal: mapper, dpop } = shared;
  const now = internals.now === undefined ? () => Date.now() / 1000 : () => (internals.now as () => number)() / 1000;
  const basic = basicCredentials(clientId, clientSecret);
  const kept = new Map<string, Kept>();
  // A slot is held no longer than its call can last (timeoutMs), with a second to spare.
  const slots = callSlots(MAX_IN_FLIGHT, MAX_WAITING, timeoutMs + 1_000);
  /** The call under way for a token, by its digest: a request for the same token joins it (not on Workers). */
  const asking = new Map<string, Promise<Kept | undefined>>();
  const perRequest = internals.perRequestFetch ?? isWorkersRuntime();

  /** Asks the endpoint, once a call slot is free; `undefined` when the call fails or no slot came in time (never kept). */
  async function ask(token: string): Promise<Record<string, unknown> | undefined> {
    const endpoint = await endpointOf(now());
    if (endpoint === undefined) return undefined;
    const release = await slots.take(timeoutMs);
    if (release === undefined) return undefined;
    try {
      return await fetchJsonObject(endpoint, internals, {
        limit: MAX_ANSWER_BYTES,
        init: {
          method: 'POST',
          headers: {
            accept: 'application/json',
            authorization: basic,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: `token=${formEncode(token)}&token_type_hint=access_token`,
        },
      });
    } catch (error) {
      console.warn(
        `agentward: token introspection at ${withoutQuery(endpoint)} failed (${(error as Error).message}); the token skips`,
      );
      return undefined;
    } finally {
      release();
    }
  }

  function keep(key: string, answer: Kept['answer'], until: number): Kept {
    const entry: Kept = { answer, until };
    if (cacheOptions === undefined) return entry;
    kept.delete(key);
    // The oldest answer out first: each lives at most maxAgeSec, so insertion order is age order.
    if (kept.size >= cacheOptions.maxEntries) kept.delete(kept.keys().next().value as string);
    kept.set(key, entry);
    return entry;
  }

  /**
   * The answer for a token, asked now and kept (`undefined`: unavailable; `'inactive'`). Requests
   * for a token already being asked join that call; on Workers, where a request must not wait on
   * I/O another request began, each asks for itself.
   */
  function answerFor(token: string, key: string, time: number): Promise<Kept | undefined> {
    const joined = asking.get(key);
    if (joined !== undefined) return joined;
    const call = askAndKeep(token, key, time);
    if (perRequest) return call;
    asking.set(key, call);
    return call.finally(() => asking.get(key) === call && asking.delete(key));
  }

  async function askAndKeep(token: string, key: string, time: number): Promise<Kept | undefined> {
    const answer = await ask(token);
    if (answer === undefined) return undefined;
    if (answer.active !== true)
      return keep(key, 'inactive', time + Math.min(INACTIVE_MAX_AGE_SEC, cacheOptions?.maxAgeSec ?? 0));
    const { active: _active, ...rest } = answer;
    const claims = deepFreeze(rest);
    const exp = typeof claims.exp === 'number' ? claims.exp : Infinity;
    return keep(key, claims, Math.min(time + (cacheOptions?.maxAgeSec ?? 0), exp));
  }

  const principalOf = (
    claims: Claims,
  ): PrincipalInput | null | Promise<PrincipalInput | null | undefined> | undefined => {
    if (mapper !== undefined) return mapper(claims);
    const { sub, client_id: client, iss } = claims;
    const issuerOf = typeof iss === 'string' ? iss : undefined;
    if (typeof sub === 'string' && sub !== '')
      return makePrincipal({
        id: sub,
        type: 'user',
        authenticator: 'introspection',
        ...(issuerOf && { issuer: issuerOf }),
        claims,
      });
    if (typeof client === 'string' && client !== '')
      return makePrincipal({
        id: client,
        type: 'service',
        authenticator: 'introspection',
        ...(issuerOf && { issuer: issuerOf }),
        claims,
      });
    return null;
  };

  type Refuse = (reason: RefusalReason, iss?: unknown) => null;
  const refuser =
    (report: ReportRefusal | undefined): Refuse =>
    (reason, iss) => (report?.('introspection', reason, undefined, typeof iss === 'string' ? iss : undefined), null);
  const silent: Refuse = () => null;

  /**
   * Synchronous up to the kept principal of a repeat Bearer request (no promise: as fast as
   * jwt()'s cache hit but for the digest, bench suite `introspection`); the rest is `verify`.
   */
  function handle(request: Request, refuse: Refuse): Principal | null | Promise<Principal | null> {
    const value = request.headers.get('authorization');
    if (value === null) return null;
    const bearer = credentialsStart(value, 'bearer');
    const start = bearer >= 0 ? bearer : credentialsStart(value, 'dpop');
    if (start < 0) return null;
    if (bearer >= 0 && dpop.required) return refuse('dpop-required');
    const token = value.slice(start);
    const key = digestKey(token);
    const time = now();
    let found = kept.get(key);
    if (found !== undefined && found.until <= time) found = void kept.delete(key);
    // A repeat Bearer request for a token that passed everything: the principal, at once.
    if (found?.principal !== undefined && bearer >= 0) return found.principal;
    // Only a well-formed token is sent to the server (a kept one was, when it was first asked).
    if (found === undefined && !B64TOKEN.test(token)) return refuse('malformed');
    return verify(request, refuse, token, key, time, found, bearer >= 0);
  }

  async function verify(
    request: Request,
    refuse: Refuse,
    token: string,
    key: string,
    time: number,
    kept: Kept | undefined,
    asBearer: boolean,
  ): Promise<Principal | null> {
    const found = kept ?? (await answerFor(token, key, time));
    if (found === undefined) return refuse('introspection-unavailable');
    const { answer } = found;
    if (answer === 'inactive') return refuse('inactive');
    // A refresh token (or any other kind) the server calls active opens no API.
    const type = answer.token_type;
    if (type !== undefined && !(typeof type === 'string' && ACCESS_TOKEN_TYPE.test(type)))
      return refuse('token-type', answer.iss);
    const failed = checkClaims(answer, policy, now(), false);
    if (failed !== null) return refuse(failed, answer.iss);
    const jkt = boundThumbprint(answer);
    if ((jkt !== undefined) === asBearer) return refuse('dpop-binding', answer.iss);
    if (jkt !== undefined) {
      const proof = await checkProof(request, athOf(key), jkt, dpop, now);
      if (proof !== null) return (refuse(proof, answer.iss), INVALID_DPOP_PROOF as unknown as null);
    }
    if (scopes !== undefined && !hasScopes(answer, scopes)) {
      refuse('scope', answer.iss);
      throw new AuthError(403, { scope: scopes });
    }
    const mapped = await principalOf(answer);
    if (mapped === null || mapped === undefined) return refuse('no-subject', answer.iss);
    const principal = completePrincipal(
      typeof mapped === 'object' && mapped.authenticator === undefined
        ? { ...mapped, authenticator: 'introspection' }
        : mapped,
    );
    if (principal === null)
      throw new TypeError(
        `${helper}: the principal mapper returned an invalid principal (needs id, and type "user" or "service")`,
      );
    // Kept for the next Bearer request only when nothing but the clock could change the outcome.
    if (mapper === undefined && jkt === undefined && (answer.nbf === undefined || (answer.nbf as number) <= time))
      found.principal = principal;
    return principal;
  }

  const entry: AuthFn = (request) => handle(request, silent);
  Object.defineProperty(entry, WITH_REFUSALS, {
    value: (request: Request, report: ReportRefusal) => handle(request, refuser(report)),
  });
  entry.challenges = entryChallenges(dpop, shared.resourceMetadata, scopes);
  return verifiesAccessToken(readsHeadersOnly(entry));
}
