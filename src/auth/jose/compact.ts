import { decodeBase64url, decodeBase64urlInto } from './base64url.ts';
import { parseJsonObject } from './json.ts';

/** A token longer than this is skipped unread (the `Authorization` header has the same cap). */
export const MAX_TOKEN_LENGTH = 16 * 1024;

/** The protected header members the verifier acts on; `jku`, `x5u`, `jwk`, `x5c` are never read. */
export interface JwsHeader {
  readonly alg: string;
  readonly kid: string | undefined;
}

/** A JWS compact serialization, split and decoded, its signature not yet checked. */
export interface CompactJws {
  readonly header: JwsHeader;
  /** `<header>.<payload>` exactly as received: the bytes the signature covers. */
  readonly signingInput: string;
  /** The payload, decoded from UTF-8. */
  readonly payload: string;
  readonly signature: Uint8Array<ArrayBuffer>;
}

// ignoreBOM keeps a byte order mark in the text, where the JSON parser refuses it.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
const encoder = new TextEncoder();
// Payload bytes live here only until they are decoded to text, in the same synchronous call.
const payloadBytes = new Uint8Array((MAX_TOKEN_LENGTH * 3) >> 2);
const headerCache = new Map<string, JwsHeader | null>();
const HEADER_CACHE_SIZE = 256;

/**
 * Splits a JWS compact serialization (RFC 7515 §7.1): exactly three segments of canonical
 * base64url, a JSON object header with a string `alg`, no `crit`, a UTF-8 payload and a non-empty signature.
 * `null` for anything else, JWE's five segments included. Never throws.
 */
export function parseCompactJws(token: string): CompactJws | null {
  if (token.length > MAX_TOKEN_LENGTH) return null;
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  if (first <= 0 || second < 0 || token.indexOf('.', second + 1) >= 0) return null;
  const header = readHeader(token.slice(0, first));
  if (header === null) return null;
  const signature = decodeBase64url(token.slice(second + 1));
  if (signature === null || signature.length === 0) return null;
  const payloadLength = decodeBase64urlInto(token.slice(first + 1, second), payloadBytes);
  const payload = payloadLength < 0 ? null : readUtf8(payloadBytes.subarray(0, payloadLength));
  if (payload === null) return null;
  return { header, signingInput: token.slice(0, second), payload, signature };
}

// The decision depends on the segment text alone, so repeated headers are decoded once.
function readHeader(segment: string): JwsHeader | null {
  let header = headerCache.get(segment);
  if (header === undefined) {
    header = decodeHeader(segment);
    if (headerCache.size >= HEADER_CACHE_SIZE) headerCache.clear();
    headerCache.set(segment, header);
  }
  return header;
}

/** UTF-8 text of `bytes`, or `null` when they are not valid UTF-8. Never throws. */
function readUtf8(bytes: Uint8Array): string | null {
  const text = utf8.decode(bytes);
  if (!text.includes('\uFFFD')) return text;
  // U+FFFD is either in the bytes or stands for an invalid sequence: only the first re-encodes to the same bytes.
  const again = encoder.encode(text);
  return again.length === bytes.length && again.every((byte, i) => byte === bytes[i]) ? text : null;
}

function decodeHeader(segment: string): JwsHeader | null {
  const bytes = decodeBase64url(segment);
  const text = bytes === null ? null : readUtf8(bytes);
  if (text === null) return null;
  const members = parseJsonObject(text);
  if (members === null) return null;
  const { alg, kid } = members;
  // RFC 7515 §4.1.11: no extension is understood, so any `crit` refuses the token.
  if (typeof alg !== 'string' || Object.hasOwn(members, 'crit')) return null;
  if (kid !== undefined && typeof kid !== 'string') return null;
  return Object.freeze({ alg, kid });
}
