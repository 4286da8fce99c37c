import { algorithmsFor, jwsAlgorithm, type AlgorithmName, type JwsAlgorithm, type NamedCurve } from './algorithms.ts';
import { decodeBase64, decodeBase64url } from './base64url.ts';

/** A public key checked against the key rules, ready to import for each algorithm it allows. */
export interface PublicKeySpec {
  readonly kty: 'RSA' | 'EC';
  readonly curve?: NamedCurve;
  /** RSA modulus size in bits. */
  readonly bits?: number;
  /** The algorithms this key may verify: its family (its curve for EC), narrowed by a JWK `alg`. */
  readonly algorithms: readonly AlgorithmName[];
  readonly kid?: string;
  /** The key as DER SubjectPublicKeyInfo: the one format every key is imported from. */
  readonly spki: Uint8Array<ArrayBuffer>;
}

export const MIN_RSA_BITS = 2048;
export const MIN_SECRET_BYTES = 32;

const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
const COORDINATE_BYTES: Readonly<Record<NamedCurve, number>> = { 'P-256': 32, 'P-384': 48 };

/** A `publicKey` option: PEM `BEGIN PUBLIC KEY` text or a public JWK. A string result is why it was refused. */
export function readPublicKey(value: unknown): PublicKeySpec | string {
  if (typeof value === 'string') return readSpkiPem(value);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return readPublicJwk(value);
  return 'must be a PEM public key (BEGIN PUBLIC KEY) or a JWK object';
}

const PEM_BLOCK = /^-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]+)-----END PUBLIC KEY-----$/;
const PEM_KINDS: Readonly<Record<string, string>> = {
  CERTIFICATE: 'a certificate',
  'RSA PUBLIC KEY': 'a PKCS#1 RSA public key',
  'PRIVATE KEY': 'a private key',
  'RSA PRIVATE KEY': 'a private key',
  'EC PRIVATE KEY': 'a private key',
  'ENCRYPTED PRIVATE KEY': 'a private key',
};

/** PEM text holding one SubjectPublicKeyInfo (`BEGIN PUBLIC KEY`). */
export function readSpkiPem(pem: string): PublicKeySpec | string {
  const begin = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem);
  if (begin === null) return 'must be a PEM public key (BEGIN PUBLIC KEY) or a JWK object';
  const label = begin[1] as string;
  if (label !== 'PUBLIC KEY') {
    const kind = Object.hasOwn(PEM_KINDS, label) ? PEM_KINDS[label] : 'another PEM type';
    return `must be a PEM "BEGIN PUBLIC KEY" (SubjectPublicKeyInfo); got ${kind} (BEGIN ${label})`;
  }
  const match = PEM_BLOCK.exec(pem.trim());
  const body = match === null ? '' : (match[1] as string).replace(/\s+/g, '');
  const der = decodeBase64(body);
  if (match === null || der === null) return 'is not a well-formed PEM block (BEGIN PUBLIC KEY, base64, END PUBLIC KEY)';
  return readSpki(der);
}

interface Tlv {
  readonly start: number;
  readonly end: number;
}

/** One DER element with `tag` at `offset`: definite, minimal length, inside `limit`. */
function readTlv(der: Uint8Array, offset: number, tag: number, limit: number): Tlv | null {
  if (offset + 2 > limit || der[offset] !== tag) return null;
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

const OID_RSA = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_EC = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_CURVES: readonly (readonly [NamedCurve, readonly number[]])[] = [
  ['P-256', [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]],
  ['P-384', [0x2b, 0x81, 0x04, 0x00, 0x22]],
];

function bytesEqual(der: Uint8Array, tlv: Tlv, expected: readonly number[]): boolean {
  if (tlv.end - tlv.start !== expected.length) return false;
  return expected.every((byte, i) => der[tlv.start + i] === byte);
}

/** DER SubjectPublicKeyInfo (RFC 5280 §4.1, RFC 3279): an RSA key, or an EC key on P-256 or P-384. */
export function readSpki(der: Uint8Array<ArrayBuffer>): PublicKeySpec | string {
  const malformed = 'is not a DER SubjectPublicKeyInfo';
  const spki = readTlv(der, 0, 0x30, der.length);
  if (spki === null || spki.end !== der.length) return malformed;
  const algorithm = readTlv(der, spki.start, 0x30, spki.end);
  if (algorithm === null) return malformed;
  const oid = readTlv(der, algorithm.start, 0x06, algorithm.end);
  const bits = readTlv(der, algorithm.end, 0x03, spki.end);
  if (oid === null || bits === null || bits.end !== spki.end || der[bits.start] !== 0) return malformed;
  if (bytesEqual(der, oid, OID_RSA)) {
    const params = readTlv(der, oid.end, 0x05, algorithm.end);
    if (params === null || params.start !== params.end || params.end !== algorithm.end) return malformed;
    const sequence = readTlv(der, bits.start + 1, 0x30, bits.end);
    if (sequence === null || sequence.end !== bits.end) return malformed;
    const n = readTlv(der, sequence.start, 0x02, sequence.end);
    const e = n && readTlv(der, n.end, 0x02, sequence.end);
    if (n === null || e === null || e.end !== sequence.end) return malformed;
    return rsaSpec(der.subarray(n.start, n.end), der.subarray(e.start, e.end), undefined, undefined, der);
  }
  if (bytesEqual(der, oid, OID_EC)) {
    const params = readTlv(der, oid.end, 0x06, algorithm.end);
    if (params === null || params.end !== algorithm.end) return malformed;
    const curve = OID_CURVES.find(([, curveOid]) => bytesEqual(der, params, curveOid))?.[0];
    if (curve === undefined) return 'is an EC key on a curve other than P-256 or P-384';
    const point = der.subarray(bits.start + 1, bits.end);
    if (point[0] !== 0x04) return 'is an EC key whose point is not uncompressed';
    if (point.length !== 1 + 2 * COORDINATE_BYTES[curve]) return malformed;
    return ecSpec(curve, undefined, undefined, der);
  }
  return 'must be an RSA key or an EC key on P-256 or P-384';
}

/** Unsigned big-endian integer bytes without leading zero bytes. */
function stripZeros(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  return bytes.subarray(i);
}

/** An RSA key from its modulus and exponent: DER INTEGER contents when `der` (the SPKI they came from) is given, else unsigned JWK bytes. */
function rsaSpec(
  modulus: Uint8Array, exponent: Uint8Array, alg: AlgorithmName | undefined, kid: string | undefined, der?: Uint8Array<ArrayBuffer>,
): PublicKeySpec | string {
  if (modulus[0] !== undefined && modulus[0] >= 0x80 && der !== undefined) return 'is not a DER SubjectPublicKeyInfo';
  const n = stripZeros(modulus);
  const bits = n.length === 0 ? 0 : (n.length - 1) * 8 + (32 - Math.clz32(n[0] as number));
  if (bits < MIN_RSA_BITS) return `is an RSA key of ${bits} bits; at least ${MIN_RSA_BITS} are required`;
  const e = stripZeros(exponent);
  // Web Crypto accepts e = 1, and with it any signature verifies.
  if (e.length === 0 || (e.length === 1 && (e[0] as number) < 3) || ((e[e.length - 1] as number) & 1) === 0) {
    return 'is an RSA key whose public exponent is even or under 3';
  }
  if (hasRocaFingerprint(n)) return 'is an RSA key with the ROCA fingerprint (CVE-2017-15361): its private key can be computed';
  // RSA's AlgorithmIdentifier has NULL parameters (RFC 3279 §2.3.1).
  const spki = der ?? encodeSpki([derOid(OID_RSA), Uint8Array.of(0x05, 0x00)], [encodeDer(0x30, [derUnsignedInteger(n), derUnsignedInteger(e)])]);
  return spec({ kty: 'RSA', bits, algorithms: algorithmsFor('RSA'), spki }, alg, kid);
}

const ROCA_PRIMES = [3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167];
let rocaPowers: readonly ReadonlySet<number>[] | undefined;

/**
 * ROCA (Nemec et al., CCS 2017): Infineon moduli are `k·M + (65537^a mod M)`, so for every
 * small prime `p` of `M`, `n mod p` lies in the subgroup that 65537 generates mod `p`.
 */
function hasRocaFingerprint(modulus: Uint8Array): boolean {
  rocaPowers ??= ROCA_PRIMES.map((p) => {
    const powers = new Set<number>();
    for (let x = 1; !powers.has(x); x = (x * (65537 % p)) % p) powers.add(x);
    return powers;
  });
  return ROCA_PRIMES.every((p, i) => {
    let rest = 0;
    for (const byte of modulus) rest = (rest * 256 + byte) % p;
    return (rocaPowers as readonly ReadonlySet<number>[])[i]!.has(rest);
  });
}

/** An EC key from its SPKI `der`, or from the coordinates of a JWK. */
function ecSpec(
  curve: NamedCurve, alg: AlgorithmName | undefined, kid: string | undefined, der: Uint8Array<ArrayBuffer> | { x: Uint8Array; y: Uint8Array },
): PublicKeySpec | string {
  const spki = der instanceof Uint8Array
    ? der
    : encodeSpki([derOid(OID_EC), derOid(OID_CURVES.find(([name]) => name === curve)![1])], [Uint8Array.of(0x04), der.x, der.y]);
  return spec({ kty: 'EC', curve, algorithms: algorithmsFor('EC', curve), spki }, alg, kid);
}

/** A SubjectPublicKeyInfo (RFC 5280 §4.1): the AlgorithmIdentifier of `algorithm`, then `key` in a BIT STRING. */
function encodeSpki(algorithm: readonly Uint8Array[], key: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  return encodeDer(0x30, [encodeDer(0x30, algorithm), encodeDer(0x03, [Uint8Array.of(0), ...key])]);
}

function derOid(oid: readonly number[]): Uint8Array<ArrayBuffer> {
  return encodeDer(0x06, [Uint8Array.from(oid)]);
}

/** One DER element: `tag`, the definite minimal length, then `parts` in order. */
function encodeDer(tag: number, parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  const lengthBytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) lengthBytes.unshift(rest % 256);
  const header = length < 0x80 ? [tag, length] : [tag, 0x80 | lengthBytes.length, ...lengthBytes];
  const out = new Uint8Array(header.length + length);
  out.set(header);
  let offset = header.length;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** A DER INTEGER of the unsigned big-endian `bytes` (no leading zeros): a zero byte in front when the top bit is set. */
function derUnsignedInteger(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return encodeDer(0x02, (bytes[0] as number) >= 0x80 ? [Uint8Array.of(0), bytes] : [bytes]);
}

function spec(key: PublicKeySpec, alg: AlgorithmName | undefined, kid: string | undefined): PublicKeySpec | string {
  if (alg !== undefined) {
    if (!key.algorithms.includes(alg)) return `has "alg": "${alg}", which does not fit its key type (${describeKey(key)})`;
    key = { ...key, algorithms: [alg] };
  }
  return Object.freeze(kid === undefined ? key : { ...key, kid });
}

/** `an RSA key`, `a P-256 EC key`: for messages. */
export function describeKey(key: Pick<PublicKeySpec, 'kty' | 'curve'>): string {
  return key.kty === 'RSA' ? 'an RSA key' : `a ${key.curve} EC key`;
}

/**
 * A public JWK (RFC 7517/7518): `kty` `RSA` or `EC` (P-256, P-384), no private members,
 * `use` `sig` and `key_ops` with `verify` when present, an `alg` that fits the key when present.
 * Shared by `publicKey` and key sets; an `oct` key is always refused (a key set never supplies an HMAC key).
 */
export function readPublicJwk(value: object): PublicKeySpec | string {
  const jwk = value as Record<string, unknown>;
  // A member set to `undefined` is absent: workerd's exportKey("jwk") lists every member, the private ones undefined.
  const secret = PRIVATE_JWK_MEMBERS.find((member) => jwk[member] !== undefined);
  if (secret !== undefined) return `is a JWK with the private member "${secret}"; give the public key only`;
  const { kty, use, key_ops: keyOps, alg, kid } = jwk;
  if (use !== undefined && use !== 'sig') return 'is a JWK whose "use" is not "sig"';
  if (keyOps !== undefined && (!Array.isArray(keyOps) || !keyOps.includes('verify'))) return 'is a JWK whose "key_ops" lacks "verify"';
  if (kid !== undefined && typeof kid !== 'string') return 'is a JWK whose "kid" is not a string';
  if (alg !== undefined && (typeof alg !== 'string' || jwsAlgorithm(alg) === undefined)) return 'is a JWK whose "alg" is not a supported algorithm';
  const algName = alg as AlgorithmName | undefined;
  if (kty === 'RSA') {
    const n = typeof jwk.n === 'string' ? decodeBase64url(jwk.n) : null;
    const e = typeof jwk.e === 'string' ? decodeBase64url(jwk.e) : null;
    if (n === null || e === null) return 'is an RSA JWK without valid base64url "n" and "e"';
    return rsaSpec(n, e, algName, kid);
  }
  if (kty === 'EC') {
    const { crv } = jwk;
    if (crv !== 'P-256' && crv !== 'P-384') return 'is an EC JWK on a curve other than P-256 or P-384';
    const x = typeof jwk.x === 'string' ? decodeBase64url(jwk.x) : null;
    const y = typeof jwk.y === 'string' ? decodeBase64url(jwk.y) : null;
    const size = COORDINATE_BYTES[crv];
    if (x === null || y === null || x.length !== size || y.length !== size) return `is an EC JWK whose "x" and "y" are not ${size}-byte base64url`;
    return ecSpec(crv, algName, kid, { x, y });
  }
  return 'is a JWK whose "kty" is not "RSA" or "EC"';
}

/** Imports `spec` for verifying with `algorithm` (one of `spec.algorithms`). */
export function importPublicKey(spec: PublicKeySpec, algorithm: JwsAlgorithm): Promise<CryptoKey> {
  if (!spec.algorithms.includes(algorithm.name)) return Promise.reject(new TypeError(`${algorithm.name} does not fit ${describeKey(spec)}`));
  // A JWK too: its members were checked here and re-encoded as SPKI, so one import path serves
  // both forms; Node also verifies 1-3% faster with an RSA key imported from SPKI than from JWK.
  return crypto.subtle.importKey('spki', spec.spki, algorithm.importParams, false, ['verify']);
}

/** Imports HMAC key bytes for `algorithm` (an `HS*` entry). */
export function importHmacKey(secret: Uint8Array<ArrayBuffer>, algorithm: JwsAlgorithm): Promise<CryptoKey> {
  if (secret.length < MIN_SECRET_BYTES) return Promise.reject(new RangeError(`an HMAC key must be at least ${MIN_SECRET_BYTES} bytes`));
  if (algorithm.kty !== 'oct') return Promise.reject(new TypeError(`${algorithm.name} is not an HMAC algorithm`));
  return crypto.subtle.importKey('raw', secret, algorithm.importParams, false, ['verify']);
}
