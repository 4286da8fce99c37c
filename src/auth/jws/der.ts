// SPDX-License-Identifier: MIT
// The one DER reader of the key code: SubjectPublicKeyInfo, PKCS#1 and X.509 all go through it.

export interface Tlv {
  readonly start: number;
  readonly end: number;
}

/** One DER element with `tag` (any tag: -1) at `offset`: definite, minimal length, inside `limit`. */
export function readTlv(der: Uint8Array, offset: number, tag: number, limit: number): Tlv | null {
  if (offset + 2 > limit || (tag >= 0 && der[offset] !== tag)) return null;
  let length = der[offset + 1] as number;
  let start = offset + 2;
  if (length >= 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 3 || start + count > limit || der[start] === 0) return null;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (der[start + i] as number);
    if (length < 0x80) return null;
    start += count;
  }
  const end = start + length;
  return end <= limit ? { start, end } : null;
}

export function bytesEqual(der: Uint8Array, tlv: Tlv, expected: readonly number[]): boolean {
  if (tlv.end - tlv.start !== expected.length) return false;
  return expected.every((byte, i) => der[tlv.start + i] === byte);
}

/** PKCS#1 RSAPublicKey (RFC 8017 A.1.1) filling `der[start, end)`: the unsigned bytes of `n` and `e`, or `null`. */
export function readRsaPublicKey(der: Uint8Array, start: number, end: number): { n: Uint8Array; e: Uint8Array } | null {
  const sequence = readTlv(der, start, 0x30, end);
  if (sequence === null || sequence.end !== end) return null;
  const n = readTlv(der, sequence.start, 0x02, sequence.end);
  const e = n && readTlv(der, n.end, 0x02, sequence.end);
  // A DER INTEGER with its top bit set is negative: no modulus or exponent is.
  if (
    n === null ||
    e === null ||
    e.end !== sequence.end ||
    (der[n.start] as number) >= 0x80 ||
    (der[e.start] as number) >= 0x80
  )
    return null;
  return { n: der.subarray(n.start, n.end), e: der.subarray(e.start, e.end) };
}

/**
 * The SubjectPublicKeyInfo of an X.509 certificate (RFC 5280 §4.1), or `null`. Only the key is
 * read: validity dates, issuer and signature are not checked (design §12).
 */
export function certificateSpki(der: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> | null {
  const certificate = readTlv(der, 0, 0x30, der.length);
  const tbs = certificate && readTlv(der, certificate.start, 0x30, certificate.end);
  if (certificate === null || certificate.end !== der.length || tbs === null) return null;
  let at = tbs.start;
  if (der[at] === 0xa0) at = readTlv(der, at, 0xa0, tbs.end)?.end ?? tbs.end; // [0] version
  // serialNumber, signature, issuer, validity, subject
  for (const tag of [0x02, 0x30, 0x30, 0x30, 0x30]) {
    const element = readTlv(der, at, tag, tbs.end);
    if (element === null) return null;
    at = element.end;
  }
  const spki = readTlv(der, at, 0x30, tbs.end);
  return spki === null ? null : der.slice(at, spki.end);
}
