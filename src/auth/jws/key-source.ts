// SPDX-License-Identifier: MIT
import { jwsAlgorithm, type AlgorithmName, type JwsAlgorithm } from './algorithms.ts';
import type { JwsHeader } from './compact.ts';
import { describeKey, MIN_SECRET_BYTES, type PublicKeySpec } from './keys.ts';

/** A Web Crypto key bound to the one algorithm it verifies. */
export interface VerifyKey {
  readonly algorithm: JwsAlgorithm;
  readonly key: CryptoKey;
  /** Exact signature length in bytes: HMAC tag, ECDSA `r||s`, or RSA modulus length. */
  readonly signatureLength: number;
  readonly kid?: string;
}

/** Where the verifier gets the keys for a header's `alg` and `kid`: static sources answer synchronously once imported, key sets may fetch. */
export interface KeySource {
  keysFor(header: JwsHeader): readonly VerifyKey[] | Promise<readonly VerifyKey[]>;
  /** Whether `key` is still in the current, fresh key set (a cached token's check); a static source always holds its key. */
  holds?(key: VerifyKey): boolean;
}

/**
 * A key asked to verify for an algorithm it cannot serve (`code` `AGENT_AUTH_KEY_UNFIT`). The
 * callers check first (`jwt()` its options at creation, a key set and a DPoP proof each key
 * before importing it), so only a bug of agentward throws it; the token then skips, with a
 * warning. Here in src/auth/jws, which imports nothing of the rest of auth (design §30).
 */
export class KeyUnfitError extends TypeError {
  readonly code = 'AGENT_AUTH_KEY_UNFIT' as const;

  constructor(message: string) {
    super(message);
    this.name = 'KeyUnfitError';
  }
}

/** No key: a token that needs one skips. */
export const NO_KEYS: readonly VerifyKey[] = /* @__PURE__ */ Object.freeze([]);
/** No key because the key set (or discovery) could not be fetched: a skip, told apart for `onRefused`. */
export const KEY_SET_UNAVAILABLE: readonly VerifyKey[] = /* @__PURE__ */ Object.freeze([]);

/** A key the runtime would not import (no Ed25519 or P-521 there, or a key it refuses): its tokens skip; one warning per algorithm and source. */
export function importFailed(algorithm: JwsAlgorithm, error: unknown, warned: Set<string>): readonly VerifyKey[] {
  if (!warned.has(algorithm.name)) {
    warned.add(algorithm.name);
    const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    console.warn(
      `agentward: this runtime did not import a key for ${algorithm.name} (${why}); tokens that need it skip`,
    );
  }
  return NO_KEYS;
}

export async function importVerifyKey(spec: PublicKeySpec, algorithm: JwsAlgorithm): Promise<VerifyKey> {
  if (!spec.algorithms.includes(algorithm.name))
    throw new KeyUnfitError(`importVerifyKey(): the algorithm ${algorithm.name} does not fit ${describeKey(spec)}`);
  // A PEM key too: its members were checked and re-encoded as a JWK, so one import path serves both
  // forms (an RSA key imported from SPKI verified no faster: docs/design.md §30, "Speed tricks and what they bought").
  const key = await crypto.subtle.importKey('jwk', spec.jwk, algorithm.importParams, false, ['verify']);
  const signatureLength = algorithm.signatureLength ?? Math.ceil((spec.bits as number) / 8);
  return Object.freeze(
    spec.kid === undefined ? { algorithm, key, signatureLength } : { algorithm, key, signatureLength, kid: spec.kid },
  );
}

export async function importHmacVerifyKey(
  secret: Uint8Array<ArrayBuffer>,
  algorithm: JwsAlgorithm,
): Promise<VerifyKey> {
  if (secret.length < MIN_SECRET_BYTES)
    throw new KeyUnfitError(
      `importHmacVerifyKey(): an HMAC key must be at least ${MIN_SECRET_BYTES} bytes; got ${secret.length} bytes`,
    );
  if (algorithm.kty !== 'oct')
    throw new KeyUnfitError(
      `importHmacVerifyKey(): a secret verifies only HMAC algorithms (HS256, HS384, HS512); got ${algorithm.name}`,
    );
  const key = await crypto.subtle.importKey('raw', secret, algorithm.importParams, false, ['verify']);
  return Object.freeze({ algorithm, key, signatureLength: algorithm.signatureLength as number });
}

/**
 * One configured key, imported once per allowed algorithm on first use (Workers forbid async
 * work at start-up) and shared by every later request. A failed import is a skip with one warning.
 */
export function staticKeySource(
  algorithms: readonly AlgorithmName[],
  load: (algorithm: JwsAlgorithm) => Promise<VerifyKey>,
): KeySource {
  const slots = new Map<string, { keys?: readonly VerifyKey[]; pending?: Promise<readonly VerifyKey[]> }>();
  const warned = new Set<string>();
  for (const name of algorithms) slots.set(name, {});
  return {
    keysFor(header) {
      const slot = slots.get(header.alg);
      if (slot === undefined) return NO_KEYS;
      if (slot.keys !== undefined) return slot.keys;
      const algorithm = jwsAlgorithm(header.alg) as JwsAlgorithm;
      return (slot.pending ??= load(algorithm).then(
        (key) => (slot.keys = Object.freeze([key])),
        (error: unknown) => (slot.keys = importFailed(algorithm, error, warned)),
      ));
    },
  };
}
