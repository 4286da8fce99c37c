// SPDX-License-Identifier: MIT
import { throwConfigError } from './errors.ts';
import { checkOptionNames, isNumberIn } from './options.ts';
import type { KeySource, VerifyKey } from './jws/key-source.ts';
import type { Principal } from './types.ts';

/** A verified token kept for its next use (design §13): crypto and claims, never a mapper's answer. */
export interface CachedToken {
  readonly claims: Readonly<Record<string, unknown>>;
  readonly key: VerifyKey;
  /** The default principal; `undefined` with a mapper, which runs on every hit. */
  readonly principal: Principal | undefined;
  /** A DPoP-bound token's `ath` (its SHA-256), set on its first cached use. */
  ath?: string;
}

/** Checks `cache`: `true` is 1,000 tokens, `{ maxEntries }` 1 to 100,000; 0 when off. */
export function readCacheSize(helper: string, value: unknown): number {
  if (value === undefined || value === false) return 0;
  if (typeof value === 'object' && value !== null) checkOptionNames(`${helper}: cache`, value, ['maxEntries']);
  const size = value === true ? 1_000 : (value as { maxEntries?: unknown } | null)?.maxEntries;
  if (!isNumberIn(size, 1, 100_000, true)) {
    throwConfigError(helper, 'cache must be true, false or { maxEntries } with an integer from 1 to 100000');
  }
  return size as number;
}

export interface TokenCache {
  /** The token if it is still in time at `now` (seconds) and its key still in the set; else it is dropped. */
  take(token: string, now: number, tolerance: number, source: KeySource): CachedToken | undefined;
  put(token: string, cached: CachedToken): void;
}

/** The verified tokens of one entry by their exact text, least recently used first (a `Map` keeps insertion order). */
export function tokenCache(size: number): TokenCache {
  const tokens = new Map<string, CachedToken>();
  return {
    take(token, now, tolerance, source) {
      const hit = tokens.get(token);
      if (hit === undefined) return undefined;
      tokens.delete(token);
      const { exp, nbf } = hit.claims as { exp: number; nbf?: number };
      if (now - tolerance >= exp || (nbf !== undefined && nbf > now + tolerance) || source.holds?.(hit.key) === false)
        return undefined;
      tokens.set(token, hit);
      return hit;
    },
    put(token, cached) {
      if (tokens.size >= size) tokens.delete(tokens.keys().next().value as string);
      tokens.set(token, cached);
    },
  };
}
