// SPDX-License-Identifier: MIT
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
// Sextet value of each byte, 64 for bytes outside the URL alphabet (every byte over 127 among them).
// Module values are made by calls marked /* @__PURE__ */: a bundle that does not use them leaves them out.
const VALUES = /* @__PURE__ */ (() => {
  const values = new Uint8Array(256).fill(64);
  for (let i = 0; i < ALPHABET.length; i++) values[ALPHABET.charCodeAt(i)] = i;
  return values;
})();
const encoder = /* @__PURE__ */ new TextEncoder();

/**
 * Strict base64url (RFC 4648 §5, RFC 7515 §2): URL alphabet only, no padding, no whitespace,
 * and canonical (the unused low bits of the last character are zero). `null` otherwise.
 */
export function decodeBase64url(text: string): Uint8Array<ArrayBuffer> | null {
  // Non-ASCII text becomes bytes over 127, which are outside the alphabet.
  const ascii = encoder.encode(text);
  const bytes = new Uint8Array((ascii.length * 3) >> 2);
  return decodeBase64urlInto(new DataView(ascii.buffer, ascii.byteOffset, ascii.length), 0, ascii.length, bytes) < 0
    ? null
    : bytes;
}

/**
 * `decodeBase64url` of the ASCII bytes of `text` from `start` to `end`, into `bytes` (at least
 * `⌊3·(end-start)/4⌋` long): the number of bytes written, or -1. Reading bytes rather than a
 * string keeps the speed independent of how the engine happens to store the string.
 */
export function decodeBase64urlInto(text: DataView, start: number, end: number, bytes: Uint8Array): number {
  const tail = (end - start) & 3;
  if (tail === 1) return -1;
  let invalid = 0;
  let out = 0;
  let i = start;
  for (const last = end - tail; i < last; i += 4) {
    // One 32-bit read per four characters, little-endian whatever the host: the first is the low byte.
    const word = text.getUint32(i, true);
    const a = VALUES[word & 255]!,
      b = VALUES[(word >> 8) & 255]!,
      c = VALUES[(word >> 16) & 255]!,
      d = VALUES[word >>> 24]!;
    invalid |= a | b | c | d;
    bytes[out] = (a << 2) | (b >> 4);
    bytes[out + 1] = (b << 4) | (c >> 2);
    bytes[out + 2] = (c << 6) | d;
    out += 3;
  }
  if (tail !== 0) {
    const a = VALUES[text.getUint8(i)]!,
      b = VALUES[text.getUint8(i + 1)]!,
      c = tail === 3 ? VALUES[text.getUint8(i + 2)]! : 0;
    // The bits after the last whole byte must be zero: one encoding per byte string.
    invalid |= a | b | c | ((tail === 2 ? b & 15 : c & 3) + 63);
    bytes[out++] = (a << 2) | (b >> 4);
    if (tail === 3) bytes[out++] = (b << 4) | (c >> 2);
  }
  return invalid & 64 ? -1 : out;
}

/** Base64url without padding (RFC 7515 §2). */
export function encodeBase64url(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Standard base64 with its padding (RFC 4648 §4: HTTP Basic, PEM bodies), no whitespace; `null` otherwise. */
export function decodeBase64(text: string): Uint8Array<ArrayBuffer> | null {
  if (!BASE64.test(text)) return null;
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
