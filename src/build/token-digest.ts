// A build output holds the SHA-256 digest of the token `init` baked in, never the token itself.
import { readBearerToken } from '../auth/authorization.ts';
import { constantTimeEqual, sha256 } from '../auth/constant-time.ts';
import { makePrincipal } from '../auth/principal.ts';
import type { AuthFn } from '../auth/types.ts';
import { SETTINGS_FILE } from './agent-dir.ts';

/** The lowercase hex SHA-256 digest of a token: what a build output holds instead of the token. */
export async function tokenDigest(token: string): Promise<string> {
  return Buffer.from(await sha256(token)).toString('hex');
}

/**
 * `apiToken()` for a server that knows only the SHA-256 digest of the token (a build output):
 * the presented token's digest is compared in constant time, as `apiToken()` does.
 */
export function apiTokenDigest(hexDigest: string): AuthFn {
  if (!/^[0-9a-f]{64}$/.test(hexDigest)) throw new Error(`${SETTINGS_FILE}: "apiTokenSha256" must be 64 lowercase hex digits`);
  const expected = new Uint8Array(Buffer.from(hexDigest, 'hex'));
  const principal = makePrincipal({ id: 'api-token', type: 'service', authenticator: 'api-token' });
  const entry: AuthFn = async (request) => {
    const presented = readBearerToken(request);
    if (presented === null) return null;
    return constantTimeEqual(expected, await sha256(presented)) ? principal : null;
  };
  entry.challenges = [{ scheme: 'Bearer' }];
  return entry;
}

