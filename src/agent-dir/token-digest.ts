// A build output holds the SHA-256 digest of the token `init` baked in, never the token itself.
import { AuthConfigError, apiTokenDigestEntry, sha256, type AuthFn } from '../auth/internal.ts';
import { SETTINGS_FILE } from './agent-dir.ts';

/** The lowercase hex SHA-256 digest of a token: what a build output holds instead of the token. */
export async function tokenDigest(token: string): Promise<string> {
  return Buffer.from(sha256(token)).toString('hex');
}

/** `apiToken()` for a build output, which knows only the digest: the same entry, compared in constant time. */
export function apiTokenDigest(hexDigest: string): AuthFn {
  if (!/^[0-9a-f]{64}$/.test(hexDigest))
    throw new AuthConfigError(`${SETTINGS_FILE}: "apiTokenSha256" must be 64 lowercase hex digits`);
  return apiTokenDigestEntry(new Uint8Array(Buffer.from(hexDigest, 'hex')), 'api-token');
}
