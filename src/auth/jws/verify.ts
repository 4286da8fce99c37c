// SPDX-License-Identifier: MIT
import { parseCompactJws, signatureOf, signingInputOf, type CompactJws } from './compact.ts';
import { KEY_SET_UNAVAILABLE, type KeySource, type VerifyKey } from './key-source.ts';

/** Why the verify path refused a token before its claims were read. */
export type JwsRefusal = 'malformed' | 'alg-not-allowed' | 'type' | 'key-set-unavailable' | 'no-key' | 'signature';

/** Hears why a token was refused (with the parsed JWS when there is one) and answers the skip, `null`. */
export type Refuse<R extends string = JwsRefusal> = (
  reason: R,
  jws: CompactJws | null,
  claims?: Readonly<Record<string, unknown>>,
) => null;

/** What the header must satisfy before any key is looked up. */
export interface HeaderPolicy {
  readonly algorithms: ReadonlySet<string>;
  /** The required `typ`, as `mediaType()` gives it; `undefined`: any. */
  readonly typ: string | undefined;
}

/** `null`, after telling `refuse` why, when there is a listener: no allocation without one. */
export function skip<R extends string>(
  refuse: Refuse<R> | undefined,
  reason: R,
  jws: CompactJws | null,
  claims?: Readonly<Record<string, unknown>>,
): null {
  return refuse === undefined ? null : refuse(reason, jws, claims);
}

/**
 * Verifies `signature` over `data` with one imported key: the length must be exact (full HMAC
 * tag, raw ECDSA `r||s`, Ed25519's 64 bytes, RSA modulus length) before Web Crypto is asked
 * (`false` at once otherwise). May throw or reject when the runtime refuses the inputs; callers
 * treat that as invalid.
 */
export function verifySignature(
  key: VerifyKey,
  signature: Uint8Array<ArrayBuffer>,
  data: Uint8Array<ArrayBuffer>,
): Promise<boolean> | false {
  // verify() takes a copy of the bytes of `signature` and `data` before it returns (its first
  // steps in the Web Cryptography API), so they may sit in buffers the next token overwrites.
  // A test checks this on every runtime.
  return (
    signature.length === key.signatureLength &&
    crypto.subtle.verify(key.algorithm.verifyParams, key.key, signature, data)
  );
}

/**
 * The first steps of the verify path: parse, then the header (`alg` allowed, `typ`). The JWS is
 * `token` from `start` on; `null` for a token refused here, with no crypto and no promise.
 */
export function readCompactJws<R extends string>(
  token: string,
  start: number,
  policy: HeaderPolicy,
  refuse?: Refuse<R | JwsRefusal>,
): CompactJws | null {
  const jws = parseCompactJws(token, start);
  if (jws === null) return skip(refuse, 'malformed', null);
  if (!policy.algorithms.has(jws.header.alg)) return skip(refuse, 'alg-not-allowed', jws);
  if (policy.typ !== undefined && jws.header.typ !== policy.typ) return skip(refuse, 'type', jws);
  return jws;
}

/**
 * Picks the keys for the header and tries them in order: the key whose signature verifies, or
 * `null` after telling `refuse` why (`key-set-unavailable`, `no-key`, `signature`). The key
 * decides the algorithm: a key is only ever used with the algorithm it was imported for.
 */
export async function verifiedKey<R extends string>(
  jws: CompactJws,
  source: KeySource,
  refuse?: Refuse<R | JwsRefusal>,
): Promise<VerifyKey | null> {
  const found = source.keysFor(jws.header);
  // A static source, once imported, answers at once: not awaited (docs/design.md §30, "Speed tricks and what they bought").
  const keys = Array.isArray(found) ? (found as readonly VerifyKey[]) : await found;
  let tried = false;
  for (const key of keys) {
    if (key.algorithm.name !== jws.header.alg) continue;
    tried = true;
    try {
      if (await verifySignature(key, signatureOf(jws), signingInputOf(jws))) return key;
    } catch {
      // A signature the runtime refuses to process, by a throw or a rejection, is not a valid one.
    }
  }
  return skip(refuse, keys === KEY_SET_UNAVAILABLE ? 'key-set-unavailable' : tried ? 'signature' : 'no-key', jws);
}
