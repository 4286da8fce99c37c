import { MAX_TOKEN_LENGTH, parseCompactJws, type CompactJws } from './compact.ts';
import type { KeySource, VerifyKey } from './key-source.ts';

const encoder = new TextEncoder();
const INVALID: Promise<boolean> = Promise.resolve(false);
// Web Crypto copies `data` when verify() is called, so one buffer serves every call; it is
// filled right before each call, with no await in between. The signing input is ASCII.
const signingBytes = new Uint8Array(MAX_TOKEN_LENGTH);

function encodeSigningInput(text: string): Uint8Array<ArrayBuffer> {
  return signingBytes.subarray(0, encoder.encodeInto(text, signingBytes).written);
}

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
 * The verify path: parse, pick key, verify signature. Resolves to the payload text of a
 * valid JWS, or `null`. The JWS is `token` from `start` on. Returns `null` synchronously, with no crypto, for a token that fails
 * before the signature (malformed, `alg` not allowed, `crit`).
 */
export function verifyCompactJws(token: string, algorithms: ReadonlySet<string>, source: KeySource, start = 0): Promise<string | null> | null {
  const jws = parseCompactJws(token, start);
  if (jws === null || !algorithms.has(jws.header.alg)) return null;
  return checkSignature(jws, source.keysFor(jws.header));
}

const NO_PAYLOAD: Promise<string | null> = Promise.resolve(null);

function checkSignature(jws: CompactJws, found: readonly VerifyKey[] | Promise<readonly VerifyKey[]>): Promise<string | null> {
  return 'then' in found ? found.then((keys) => tryKeys(jws, keys, 0)) : tryKeys(jws, found, 0);
}

/** Tries `keys` from `index` on, in order, until one verifies the signature; no `async` frame on the hot path. */
function tryKeys(jws: CompactJws, keys: readonly VerifyKey[], index: number): Promise<string | null> {
  for (let i = index; i < keys.length; i++) {
    const key = keys[i]!;
    // The key decides the algorithm: a key is only ever used with the algorithm it was imported for.
    if (key.algorithm.name !== jws.header.alg) continue;
    let verified: Promise<boolean>;
    try {
      verified = verifySignature(key, jws.signature, encodeSigningInput(jws.signingInput));
    } catch {
      // A signature the runtime refuses to process, by a throw or a rejection, is not a valid one.
      return tryKeys(jws, keys, i + 1);
    }
    return verified.then(
      (valid) => (valid ? jws.payload : tryKeys(jws, keys, i + 1)),
      () => tryKeys(jws, keys, i + 1),
    );
  }
  return NO_PAYLOAD;
}
