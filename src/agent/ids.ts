import { encodeBase64url } from '../auth/jose/base64url.ts';

/** A random 128-bit id, base64url without padding (22 characters): unguessable, so usable as a session id. */
export function randomId(): string {
  return encodeBase64url(crypto.getRandomValues(new Uint8Array(16)));
}
