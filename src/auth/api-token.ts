import { B64TOKEN, readBearerToken } from './authorization.ts';
import { constantTimeEqual, sha256 } from './constant-time.ts';
import { AuthConfigError } from './errors.ts';
import { makePrincipal } from './principal.ts';
import type { AuthFn } from './types.ts';

/**
 * Accepts `Authorization: Bearer <token>` when the token equals `token`, compared in constant time.
 * @example
 * const entry = apiToken(env.AGENT_API_TOKEN, { id: 'ci-bot' });
 */
export function apiToken(token: string, options: { id?: string } = {}): AuthFn {
  if (typeof token !== 'string' || !B64TOKEN.test(token)) {
    throw new AuthConfigError('apiToken(): token must be a non-empty RFC 6750 b64token (letters, digits, -._~+/ and trailing =)');
  }
  const { id = 'api-token' } = options ?? {};
  if (typeof id !== 'string' || id.length === 0) throw new AuthConfigError('apiToken(): id must be a non-empty string');
  const principal = makePrincipal({ id, type: 'service', authenticator: 'api-token' });
  const expected = sha256(token);

  // Synchronous: no thread-pool job, no promise (see sha256() for what that saves).
  const entry: AuthFn = (request) => {
    const presented = readBearerToken(request);
    if (presented === null) return null;
    return constantTimeEqual(expected, sha256(presented)) ? principal : null;
  };
  entry.challenges = [{ scheme: 'Bearer' }];
  return entry;
}
