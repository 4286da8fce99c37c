// SPDX-License-Identifier: MIT
import { API_TOKEN_ID, apiToken } from './api-token.ts';
import { builtInOf, CUSTOM_GRANT, nonceView, type EntryContext, type NonceView } from './built-in.ts';
import {
  challengeErrorOf,
  challengeScope,
  formatChallenge,
  listChallenges,
  type ChallengeError,
  type ListChallenges,
} from './challenges.ts';
import { isAuthError, kindOf, throwConfigError } from './errors.ts';
import { checkOptionNames } from './options.ts';
import { completePrincipal, makePrincipal } from './principal.ts';
import { keeping } from './presented-token.ts';
import { requestRefusals, type RequestRefusals, type RefusalListener } from './refusals.ts';
import { authResponse } from './responses.ts';
import type { AuthFn, AuthOption, AuthResult, Principal, RequestView } from './types.ts';

/** The contexts of a request without an `onRefused` listener: made once. */
const PLAIN: EntryContext = Object.freeze({});
const DEFERRED: EntryContext = Object.freeze({ deferScopes: true });

/** Names routeAuth() in its configuration errors. */
const HELPER = 'routeAuth()';

// Built like every other principal, so the run context takes it as it is instead of rebuilding it per request.
// The only principal of a boolean function: the route handler's limits count its callers by client address (design §22).
export const BOOLEAN_PRINCIPAL: Principal = makePrincipal({ id: 'anonymous', type: 'user', authenticator: 'custom' });

/**
 * Turns every form of the `auth` option into a list of entries. Two `apiToken()` entries of one
 * `id` are refused (design §20): two callers would be one principal, and read each other's sessions.
 */
export function authEntries(auth: AuthOption): readonly AuthFn[] {
  if (typeof auth === 'string') return [apiToken(auth)];
  if (typeof auth === 'function') return [auth as AuthFn];
  if (!Array.isArray(auth)) {
    throwConfigError(
      HELPER,
      `auth must be a list of entries, one entry, a token string, or a function returning a boolean; got ${kindOf(auth)}`,
    );
  }
  const ids = new Set<string>();
  auth.forEach((entry: unknown, index) => {
    if (typeof entry !== 'function')
      throwConfigError(HELPER, `entry ${index} of the auth list is not a function; got ${kindOf(entry)}`);
    const id = (entry as { [API_TOKEN_ID]?: string })[API_TOKEN_ID];
    if (id === undefined) return;
    if (ids.has(id))
      throwConfigError(
        HELPER,
        `two apiToken() entries have the id ${JSON.stringify(id.slice(0, 64))} (one principal): give each token its own id`,
      );
    ids.add(id);
  });
  return Object.freeze([...auth]);
}

/**
 * A request as the route handler hands it to `routeAuth()`: the view the built-in entries read,
 * and the Web `Request`, made only if an entry of the user's is reached (design §32).
 */
export interface ViewedRequest extends RequestView {
  request(): Request;
}

/** How the route handler asks (design §32). */
export interface AuthenticateOptions {
  /**
   * The handler decides the entries' scopes itself, with the operation's, once it knows it:
   * a token without an entry's scopes is accepted, and `grant.scopes` says which they were.
   */
  readonly deferScopes?: boolean;
  /**
   * What the route needs besides the entries' scopes, as far as the path says: an entry of the
   * user's that answers 403 `insufficient_scope` names both (design §25).
   */
  readonly routeScopes?: () => readonly string[];
}

/** What `routeAuth()` returns: one request in, its outcome out. */
export interface Authenticate {
  (request: Request | ViewedRequest, options?: AuthenticateOptions): Promise<AuthResult>;
  /**
   * The 403 a route answers when the accepted principal lacks `scope` (design §15): `WWW-Authenticate:
   * Bearer error="insufficient_scope", scope="…", resource_metadata="…"` (`DPoP` when the token came that way).
   */
  insufficientScope(
    request: { readonly headers: { get(name: string): string | null } },
    scope: readonly string[],
  ): Response;
  /**
   * Whether every entry is a built-in one, which finds a credential only in the `Authorization`
   * and `DPoP` headers: a request without either then presented nothing (limits.failures, design §25).
   */
  readonly builtInOnly: boolean;
}

type HeaderView = { readonly headers: { get(name: string): string | null } };

/** The scheme of the request's credential, lower case (`bearer`, `dpop`, `basic`…), or `undefined`. */
function presentedScheme(request: HeaderView): string | undefined {
  const value = request.headers.get('authorization');
  if (value === null) return undefined;
  const space = value.indexOf(' ');
  return space > 0 ? value.slice(0, space).toLowerCase() : undefined;
}

/**
 * The challenge of a 403 for missing scopes (RFC 6750 §3.1): the scheme the token came in
 * (`DPoP`, else `Bearer`), the scopes to obtain, and the list's `resource_metadata` for it.
 */
function insufficientScopeLine(challenges: ListChallenges, request: HeaderView, scope: readonly string[]): string {
  const scheme = presentedScheme(request) === 'dpop' ? 'DPoP' : 'Bearer';
  const name = 'resource_metadata';
  const metadata = challenges.param(scheme, name) ?? challenges.param('Bearer', name);
  const params: Record<string, string> = {};
  const asked = challengeScope(scope);
  if (asked) params.scope = asked;
  if (metadata !== undefined) params.resource_metadata = metadata;
  return formatChallenge({ scheme, params }, 'insufficient_scope');
}

export interface RouteAuthOptions {
  /**
   * Hears why a bearer token was refused, once per refused request: `{ entry, reason, kid?, iss? }`
   * (design §12), never the token. The client's answer is unchanged.
   */
  onRefused?: RefusalListener;
}

/**
 * Evaluates an auth list for each request: entries in order, the first principal wins,
 * `null`/`undefined` skips, `AuthError(401|403)` stops, anything else thrown is a 500.
 * @example
 * const authenticate = routeAuth([basic({ users: { ada: env.ADA_PASSWORD } }), apiToken(env.TOKEN)]);
 * const result = await authenticate(request);
 * if (!result.ok) return result.response;
 * result.principal.id;
 * // Why tokens are refused, for the operator:
 * routeAuth([jwt({ jwksUrl, audience })], { onRefused: ({ entry, reason, kid }) => console.warn(entry, reason, kid) });
 */
export function routeAuth(auth: AuthOption, options: RouteAuthOptions = {}): Authenticate {
  const entries = authEntries(auth);
  const challenges = listChallenges(entries);
  if (typeof options !== 'object' || options === null) throwConfigError(HELPER, 'options must be { onRefused? }');
  checkOptionNames(HELPER, options, ['onRefused']);
  const listener = options.onRefused;
  if (listener !== undefined && typeof listener !== 'function')
    throwConfigError(HELPER, 'onRefused must be a function of { entry, reason, kid?, iss? }');
  // A 401 to a credential the list reads (Bearer, DPoP) says invalid_token, or what an entry asked for (RFC 6750 §3.1).
  const unauthorized = (request: HeaderView, asked: ChallengeError | undefined): readonly string[] => {
    const scheme = presentedScheme(request);
    if ((scheme !== 'bearer' && scheme !== 'dpop') || !challenges.reads(scheme)) return challenges.lines();
    return challenges.lines(
      asked !== undefined && asked.scheme.toLowerCase() === scheme ? asked : { scheme, code: 'invalid_token' },
    );
  };
  const refusing = (
    request: RequestView,
    status: 401 | 403 | 500,
    refusals: RequestRefusals | undefined,
    lines: readonly string[] = [],
  ): Extract<AuthResult, { ok: false }> => {
    const refusal = status === 500 ? undefined : refusals?.tell();
    const response = authResponse(status, lines);
    // RFC 9449 §8: the nonce an entry offered goes with every answer, a refusal's too.
    const nonce = (request as Partial<NonceView>).offered;
    if (nonce !== undefined) response.headers.set('DPoP-Nonce', nonce);
    return { ok: false, response, refusal };
  };

  const offersNonces = entries.some((entry) => builtInOf(entry)?.offersNonces === true);
  const authenticate = async (given: Request | ViewedRequest, options?: AuthenticateOptions): Promise<AuthResult> => {
    // With DPoP nonces, the built-in entries read a view of the request that keeps the nonce one offers.
    const request = offersNonces ? nonceView(given) : given;
    // Only with a listener: without one, nothing is allocated for it.
    const refusals = listener === undefined ? undefined : requestRefusals(listener);
    const deferScopes = options?.deferScopes === true;
    const context: EntryContext =
      refusals === undefined ? (deferScopes ? DEFERRED : PLAIN) : { report: refusals.report, deferScopes };
    let asked: ChallengeError | undefined;
    for (const entry of entries) {
      let outcome: unknown;
      const builtIn = builtInOf(entry);
      try {
        outcome =
          builtIn === undefined
            ? entry(
                typeof (given as ViewedRequest).request === 'function'
                  ? (given as ViewedRequest).request()
                  : (given as Request),
              )
            : builtIn.call(request, context);
        if (typeof (outcome as PromiseLike<unknown> | null)?.then === 'function') outcome = await outcome;
      } catch (error) {
        if (!isAuthError(error)) {
          console.error('agentward: an auth entry threw; answering 500', error);
          return refusing(request, 500, refusals);
        }
        if (error.status === 401) return refusing(request, 401, refusals, unauthorized(request, asked));
        const scope = error.scope && [...new Set([...error.scope, ...(options?.routeScopes?.() ?? [])])];
        return refusing(request, 403, refusals, scope ? [insufficientScopeLine(challenges, request, scope)] : []);
      }
      if (outcome === null || outcome === undefined) continue;
      if (outcome === true) return { ok: true, principal: BOOLEAN_PRINCIPAL, grant: CUSTOM_GRANT };
      if (outcome === false) return refusing(request, 401, refusals, challenges.lines());
      // A skip that says what the 401 should tell the client (a refused DPoP proof).
      const error = typeof outcome === 'object' ? challengeErrorOf(outcome) : undefined;
      if (error !== undefined) {
        asked ??= error;
        continue;
      }
      const principal = completePrincipal(outcome);
      if (principal === null) {
        console.error(
          'agentward: an auth entry returned an invalid principal (needs id, and type "user" or "service"); answering 500',
        );
        return refusing(request, 500, refusals);
      }
      // Once a tokenExchange() exists, the access token the entry verified is kept beside the principal, never in it (design §27).
      return {
        ok: true,
        principal: keeping.presentedBy?.(entry, principal, request.headers.get('authorization')) ?? principal,
        grant: builtIn?.grant ?? CUSTOM_GRANT,
        dpopNonce: (request as Partial<NonceView>).offered,
      };
    }
    const refused = refusing(request, 401, refusals, unauthorized(request, asked));
    // A 401 whose only fault is a protocol step (a DPoP proof without the current nonce): limits.failures gives its slot back.
    return asked?.step === true ? { ...refused, step: true } : refused;
  };
  return Object.assign(authenticate, {
    insufficientScope: (request: HeaderView, scope: readonly string[]) =>
      authResponse(403, [insufficientScopeLine(challenges, request, scope)]),
    builtInOnly: entries.every((entry) => builtInOf(entry) !== undefined),
  });
}
