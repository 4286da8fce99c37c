// SPDX-License-Identifier: MIT
import { sha256 } from './sha256.ts';

/**
 * The one constant-time comparison of the project: no early exit on content, so the time
 * depends on the length alone. Lengths are not secret here: compare fixed-size digests (or
 * their 32-bit words), so that length leaks nothing either.
 */
export function constantTimeEqual(a: Uint8Array | Int32Array, b: Uint8Array | Int32Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** Compares two secrets of any length in constant time, through their SHA-256 digests. */
export async function secretsEqual(a: string, b: string): Promise<boolean> {
  return constantTimeEqual(sha256(a), sha256(b));
}
