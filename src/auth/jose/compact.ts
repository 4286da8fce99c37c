import { decodeBase64url } from './base64url.ts';
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
  readonly payload: Uint8Array<ArrayBuffer>;
  readonly signature: Uint8Array<ArrayBuffer>;
}

// ignoreBOM keeps a byte order mark in the text, where the JSON parser refuses it.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
const headerCache = new Map<string, JwsHeader | null>();
const HEADER_CACHE_SIZE = 256;

/**
 * Splits a JWS compact serialization (RFC 7515 §7.1): exactly three segments of canonical
 * base64url, a JSON object header with a string `alg`, no `crit`, and a non-empty signature.
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
  const payload = decodeBase64url(token.slice(first + 1, second));
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

function decodeHeader(segment: string): JwsHeader | null {
  const bytes = decodeBase64url(segment);
  if (bytes === null) return null;
  const text = utf8.decode(bytes);
  // A replacement character means invalid UTF-8 (a header has no reason to carry U+FFFD itself).
  if (text.includes('\uFFFD')) return null;
  const members = parseJsonObject(text);
  if (members === null) return null;
  const { alg, kid } = members;
  // RFC 7515 §4.1.11: no extension is understood, so any `crit` refuses the token.
  if (typeof alg !== 'string' || Object.hasOwn(members, 'crit')) return null;
  if (kid !== undefined && typeof kid !== 'string') return null;
  return Object.freeze({ alg, kid });
}
