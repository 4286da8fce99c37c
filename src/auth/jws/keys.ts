// SPDX-License-Identifier: MIT
import { isRecord } from './json.ts';
import { algorithmsFor, jwsAlgorithm, type AlgorithmName, type NamedCurve } from './algorithms.ts';
import { decodeBase64, decodeBase64url, encodeBase64url } from './base64url.ts';
import { bytesEqual, certificateSpki, readRsaPublicKey, readTlv } from './der.ts';

/** A public key checked against the key rules, ready to import for each algorithm it allows. */
export interface PublicKeySpec {
  readonly kty: 'RSA' | 'EC' | 'OKP';
  readonly curve?: NamedCurve;
  /** RSA modulus size in bits. */
  readonly bits?: number;
  /** The algorithms this key may verify: its family (its curve for EC and OKP), narrowed by a JWK `alg`. */
  readonly algorithms: readonly AlgorithmName[];
  readonly kid?: string;
  /**
   * The key as a public JWK of the members that were checked (`kty`, and `n`, `e` or `crv`, `x`,
   * `y`), whatever form it came in: the one format every key is imported from.
   */
  readonly jwk: JsonWebKey;
}

export const MIN_RSA_BITS = 2048;
export const MIN_SECRET_BYTES = 32;

const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
const OTHER_CURVE = 'on a curve other than P-256, P-384 or P-521';
const KINDS = 'an RSA key, an EC key on P-256, P-384 or P-521, or an Ed25519 key';
const PEM_FORMS = 'a PEM public key (BEGIN PUBLIC KEY, BEGIN RSA PUBLIC KEY or BEGIN CERTIFICATE) or a JWK object';

const OID_RSA = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_EC = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_ED25519 = [0x2b, 0x65, 0x70];

type EcCurve = Exclude<NamedCurve, 'Ed25519'>;
/** The OIDs of the NIST curves in an EC SubjectPublicKeyInfo (RFC 5480 §2.1.1.1). */
const CURVE_OIDS: readonly (readonly [EcCurve, readonly number[]])[] = [
  ['P-256', [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]],
  ['P-384', [0x2b, 0x81, 0x04, 0x00, 0x22]],
  ['P-521', [0x2b, 0x81, 0x04, 0x00, 0x23]],
];
/**
 * The NIST curves (FIPS 186-5 §6.1, SEC 2 §2.4): the bytes of a coordinate, and the prime `p` and
 * coefficient `b` of y² = x³ - 3x + b (mod p).
 */
const CURVES: Readonly<Record<EcCurve, { readonly size: number; readonly p: bigint; readonly b: bigint }>> =
  /* @__PURE__ */ (() => ({
    'P-256': {
      size: 32,
      p: 2n ** 256n - 2n ** 224n + 2n ** 192n + 2n ** 96n - 1n,
      b: 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn,
    },
    'P-384': {
      size: 48,
      p: 2n ** 384n - 2n ** 128n - 2n ** 96n + 2n ** 32n - 1n,
      b: 0xb3312fa7e23ee7e4988e056be3f82d19181d9c6efe8141120314088f5013875ac656398d8a2ed19d2a85c8edd3ec2aefn,
    },
    'P-521': {
      size: 66,
      p: 2n ** 521n - 1n,
      b: 0x051953eb9618e1c9a1f929a21a0b68540eea2da725b99b315f3b8b489918ef109e156193951ec7e937b1652c0bd3bb1bf073573df883d2c34f1ef451fd46b503f00n,
    },
  }))(); // BigInt arithmetic: in a call marked /* @__PURE__ */, so a bundle without EC keys leaves it out

/**
 * Whether an HMAC secret's bytes are a key in another form (design §20, §26): PEM text
 * (`-----BEGIN`), JSON text holding an object or an array (a JWK, a key set or its `keys`), or a
 * DER key, raw or as base64/base64url text (a PEM body without its armour lines, as Keycloak
 * publishes its realm key). Used as a secret, a public key lets anyone who has it sign tokens.
 */
export function isKeyShaped(secret: Uint8Array<ArrayBuffer>): boolean {
  const text = new TextDecoder().decode(secret);
  if (text.includes('-----BEGIN')) return true;
  try {
    if (typeof JSON.parse(text) === 'object') return true; // an object or an array (or null: no secret either)
  } catch {
    // Not JSON: a secret, or base64 text.
  }
  // Base64 or base64url, line breaks and padding left out.
  const decoded = decodeBase64url(text.replace(/[\s=]/g, '').replace(/\+/g, '-').replace(/\//g, '_'));
  return isDerKey(secret) || (decoded !== null && isDerKey(decoded));
}

/**
 * Whether `der` is, whole, a DER SubjectPublicKeyInfo (any algorithm), a PKCS#1 RSAPublicKey or
 * an X.509 certificate. Parsed, not guessed by length: random bytes are none of these.
 */
function isDerKey(der: Uint8Array<ArrayBuffer>): boolean {
  const outer = readTlv(der, 0, 0x30, der.length);
  if (outer === null || outer.end !== der.length) return false;
  // SEQUENCE { SEQUENCE { OBJECT IDENTIFIER, … }, BIT STRING }
  const algorithm = readTlv(der, outer.start, 0x30, outer.end);
  const spki =
    algorithm !== null &&
    readTlv(der, algorithm.start, 0x06, algorithm.end) !== null &&
    readTlv(der, algorithm.end, 0x03, outer.end)?.end === outer.end;
  return spki || readRsaPublicKey(der, 0, der.length) !== null || certificateSpki(der) !== null;
}

/** A `publicKey` option: PEM text or a public JWK. A string result is why it was refused. */
export function readPublicKey(value: unknown): PublicKeySpec | string {
  if (typeof value === 'string') return readSpkiPem(value);
  if (isRecord(value)) return readPublicJwk(value);
  return `must be ${PEM_FORMS}`;
}

const PEM_BLOCK = /^-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\s]+)-----END \1-----$/;

/** PEM text holding one `PUBLIC KEY` (SubjectPublicKeyInfo), `RSA PUBLIC KEY` (PKCS#1) or `CERTIFICATE` (X.509). */
export function readSpkiPem(pem: string): PublicKeySpec | string {
  const begin = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem);
  if (begin === null) return `must be ${PEM_FORMS}`;
  const label = begin[1] as string;
  if (label.includes('PRIVATE')) return `must be a public key; got a private key (BEGIN ${label})`;
  if (label !== 'PUBLIC KEY' && label !== 'RSA PUBLIC KEY' && label !== 'CERTIFICATE')
    return `must be ${PEM_FORMS}; got BEGIN ${label}`;
  const match = PEM_BLOCK.exec(pem.trim());
  const der = match === null ? null : decodeBase64((match[2] as string).replace(/\s+/g, ''));
  if (der === null) return `is not one well-formed PEM block (BEGIN ${label}, base64, END ${label})`;
  if (label === 'RSA PUBLIC KEY') {
    const key = readRsaPublicKey(der, 0, der.length);
    return key === null ? 'is not a DER PKCS#1 RSAPublicKey' : rsaKey(key.n, key.e);
  }
  if (label === 'PUBLIC KEY') return readSpki(der);
  const spki = certificateSpki(der);
  return spki === null ? 'is not a DER X.509 certificate' : readSpki(spki);
}

/** DER SubjectPublicKeyInfo (RFC 5280 §4.1, RFC 3279, RFC 8410): RSA, EC on P-256/P-384/P-521, or Ed25519. */
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
    const key = readRsaPublicKey(der, bits.start + 1, bits.end);
    return key === null ? malformed : rsaKey(key.n, key.e);
  }
  const key = der.subarray(bits.start + 1, bits.end);
  // RFC 8410 §3: Ed25519's parameters are absent.
  if (bytesEqual(der, oid, OID_ED25519))
    return oid.end !== algorithm.end || key.length !== 32 ? malformed : ed25519Key(key);
  if (bytesEqual(der, oid, OID_EC)) {
    const params = readTlv(der, oid.end, 0x06, algorithm.end);
    if (params === null || params.end !== algorithm.end) return malformed;
    const curve = CURVE_OIDS.find(([, curveOid]) => bytesEqual(der, params, curveOid))?.[0];
    if (curve === undefined) return `is an EC key ${OTHER_CURVE}`;
    if (key[0] !== 0x04) return 'is an EC key whose point is not uncompressed';
    const { size } = CURVES[curve];
    return key.length !== 1 + 2 * size ? malformed : ecKey(curve, key.subarray(1, 1 + size), key.subarray(1 + size));
  }
  return `must be ${KINDS}`;
}

/** Unsigned big-endian integer bytes without leading zero bytes. */
function stripZeros(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  return bytes.subarray(i);
}

/** An RSA key from the unsigned bytes of its modulus and exponent. */
function rsaKey(modulus: Uint8Array, exponent: Uint8Array): PublicKeySpec | string {
  const n = stripZeros(modulus);
  const bits = n.length === 0 ? 0 : (n.length - 1) * 8 + (32 - Math.clz32(n[0] as number));
  if (bits < MIN_RSA_BITS) return `is an RSA key of ${bits} bits; at least ${MIN_RSA_BITS} are required`;
  const e = stripZeros(exponent);
  // Web Crypto accepts e = 1, and with it any signature verifies.
  if (e.length === 0 || (e.length === 1 && (e[0] as number) < 3) || ((e[e.length - 1] as number) & 1) === 0) {
    return 'is an RSA key whose public exponent is even or under 3';
  }
  if (hasRocaFingerprint(n))
    return 'is an RSA key with the ROCA fingerprint (CVE-2017-15361): its private key can be computed';
  return Object.freeze({
    kty: 'RSA',
    bits,
    algorithms: algorithmsFor('RSA'),
    jwk: { kty: 'RSA', n: encodeBase64url(n), e: encodeBase64url(e) },
  });
}

/** For each odd prime under 168 (the primes of ROCA's `M`), the subgroup 65537 generates mod it; made on first use. */
let rocaSubgroups: ReadonlyMap<number, ReadonlySet<number>> | undefined;

/**
 * ROCA (Nemec et al., CCS 2017): Infineon moduli are `k·M + (65537^a mod M)`, so for every
 * small prime `p` of `M`, `n mod p` lies in the subgroup that 65537 generates mod `p`.
 */
function hasRocaFingerprint(modulus: Uint8Array): boolean {
  if (rocaSubgroups === undefined) {
    const subgroups = new Map<number, Set<number>>();
    for (let p = 3; p < 168; p += 2) {
      if ([...subgroups.keys()].some((prime) => p % prime === 0)) continue;
      const powers = new Set<number>();
      for (let x = 1; !powers.has(x); x = (x * (65537 % p)) % p) powers.add(x);
      subgroups.set(p, powers);
    }
    rocaSubgroups = subgroups;
  }
  return [...rocaSubgroups].every(([p, powers]) => {
    let rest = 0;
    for (const byte of modulus) rest = (rest * 256 + byte) % p;
    return powers.has(rest);
  });
}

const toBigInt = (bytes: Uint8Array): bigint =>
  BigInt(`0x0${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`);

/** An EC key from its point's coordinates, refused when the point is off the curve (when read, not by Web Crypto at first use). */
function ecKey(curve: EcCurve, x: Uint8Array, y: Uint8Array): PublicKeySpec | string {
  const { p, b } = CURVES[curve];
  const [X, Y] = [toBigInt(x), toBigInt(y)];
  if (X >= p || Y >= p || (Y * Y - (X * X * X - 3n * X + b)) % p !== 0n)
    return `is an EC key whose point is not on ${curve}`;
  return Object.freeze({
    kty: 'EC',
    curve,
    algorithms: algorithmsFor('EC', curve),
    jwk: { kty: 'EC', crv: curve, x: encodeBase64url(x), y: encodeBase64url(y) },
  });
}

function ed25519Key(x: Uint8Array): PublicKeySpec {
  return Object.freeze({
    kty: 'OKP',
    curve: 'Ed25519',
    algorithms: algorithmsFor('OKP', 'Ed25519'),
    jwk: { kty: 'OKP', crv: 'Ed25519', x: encodeBase64url(x) },
  });
}

/** `an RSA key`, `a P-256 EC key`, `an Ed25519 key`: for messages. */
export function describeKey(key: Pick<PublicKeySpec, 'kty' | 'curve'>): string {
  if (key.kty === 'RSA') return 'an RSA key';
  return key.kty === 'OKP' ? `an ${key.curve} key` : `a ${key.curve} EC key`;
}

/**
 * A public JWK (RFC 7517/7518/8037): `kty` `RSA`, `EC` (P-256, P-384, P-521) or `OKP`
 * (Ed25519), no private members, `use` `sig` and `key_ops` with `verify` when present, an
 * `alg` that fits the key when present. Shared by `publicKey` and key sets; an `oct` key is
 * always refused (a key set never supplies an HMAC key).
 */
export function readPublicJwk(value: object): PublicKeySpec | string {
  const jwk = value as Record<string, unknown>;
  // A member set to `undefined` is absent: workerd's exportKey("jwk") lists every member, the private ones undefined.
  const secret = PRIVATE_JWK_MEMBERS.find((member) => jwk[member] !== undefined);
  if (secret !== undefined) return `is a JWK with the private member "${secret}"; give the public key only`;
  const { kty, use, key_ops: keyOps, alg, kid, crv } = jwk;
  const whose = (what: string) => `is a JWK whose ${what}`;
  if (use !== undefined && use !== 'sig') return whose('"use" is not "sig"');
  if (keyOps !== undefined && (!Array.isArray(keyOps) || !keyOps.includes('verify')))
    return whose('"key_ops" lacks "verify"');
  if (kid !== undefined && typeof kid !== 'string') return whose('"kid" is not a string');
  if (alg !== undefined && (typeof alg !== 'string' || jwsAlgorithm(alg) === undefined))
    return whose('"alg" is not a supported algorithm');
  const bytes = (member: string) => (typeof jwk[member] === 'string' ? decodeBase64url(jwk[member] as string) : null);
  let key: PublicKeySpec | string;
  if (kty === 'RSA') {
    const [n, e] = [bytes('n'), bytes('e')];
    key = n === null || e === null ? 'is an RSA JWK without valid base64url "n" and "e"' : rsaKey(n, e);
  } else if (kty === 'EC' || kty === 'OKP') {
    const ec = kty === 'EC';
    if (ec ? typeof crv !== 'string' || !Object.hasOwn(CURVES, crv) : crv !== 'Ed25519')
      return ec ? `is an EC JWK ${OTHER_CURVE}` : 'is an OKP JWK whose "crv" is not "Ed25519"';
    const size = ec ? CURVES[crv as EcCurve].size : 32;
    const [x, y] = [bytes('x'), ec ? bytes('y') : new Uint8Array(size)];
    if (x === null || y === null || x.length !== size || y.length !== size)
      return `is an ${kty} JWK whose coordinates are not ${size}-byte base64url`;
    key = ec ? ecKey(crv as EcCurve, x, y) : ed25519Key(x);
  } else {
    return whose('"kty" is not "RSA", "EC" or "OKP"');
  }
  if (typeof key === 'string' || (alg === undefined && kid === undefined)) return key;
  if (alg !== undefined && !key.algorithms.includes(alg as AlgorithmName))
    return `has "alg": "${alg}", which does not fit its key type (${describeKey(key)})`;
  // EdDSA with an Ed25519 key is Ed25519 (RFC 9864): a key named either way serves both names.
  const algorithms: readonly AlgorithmName[] =
    alg === undefined
      ? key.algorithms
      : alg === 'EdDSA' || alg === 'Ed25519'
        ? ['EdDSA', 'Ed25519']
        : [alg as AlgorithmName];
  return Object.freeze(kid === undefined ? { ...key, algorithms } : { ...key, algorithms, kid: kid as string });
}
