// SPDX-License-Identifier: MIT
// The answers introspection() keeps (design §17): by the token's SHA-256, never the token itself.
import { throwConfigError } from './errors.ts';
import { encodeBase64url } from './jws/base64url.ts';
import { checkOptionNames, isNumberIn } from './options.ts';
import { sha256 } from './sha256.ts';
import type { Principal } from './types.ts';

/**
 * A kept answer until `until` (seconds): the claims, or `inactive`; `principal` once an unbound
 * token passed every check with the default principal, so a repeat Bearer request is one lookup.
 */
export interface Kept {
  readonly answer: Readonly<Record<string, unknown>> | 'inactive';
  readonly until: number;
  principal?: Principal;
}

/**
 * The cache key: the token's SHA-256 as 16 UTF-16 code units, two bytes each (the token itself is
 * not kept): half the units of a byte per unit (docs/design.md §30, "Speed tricks and what they bought").
 */
export function digestKey(token: string): string {
  const d = sha256(token);
  return String.fromCharCode(
    (d[0]! << 8) | d[1]!,
    (d[2]! << 8) | d[3]!,
    (d[4]! << 8) | d[5]!,
    (d[6]! << 8) | d[7]!,
    (d[8]! << 8) | d[9]!,
    (d[10]! << 8) | d[11]!,
    (d[12]! << 8) | d[13]!,
    (d[14]! << 8) | d[15]!,
    (d[16]! << 8) | d[17]!,
    (d[18]! << 8) | d[19]!,
    (d[20]! << 8) | d[21]!,
    (d[22]! << 8) | d[23]!,
    (d[24]! << 8) | d[25]!,
    (d[26]! << 8) | d[27]!,
    (d[28]! << 8) | d[29]!,
    (d[30]! << 8) | d[31]!,
  );
}

/** The `ath` (RFC 9449) of the token whose `digestKey()` is `key`: the same SHA-256, so the token is hashed once. */
export function athOf(key: string): string {
  const digest = new Uint8Array(32);
  for (let i = 0; i < 16; i++) {
    const unit = key.charCodeAt(i);
    digest[2 * i] = unit >> 8;
    digest[2 * i + 1] = unit & 0xff;
  }
  return encodeBase64url(digest);
}

/** Checks the `cache` option: `false`, or `{ maxEntries?, maxAgeSec? }` (default 1,000 answers for at most 60 s). */
export function readCache(value: unknown): { maxEntries: number; maxAgeSec: number } | undefined {
  if (value === false) return undefined;
  if (value !== undefined && (typeof value !== 'object' || value === null))
    throwConfigError('introspection()', 'cache must be false or { maxEntries?, maxAgeSec? }');
  checkOptionNames('introspection(): cache', value ?? {}, ['maxEntries', 'maxAgeSec']);
  const { maxEntries = 1000, maxAgeSec = 60 } = (value ?? {}) as { maxEntries?: unknown; maxAgeSec?: unknown };
  if (!isNumberIn(maxEntries, 1, 100_000, true))
    throwConfigError('introspection()', 'cache.maxEntries must be an integer from 1 to 100000');
  if (!isNumberIn(maxAgeSec, 1, 3600))
    throwConfigError('introspection()', 'cache.maxAgeSec must be a number of seconds from 1 to 3600');
  return { maxEntries: maxEntries as number, maxAgeSec };
}
