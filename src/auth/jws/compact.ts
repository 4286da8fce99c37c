// SPDX-License-Identifier: MIT
import { decodeBase64urlInto } from './base64url.ts';
import { parseJsonObject, isRecord } from './json.ts';

/** A token longer than this is skipped unread (the `Authorization` header has the same cap). */
// Sizes written out as literals: a bundler drops an unused constant only when it is one.
export const MAX_TOKEN_LENGTH = 16_384; // 16 KiB
/** The most bytes a base64url segment of a token decodes to: three per four characters. */
const MAX_DECODED_LENGTH = 12_288;

/** The protected header members the verifier acts on; `jku`, `x5u`, `jwk`, `x5c` are never read. */
export interface JwsHeader {
  readonly alg: string;
  readonly kid: string | undefined;
  /** `typ`, lower case, without an `application/` prefix (RFC 7515 §4.1.9); `undefined` when absent or not a string. */
  readonly typ?: string | undefined;
  /** `jwk`, when an object: read only for a DPoP proof, whose key it is (RFC 9449 §4.2); an access token's is ignored. */
  readonly jwk?: Readonly<Record<string, unknown>>;
}

/** A JWS compact serialization, split and decoded, its signature not yet checked. */
export interface CompactJws {
  readonly header: JwsHeader;
  /** The JWS exactly as received: `<header>.<payload>.<signature>`. */
  readonly token: string;
  /** The length of `<header>.<payload>`, the part the signature covers. */
  readonly signingLength: number;
  /** The payload, decoded from UTF-8. */
  readonly payload: string;
}

// ignoreBOM keeps a byte order mark in the text, where the JSON parser refuses it.
const utf8 = /* @__PURE__ */ new TextDecoder('utf-8', { ignoreBOM: true });
const encoder = /* @__PURE__ */ new TextEncoder();
// Scratch buffers shared by every token (allocating per token cost more than the rest of the parse):
// the ASCII bytes of one token and its decoded signature, of the parsed token `loaded`; callers read them
// through `signingInputOf`/`signatureOf`, which reload them when another token was parsed since.
// `segmentBytes` holds a decoded header or payload within one synchronous call.
// (Made by calls marked /* @__PURE__ */: a bundle that never parses a JWS leaves them out.)
const tokenBuffer = /* @__PURE__ */ new ArrayBuffer(MAX_TOKEN_LENGTH);
const tokenBytes = /* @__PURE__ */ new Uint8Array(tokenBuffer);
const tokenView = /* @__PURE__ */ new DataView(tokenBuffer);
const signatureBytes = /* @__PURE__ */ new Uint8Array(MAX_DECODED_LENGTH);
let signatureView = /* @__PURE__ */ signatureBytes.subarray(0, 0);
const segmentBytes = /* @__PURE__ */ new Uint8Array(MAX_DECODED_LENGTH);
let loaded: CompactJws | null = null;
const headerCache = new Map<string, JwsHeader | null>();
const HEADER_CACHE_SIZE = 256;

/**
 * Splits a JWS compact serialization (RFC 7515 §7.1), `text` from `start` on: exactly three
 * segments of canonical base64url, a JSON object header with a string `alg`, no `crit`, a UTF-8
 * payload and a non-empty signature. `null` for anything else, JWE's five segments included.
 * Never throws. (`start` lets a caller pass a whole `Authorization` value instead of a slice.)
 */
export function parseCompactJws(text: string, start = 0): CompactJws | null {
  const length = text.length - start;
  if (length > MAX_TOKEN_LENGTH) return null;
  const first = text.indexOf('.', start);
  const second = text.indexOf('.', first + 1);
  if (first <= start || second < 0 || text.indexOf('.', second + 1) >= 0) return null;
  loaded = null;
  const token = start === 0 ? text : text.slice(start);
  // One pass into bytes, which the decoder reads at one speed whatever the string's representation.
  const { read, written } = encoder.encodeInto(token, tokenBytes);
  if (read !== length || written !== length) return null; // not ASCII: no JWS
  const header = readHeader(text.slice(start, first), first - start);
  if (header === null) return null;
  const signingLength = second - start;
  if (!decodeSignature(signingLength + 1, length)) return null;
  const payload = readSegmentText(first + 1 - start, signingLength);
  if (payload === null) return null;
  return (loaded = { header, token, signingLength, payload });
}

/**
 * The bytes of `<header>.<payload>` of a parsed JWS, in a buffer every token shares: pass them
 * to `verify()` at once, which copies them (Web Crypto reads its inputs when called).
 */
export function signingInputOf(jws: CompactJws): Uint8Array<ArrayBuffer> {
  if (loaded !== jws) load(jws);
  return tokenBytes.subarray(0, jws.signingLength);
}

/** The decoded signature of a parsed JWS, in a buffer every token shares: as `signingInputOf`. */
export function signatureOf(jws: CompactJws): Uint8Array<ArrayBuffer> {
  if (loaded !== jws) load(jws);
  return signatureView;
}

/** Puts the bytes of `jws`, parsed earlier, back into the shared buffers. */
function load(jws: CompactJws): void {
  encoder.encodeInto(jws.token, tokenBytes);
  decodeSignature(jws.signingLength + 1, jws.token.length);
  loaded = jws;
}

/** Decodes the non-empty signature segment `tokenBytes[from, to)` into `signatureBytes`; `false` when malformed. */
function decodeSignature(from: number, to: number): boolean {
  const size = ((to - from) * 3) >> 2;
  if (size === 0) return false;
  if (signatureView.length !== size) signatureView = signatureBytes.subarray(0, size);
  return decodeBase64urlInto(tokenView, from, to, signatureView) >= 0;
}

// The decision depends on the segment text alone, so repeated headers are decoded once.
// `segment` is the text of `tokenBytes[0, end)`.
function readHeader(segment: string, end: number): JwsHeader | null {
  let header = headerCache.get(segment);
  if (header === undefined) {
    header = decodeHeader(end);
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

/** The UTF-8 text of the base64url segment `tokenBytes[from, to)`, or `null` when either layer is malformed. */
function readSegmentText(from: number, to: number): string | null {
  const length = decodeBase64urlInto(tokenView, from, to, segmentBytes);
  return length < 0 ? null : readUtf8(segmentBytes.subarray(0, length));
}

function decodeHeader(end: number): JwsHeader | null {
  const text = readSegmentText(0, end);
  if (text === null) return null;
  const members = parseJsonObject(text);
  if (members === null) return null;
  const { alg, kid, typ, jwk } = members;
  // RFC 7515 §4.1.11: no extension is understood, so any `crit` refuses the token.
  if (typeof alg !== 'string' || Object.hasOwn(members, 'crit')) return null;
  if (kid !== undefined && typeof kid !== 'string') return null;
  const header = { alg, kid, typ: typeof typ === 'string' ? mediaType(typ) : undefined };
  // Frozen with the header: dpop.ts keeps a proof key's thumbprint by this object.
  return Object.freeze(
    isRecord(jwk) ? { ...header, jwk: Object.freeze(jwk) as Readonly<Record<string, unknown>> } : header,
  );
}

/** A `typ` or `cty` value as compared (RFC 7515 §4.1.9, RFC 8725 §3.11): case-insensitive, `application/` optional. */
export function mediaType(value: string): string {
  const lower = value.toLowerCase();
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
}
