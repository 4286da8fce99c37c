// SPDX-License-Identifier: MIT
// Values that cannot be secrets (design §26): the words an unset or mistyped variable turns into
// (an unset variable in a template literal is the text "undefined"), and values too short to
// withstand guessing.

const SPELLED_VALUES = /^(?:undefined|null|nan|true|false|\[object object\])$/i;

/**
 * Why `value` cannot be a secret of at least `min` characters, said without showing it (it may be
 * one), or `undefined` when it can: `apiToken()` tokens and `AGENT_API_TOKEN` (16), `basic()`
 * passwords (8, NIST SP 800-63B's minimum).
 * @example
 * notASecret('undefined', 16); // 'is what an unset or mistyped variable turns into, not a secret'
 */
export function notASecret(value: string, min: number): string | undefined {
  if (SPELLED_VALUES.test(value)) return 'is what an unset or mistyped variable turns into, not a secret';
  const length = [...value].length;
  return length < min ? `must be at least ${min} characters (got ${length})` : undefined;
}

/** Modulus sizes RSA keys are made with, in bytes: 2048, 3072, 4096, 6144 and 8192 bits. */
const RSA_MODULUS_BYTES = [256, 384, 512, 768, 1024];

/**
 * Whether `text` is the `n` of an RSA JWK (design §26): base64url (not hex digits alone) of a
 * modulus of 2048, 3072, 4096, 6144 or 8192 bits, its top bit set, odd, and with no prime factor
 * under 10,000 (a modulus is the product of two large primes). Published with the key, so used as
 * an HMAC secret it lets anyone sign tokens. A random secret of exactly those lengths, as
 * base64url, passes all of it rarely (about 3 in 100); of any other length, or as hex, never.
 */
export function isRsaModulusText(text: string): boolean {
  if (!/^[A-Za-z0-9_-]+$/.test(text) || /^[0-9a-fA-F]+$/.test(text) || text.length % 4 === 1) return false;
  const bytes = Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (char) => char.charCodeAt(0));
  if (!RSA_MODULUS_BYTES.includes(bytes.length) || bytes[0]! < 0x80 || bytes.at(-1)! % 2 === 0) return false;
  // Every odd divisor under 10,000 (the composite ones repeat a prime's answer): a few milliseconds, once, at creation.
  for (let divisor = 3; divisor < 10_000; divisor += 2) {
    let remainder = 0;
    for (const byte of bytes) remainder = (remainder * 256 + byte) % divisor;
    if (remainder === 0) return false;
  }
  return true;
}
