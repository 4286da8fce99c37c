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
 * May throw or reject when the runtime refuses the inputs; callers treat that as invalid.
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
export function verifiedKey<R extends string>(
  jws: CompactJws,
  source: KeySource,
  refuse?: Refuse<R | JwsRefusal>,
): Promise<VerifyKey | null> {
  const found = source.keysFor(jws.header);
  // A promise chain, not `async`/`await`: the frames cost a valid HS256 token more than the 3% the
  // verify path may spend; a static source, once imported, answers at once (docs/design.md §30,
  // "Speed tricks and what they bought").
  return Array.isArray(found)
    ? firstVerifying(jws, found as readonly VerifyKey[], 0, refuse)
    : (found as Promise<readonly VerifyKey[]>).then((keys) => firstVerifying(jws, keys, 0, refuse));
}

/** The first of `keys`, from `index` on, whose signature verifies (`null` after telling `refuse` why). */
function firstVerifying<R extends string>(
  jws: CompactJws,
  keys: readonly VerifyKey[],
  index: number,
  refuse?: Refuse<R | JwsRefusal>,
): Promise<VerifyKey | null> {
  for (let i = index; i < keys.length; i++) {
    const key = keys[i] as VerifyKey;
    if (key.algorithm.name !== jws.header.alg) continue;
    const next = () => firstVerifying(jws, keys, i + 1, refuse);
    try {
      // A signature the runtime refuses to process, by a throw or a rejection, is not a valid one.
      return verifySignature(key, signatureOf(jws), signingInputOf(jws)).then((valid) => (valid ? key : next()), next);
    } catch {
      return next();
    }
  }
  const tried = index > 0 || keys.some((key) => key.algorithm.name === jws.header.alg);
  return Promise.resolve(
    skip(refuse, keys === KEY_SET_UNAVAILABLE ? 'key-set-unavailable' : tried ? 'signature' : 'no-key', jws),
  );
}
