import { apiToken } from './api-token.ts';
import { isHeadersOnly } from './authorization.ts';
import { listChallenges } from './challenges.ts';
import { AuthConfigError, isAuthError } from './errors.ts';
import { checkOptionNames } from './options.ts';
import { completePrincipal, makePrincipal } from './principal.ts';
import { readRefusalListener, RequestRefusals, WITH_REFUSALS, type RefusalListener, type ReportingEntry } from './refusals.ts';
import { authResponse } from './responses.ts';
import type { AuthFn, AuthOption, AuthResult, Principal } from './types.ts';

// Built like every other principal, so the run context takes it as it is instead of rebuilding it per request.
const BOOLEAN_PRINCIPAL: Principal = makePrincipal({ id: 'anonymous', type: 'user', authenticator: 'custom' });

/** Turns every form of the `auth` option into a list of entries. */
export function authEntries(auth: AuthOption): readonly AuthFn[] {
  if (typeof auth === 'string') return [apiToken(auth)];
  if (typeof auth === 'function') return [auth as AuthFn];
  if (Array.isArray(auth)) {
    const index = auth.findIndex((entry) => typeof entry !== 'function');
    if (index >= 0) throw new AuthConfigError(`routeAuth(): entry ${index} of the auth list is not a function`);
    return Object.freeze([...auth]);
  }
  throw new AuthConfigError('routeAuth(): auth must be a list of entries, one entry, a token string, or a function returning a boolean');
}

/** What `routeAuth()` returns: one request in, its outcome out. */
export interface Authenticate {
  (request: Request): Promise<AuthResult>;
  /** Every entry is a built-in one, which reads only the headers: any `{ headers }` will do in place of a Request. */
  readonly headersOnly: boolean;
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
 * const authenticate = routeAuth([basic({ users: { ada: 'secret' } }), apiToken(env.TOKEN)]);
 * const result = await authenticate(request);
 * if (!result.ok) return result.response;
 * result.principal.id;
 * // Why tokens are refused, for the operator:
 * routeAuth([jwt({ jwksUrl, audience })], { onRefused: ({ entry, reason, kid }) => console.warn(entry, reason, kid) });
 */
export function routeAuth(auth: AuthOption, options: RouteAuthOptions = {}): Authenticate {
  const entries = authEntries(auth);
  const challenges = listChallenges(entries);
  if (typeof options !== 'object' || options === null) throw new AuthConfigError('routeAuth(): options must be { onRefused? }');
  checkOptionNames('routeAuth()', options, ['onRefused']);
  const listener = readRefusalListener('routeAuth()', options.onRefused);
  const refusing = (status: 401 | 403 | 500, refusals: RequestRefusals | undefined): AuthResult => {
    if (status !== 500) refusals?.tell();
    return { ok: false, response: authResponse(status, challenges) };
  };

  const authenticate = async (request: Request): Promise<AuthResult> => {
    // Only with a listener: without one, nothing is allocated for it.
    const refusals = listener === undefined ? undefined : new RequestRefusals(listener);
    for (const entry of entries) {
      let outcome: unknown;
      try {
        const reporting = refusals === undefined ? undefined : (entry as { [WITH_REFUSALS]?: ReportingEntry })[WITH_REFUSALS];
        outcome = reporting === undefined ? entry(request) : reporting(request, (refusals as RequestRefusals).report);
        if (typeof (outcome as PromiseLike<unknown> | null)?.then === 'function') outcome = await outcome;
      } catch (error) {
        if (isAuthError(error)) return refusing(error.status, refusals);
        console.error('agentward: an auth entry threw; answering 500', error);
        return refusing(500, refusals);
      }
      if (outcome === null || outcome === undefined) continue;
      if (outcome === true) return { ok: true, principal: BOOLEAN_PRINCIPAL };
      if (outcome === false) return refusing(401, refusals);
      const principal = completePrincipal(outcome);
      if (principal === null) {
        console.error('agentward: an auth entry returned an invalid principal (needs id, and type "user" or "service"); answering 500');
        return refusing(500, refusals);
      }
      return { ok: true, principal };
    }
    return refusing(401, refusals);
  };
  return Object.assign(authenticate, { headersOnly: entries.every(isHeadersOnly) });
}
