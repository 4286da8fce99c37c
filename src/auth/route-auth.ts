import { apiToken } from './api-token.ts';
import { listChallenges } from './challenges.ts';
import { AuthConfigError, isAuthError } from './errors.ts';
import { completePrincipal, makePrincipal } from './principal.ts';
import { authResponse } from './responses.ts';
import type { AuthFn, AuthOption, AuthResult, Principal } from './types.ts';

// Built like every other principal, so the run context takes it as it is instead of rebuilding it per request.
const BOOLEAN_PRINCIPAL: Principal = makePrincipal({ id: 'anonymous', type: 'user', authenticator: 'custom' });

/** Turns every form of the `auth` option into a list of entries. */
export function authEntries(auth: AuthOption): readonly AuthFn[] {
  if (typeof auth === 'string') return [apiToken(auth)];
  if (typeof auth === 'function') return [auth as AuthFn];
  if (Array.isArray(auth)) {
    auth.forEach((entry, index) => {
      if (typeof entry !== 'function') throw new AuthConfigError(`routeAuth(): entry ${index} of the auth list is not a function`);
    });
    return Object.freeze([...auth]);
  }
  throw new AuthConfigError('routeAuth(): auth must be a list of entries, one entry, a token string, or a function returning a boolean');
}

/**
 * Evaluates an auth list for each request: entries in order, the first principal wins,
 * `null`/`undefined` skips, `AuthError(401|403)` stops, anything else thrown is a 500.
 * @example
 * const authenticate = routeAuth([basic({ users: { ada: 'secret' } }), apiToken(env.TOKEN)]);
 * const result = await authenticate(request);
 * if (!result.ok) return result.response;
 * result.principal.id;
 */
export function routeAuth(auth: AuthOption): (request: Request) => Promise<AuthResult> {
  const entries = authEntries(auth);
  const challenges = listChallenges(entries);
  const refuse = (status: 401 | 403 | 500): AuthResult => ({ ok: false, response: authResponse(status, challenges) });

  return async function authenticate(request: Request): Promise<AuthResult> {
    for (const entry of entries) {
      let outcome: unknown;
      try {
        outcome = entry(request);
        if (typeof (outcome as PromiseLike<unknown> | null)?.then === 'function') outcome = await outcome;
      } catch (error) {
        if (isAuthError(error)) return refuse(error.status);
        console.error('agentgate: an auth entry threw; answering 500', error);
        return refuse(500);
      }
      if (outcome === null || outcome === undefined) continue;
      if (outcome === true) return { ok: true, principal: BOOLEAN_PRINCIPAL };
      if (outcome === false) return refuse(401);
      const principal = completePrincipal(outcome);
      if (principal === null) {
        console.error('agentgate: an auth entry returned an invalid principal (needs id, and type "user" or "service"); answering 500');
        return refuse(500);
      }
      return { ok: true, principal };
    }
    return refuse(401);
  };
}
