import { parseCompactJws, signatureOf, signingInputOf, type CompactJws } from './compact.ts';
import type { KeySource, VerifyKey } from './key-source.ts';

const INVALID: Promise<boolean> = Promise.resolve(false);

/**
 * Verifies `signature` over `data` with one imported key: the length must be exact (full HMAC
 * tag, raw 64/96-byte ECDSA `r||s`, RSA modulus length) before Web Crypto is asked. May reject
 * when the runtime refuses the inputs; callers treat that as invalid.
 */
export function verifySignature(key: VerifyKey, signature: Uint8Array<ArrayBuffer>, data: Uint8Array<ArrayBuffer>): Promise<boolean> {
  if (signature.length !== key.signatureLength) return INVALID;
  // verify() takes a copy of the bytes of `signature` and `data` before it returns (its first
  // steps in the Web Cryptography API), so they may sit in buffers the next token overwrites.
  // A test checks this on every runtime.
  return crypto.subtle.verify(key.algorithm.verifyParams, key.key, signature, data);
}

/**
 * The verify path: parse, pick key, verify signature, then `accept` the payload text of the
 * valid JWS (the caller checks the claims there); resolves to what `accept` returns, or `null`.
 * The JWS is `token` from `start` on. Returns `null` synchronously, with no crypto, for a token
 * that fails before the signature (malformed, `alg` not allowed, `crit`).
 */
export function verifyCompactJws<T>(
  token: string,
  start: number,
  algorithms: ReadonlySet<string>,
  source: KeySource,
  accept: (payload: string) => T,
): Promise<Awaited<T> | null> | null {
  const jws = parseCompactJws(token, start);
  if (jws === null || !algorithms.has(jws.header.alg)) return null;
  const found = source.keysFor(jws.header);
  if (Array.isArray(found)) return tryKeys(jws, found as readonly VerifyKey[], 0, accept);
  return (found as Promise<readonly VerifyKey[]>).then((keys) => tryKeys(jws, keys, 0, accept));
}

const NOT_VERIFIED: Promise<null> = Promise.resolve(null);

/** Tries `keys` from `index` on, in order, until one verifies the signature; one promise per key, no `async` frame. */
function tryKeys<T>(jws: CompactJws, keys: readonly VerifyKey[], index: number, accept: (payload: string) => T): Promise<Awaited<T> | null> {
  for (let i = index; i < keys.length; i++) {
    const key = keys[i]!;
    // The key decides the algorithm: a key is only ever used with the algorithm it was imported for.
    if (key.algorithm.name !== jws.header.alg) continue;
    let verified: Promise<boolean>;
    try {
      verified = verifySignature(key, signatureOf(jws), signingInputOf(jws));
    } catch {
      // A signature the runtime refuses to process, by a throw or a rejection, is not a valid one.
      return tryKeys(jws, keys, i + 1, accept);
    }
    // What `accept` throws is the caller's (a mapper's AuthError), never another key's turn.
    return verified.then(
      (valid) => (valid ? accept(jws.payload) : tryKeys(jws, keys, i + 1, accept)),
      () => tryKeys(jws, keys, i + 1, accept),
    ) as Promise<Awaited<T> | null>;
  }
  return NOT_VERIFIED;
}
