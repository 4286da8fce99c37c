// SPDX-License-Identifier: MIT
import { parseCompactJws, signatureOf, signingInputOf, type CompactJws } from './compact.ts';
import { KEY_SET_UNAVAILABLE, type KeySource, type VerifyKey } from './key-source.ts';

const INVALID: Promise<boolean> = /* @__PURE__ */ Promise.resolve(false);

/** Why the verify path refused a token before its claims were read. */
export type JwsRefusal = 'malformed' | 'alg-not-allowed' | 'type' | 'key-set-unavailable' | 'no-key' | 'signature';

/** Hears why a token was refused (with the parsed JWS when there is one) and answers the skip, `null`. */
export type Refuse<R extends string = JwsRefusal> = (
  reason: R,
  jws: CompactJws | null,
  claims?: Readonly<Record<string, unknown>>,
) => null;

/** Takes a JWS whose signature `key` verified: the caller's claims checks and principal. */
export type Accept<T, R extends string = JwsRefusal> = (
  jws: CompactJws,
  refuse: Refuse<R> | undefined,
  key: VerifyKey,
) => T;

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
 * tag, raw ECDSA `r||s`, Ed25519's 64 bytes, RSA modulus length) before Web Crypto is asked.
 * May reject when the runtime refuses the inputs; callers treat that as invalid.
 */
export function verifySignature(
  key: VerifyKey,
  signature: Uint8Array<ArrayBuffer>,
  data: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  if (signature.length !== key.signatureLength) return INVALID;
  // verify() takes a copy of the bytes of `signature` and `data` before it returns (its first
  // steps in the Web Cryptography API), so they may sit in buffers the next token overwrites.
  // A test checks this on every runtime.
  return crypto.subtle.verify(key.algorithm.verifyParams, key.key, signature, data);
}

/**
 * The verify path: parse, check the header, pick key, verify signature, then `accept` the valid
 * JWS (the caller checks the claims there); resolves to what `accept` returns, or `null`. The JWS
 * is `token` from `start` on. Returns `null` synchronously, with no crypto, for a token that
 * fails before the signature (malformed, `alg` not allowed, `crit`, `typ`).
 */
export function verifyCompactJws<T, R extends string = JwsRefusal>(
  token: string,
  start: number,
  policy: HeaderPolicy,
  source: KeySource,
  accept: Accept<T, R | JwsRefusal>,
  refuse?: Refuse<R | JwsRefusal>,
): Promise<Awaited<T> | null> | null {
  const jws = parseCompactJws(token, start);
  if (jws === null) return skip(refuse, 'malformed', null);
  if (!policy.algorithms.has(jws.header.alg)) return skip(refuse, 'alg-not-allowed', jws);
  if (policy.typ !== undefined && jws.header.typ !== policy.typ) return skip(refuse, 'type', jws);
  const found = source.keysFor(jws.header);
  if (Array.isArray(found)) return tryKeys(jws, found as readonly VerifyKey[], 0, accept, refuse);
  return whenKeys(found as Promise<readonly VerifyKey[]>, jws, accept, refuse);
}

// Its own function: a closure in verifyCompactJws made every call allocate its context, skips
// included (measured on Node 22, one script: 152 bytes per malformed skip instead of 96).
function whenKeys<T, R extends string>(
  found: Promise<readonly VerifyKey[]>,
  jws: CompactJws,
  accept: Accept<T, R | JwsRefusal>,
  refuse: Refuse<R | JwsRefusal> | undefined,
): Promise<Awaited<T> | null> {
  return found.then((keys) => tryKeys(jws, keys, 0, accept, refuse));
}

const NOT_VERIFIED: Promise<null> = /* @__PURE__ */ Promise.resolve(null);

/** Tries `keys` from `index` on, in order, until one verifies the signature; one promise per key, no `async` frame. */
function tryKeys<T, R extends string>(
  jws: CompactJws,
  keys: readonly VerifyKey[],
  index: number,
  accept: Accept<T, R | JwsRefusal>,
  refuse: Refuse<R | JwsRefusal> | undefined,
): Promise<Awaited<T> | null> {
  for (let i = index; i < keys.length; i++) {
    const key = keys[i]!;
    // The key decides the algorithm: a key is only ever used with the algorithm it was imported for.
    if (key.algorithm.name !== jws.header.alg) continue;
    let verified: Promise<boolean>;
    try {
      verified = verifySignature(key, signatureOf(jws), signingInputOf(jws));
    } catch {
      // A signature the runtime refuses to process, by a throw or a rejection, is not a valid one.
      return tryKeys(jws, keys, i + 1, accept, refuse);
    }
    // What `accept` throws is the caller's (a mapper's AuthError), never another key's turn.
    return verified.then(
      (valid) => (valid ? accept(jws, refuse, key) : tryKeys(jws, keys, i + 1, accept, refuse)),
      () => tryKeys(jws, keys, i + 1, accept, refuse),
    ) as Promise<Awaited<T> | null>;
  }
  if (refuse === undefined) return NOT_VERIFIED;
  const reason =
    keys === KEY_SET_UNAVAILABLE
      ? 'key-set-unavailable'
      : index === 0 && !keys.some((key) => key.algorithm.name === jws.header.alg)
        ? 'no-key'
        : 'signature';
  return Promise.resolve(refuse(reason, jws));
}
