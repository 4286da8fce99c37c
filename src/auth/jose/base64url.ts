const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET.charCodeAt(i)] = i;

function sextet(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code < 128 ? (VALUES[code] as number) : -1;
}

/**
 * Strict base64url (RFC 4648 §5, RFC 7515 §2): URL alphabet only, no padding, no whitespace,
 * and canonical (the unused low bits of the last character are zero). `null` otherwise.
 */
export function decodeBase64url(text: string): Uint8Array<ArrayBuffer> | null {
  const length = text.length;
  const tail = length & 3;
  if (tail === 1) return null;
  const bytes = new Uint8Array((length * 3) >> 2);
  let out = 0;
  let i = 0;
  for (const end = length - tail; i < end; i += 4) {
    const a = sextet(text, i), b = sextet(text, i + 1), c = sextet(text, i + 2), d = sextet(text, i + 3);
    if ((a | b | c | d) < 0) return null;
    bytes[out++] = (a << 2) | (b >> 4);
    bytes[out++] = ((b & 15) << 4) | (c >> 2);
    bytes[out++] = ((c & 3) << 6) | d;
  }
  if (tail === 2) {
    const a = sextet(text, i), b = sextet(text, i + 1);
    if ((a | b) < 0 || (b & 15) !== 0) return null;
    bytes[out] = (a << 2) | (b >> 4);
  } else if (tail === 3) {
    const a = sextet(text, i), b = sextet(text, i + 1), c = sextet(text, i + 2);
    if ((a | b | c) < 0 || (c & 3) !== 0) return null;
    bytes[out++] = (a << 2) | (b >> 4);
    bytes[out] = ((b & 15) << 4) | (c >> 2);
  }
  return bytes;
}

/** Base64url without padding (RFC 7515 §2). */
export function encodeBase64url(bytes: Uint8Array): string {
  let text = '';
  let i = 0;
  for (const end = bytes.length - (bytes.length % 3); i < end; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    text += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i] as number;
    text += ALPHABET[n >> 2]! + ALPHABET[(n & 3) << 4]!;
  } else if (rest === 2) {
    const n = ((bytes[i] as number) << 8) | (bytes[i + 1] as number);
    text += ALPHABET[n >> 10]! + ALPHABET[(n >> 4) & 63]! + ALPHABET[(n & 15) << 2]!;
  }
  return text;
}
