// SPDX-License-Identifier: MIT
// Opaque access tokens (RFC 7662, design §17): the entry asks the authorization server whether a
// token is active, and what it says about it, then applies the checks jwt() applies to claims.
// Read or skip this file as a unit.
import { B64TOKEN, credentialsStart } from './authorization.ts';
import { builtInEntry, type EntryContext } from './built-in.ts';
import { boundThumbprint, checkProof, proofSkip } from './dpop.ts';
import { DPOP_OPTION_NAMES, entryChallenges, type DpopOptions } from './dpop-options.ts';
import { AuthConfigError, AuthError, kindOf, throwConfigError } from './errors.ts';
import { checkClaims, hasScopes } from './jws/claims.ts';
import { fetchJsonObject, readHttpsUrl, withoutQuery } from './key-set.ts';
import { isWorkersRuntime } from './attempt-gate.ts';
import { clockOf, type InternalOptions } from './internal-options.ts';
import { athOf, digestKey, readCache, type Kept } from './introspection-cache.ts';
import { discoveredEndpoint, staticEndpoint } from './introspection-endpoint.ts';
import { callSlots } from './call-slots.ts';
import type { ChallengeErrorSkip } from './challenges.ts';
import { basicCredentials, formEncode } from './client-auth.ts';
import { readEntryOptions } from './jwt-options.ts';
import type { JwtOptions, JwtPrincipalMapper } from './jwt.ts';
import { checkOptionNames, isNumberIn } from './options.ts';
import { completePrincipal, deepFreeze, makePrincipal } from './principal.ts';
import { verifiesAccessToken } from './presented-token.ts';
import type { RefusalReason, ReportRefusal } from './refusals.ts';
import type { AuthFn, Principal, PrincipalInput, RequestView } from './types.ts';

/** Options of `introspection()`. Give `endpoint`, or `issuer` alone to discover it. */
export interface IntrospectionOptions
  extends DpopOptions,
    Pick<
      JwtOptions,
      'audience' | 'allowAnyAudience' | 'scopes' | 'scopeImplies' | 'clockToleranceSec' | 'resourceMetadata'
    > {
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
  /** @internal The test hook (a clock, a fetch): not part of the public API. See CONTRIBUTING.md. */
  _internal?: InternalOptions;
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
  'scopeImplies',
  'clockToleranceSec',
  'principal',
  'cache',
  'resourceMetadata',
  'timeoutMs',
  '_internal',
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

/** What the entry answers: a principal, a skip, or the skip that asks for `invalid_dpop_proof`. */
type Answer = Principal | null | ChallengeErrorSkip;

/** An answer the entry checked and took: its claims (the answer without `active`). */
type Claims = Readonly<Record<string, unknown>>;

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
  const internals: InternalOptions = { ...shared.internal, timeoutMs };
  const endpointOf =
    options.endpoint !== undefined
      ? staticEndpoint(readHttpsUrl(helper, 'endpoint', options.endpoint))
      : discoveredEndpoint(issuer as string, readHttpsUrl(helper, 'issuer', issuer), internals);
  const { claims: policy, scopes, implies, principal: mapper, dpop } = shared;
  const clock = clockOf(internals);
  const now = () => clock() / 1000;
  const basic = basicCredentials(clientId, clientSecret);
  const kept = new Map<string, Kept>();
  // A slot is held no longer than its call can last (timeoutMs), with a second to spare.
  const slots = callSlots(MAX_IN_FLIGHT, MAX_WAITING, timeoutMs + 1_000, clock);
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
    // The subject as a user, else the client as a service.
    const [id, type] = typeof sub === 'string' && sub !== '' ? [sub, 'user' as const] : [client, 'service' as const];
    if (typeof id !== 'string' || id === '') return null;
    const issuer = typeof iss === 'string' && iss !== '' ? { issuer: iss } : {};
    return makePrincipal({ id, type, authenticator: 'introspection', ...issuer, claims });
  };

  type Refuse = (reason: RefusalReason, iss?: unknown) => null;
  const refuser =
    (report: ReportRefusal | undefined): Refuse =>
    (reason, iss) => (report?.('introspection', reason, undefined, typeof iss === 'string' ? iss : undefined), null);
  const silent: Refuse = () => null;

  /**
   * Synchronous up to the kept principal of a repeat Bearer request, with no promise (docs/design.md
   * §30, "Speed tricks and what they bought"); the rest is `verify`.
   */
  function handle(request: RequestView, refuse: Refuse, defer: boolean): Answer | Promise<Answer> {
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
    return verify(request, refuse, defer, token, key, time, found, bearer >= 0);
  }

  async function verify(
    request: RequestView,
    refuse: Refuse,
    defer: boolean,
    token: string,
    key: string,
    time: number,
    kept: Kept | undefined,
    asBearer: boolean,
  ): Promise<Answer> {
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
      if (proof !== null) return (refuse(proof, answer.iss), proofSkip(proof));
    }
    const lacking = scopes !== undefined && !hasScopes(answer, scopes, implies);
    if (lacking && !defer) {
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
      throw new AuthConfigError(
        `${helper}: the principal mapper returned an invalid principal (needs id, and type "user" or "service")`,
      );
    // Kept for the next Bearer request only when nothing but the clock could change the outcome.
    // Never one without the scopes: a kept principal skips their check.
    if (
      !lacking &&
      mapper === undefined &&
      jkt === undefined &&
      (answer.nbf === undefined || (answer.nbf as number) <= time)
    )
      found.principal = principal;
    return principal;
  }

  // The answer that asks for invalid_dpop_proof is a skip routeAuth reads; to a caller it is no principal.
  const call = (request: RequestView, { report, deferScopes }: EntryContext) =>
    handle(request, report === undefined ? silent : refuser(report), deferScopes === true);
  const grant = { entry: 'introspection', scopes: scopes ?? [], scopeImplies: implies };
  const entry = builtInEntry(grant, call, dpop.nonces !== undefined);
  entry.challenges = entryChallenges(dpop, shared.resourceMetadata, scopes);
  return verifiesAccessToken(entry);
}
