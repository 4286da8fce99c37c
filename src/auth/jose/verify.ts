import { parseCompactJws, type CompactJws } from './compact.ts';
import type { KeySource, VerifyKey } from './key-source.ts';

const encoder = new TextEncoder();
const INVALID: Promise<boolean> = Promise.resolve(false);

/**
 * Verifies `signature` over `data` with one imported key: the length must be exact (full HMAC
 * tag, raw 64/96-byte ECDSA `r||s`, RSA modulus length) before Web Crypto is asked. May reject
 * when the runtime refuses the inputs; callers treat that as invalid.
 */
export function verifySignature(key: VerifyKey, signature: Uint8Array<ArrayBuffer>, data: Uint8Array<ArrayBuffer>): Promise<boolean> {
  if (signature.length !== key.signatureLength) return INVALID;
  return crypto.subtle.verify(key.algorithm.verifyParams, key.key, signature, data);
}

/**
 * The verify path: parse, pick key, verify signature. Resolves to the payload bytes of a
 * valid JWS, or `null`. Returns `null` synchronously, with no crypto, for a token that fails
 * before the signature (malformed, `alg` not allowed, `crit`).
 */
export function verifyCompactJws(token: string, algorithms: ReadonlySet<string>, source: KeySource): Promise<Uint8Array<ArrayBuffer> | null> | null {
  const jws = parseCompactJws(token);
  if (jws === null || !algorithms.has(jws.header.alg)) return null;
  return checkSignature(jws, source.keysFor(jws.header));
}

async function checkSignature(jws: CompactJws, found: readonly VerifyKey[] | Promise<readonly VerifyKey[]>): Promise<Uint8Array<ArrayBuffer> | null> {
  const keys = 'then' in found ? await found : found;
  const data = encoder.encode(jws.signingInput);
  for (const key of keys) {
    // The key decides the algorithm: a key is only ever used with the algorithm it was imported for.
    if (key.algorithm.name !== jws.header.alg) continue;
    try {
      if (await verifySignature(key, jws.signature, data)) return jws.payload;
    } catch {
      // A signature the runtime refuses to process is not a valid one.
    }
  }
  return null;
}
