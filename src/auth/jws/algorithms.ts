// SPDX-License-Identifier: MIT

/** The JWS algorithms this verifier knows. `none` is not one of them and cannot be configured. */
export type AlgorithmName =
  | 'HS256'
  | 'HS384'
  | 'HS512'
  | 'RS256'
  | 'RS384'
  | 'RS512'
  | 'PS256'
  | 'PS384'
  | 'PS512'
  | 'ES256'
  | 'ES384'
  | 'ES512'
  | 'EdDSA'
  | 'Ed25519';

export type KeyType = 'oct' | 'RSA' | 'EC' | 'OKP';
export type NamedCurve = 'P-256' | 'P-384' | 'P-521' | 'Ed25519';

/**
 * The Web Crypto parameters of an algorithm, in shapes of our own: the DOM's names for them
 * (`HmacImportParams`, `EcdsaParams`, …) are not in every runtime's types (Workers' are not), and
 * the declarations must check under each.
 */
export interface WebCryptoParams {
  readonly name: string;
  /** The hash of HMAC, RSASSA-PKCS1-v1_5, RSA-PSS (import) and ECDSA (sign, verify). */
  readonly hash?: string;
  /** The curve of an ECDSA key. */
  readonly namedCurve?: string;
  /** The salt length of RSA-PSS, in bytes. */
  readonly saltLength?: number;
}

/** One JWS `alg`, bound to exactly one Web Crypto algorithm, hash and (for ECDSA, EdDSA) curve. */
export interface JwsAlgorithm {
  readonly name: AlgorithmName;
  readonly kty: KeyType;
  readonly curve?: NamedCurve;
  readonly importParams: WebCryptoParams;
  /** A bare name where the algorithm takes no parameters: runtimes normalize a string faster than an object. */
  readonly verifyParams: string | WebCryptoParams;
  /** Signature length in bytes: the full HMAC tag, raw `r||s` (RFC 7518 §3.4), Ed25519's 64. RSA: the modulus length. */
  readonly signatureLength?: number;
  /** Used only when named in `algorithms` (RSA-PSS: the spec's RSA default stays `RS*`, design §12). */
  readonly namedOnly?: true;
}

// Each family at SHA-256, SHA-384 and SHA-512, in this order (messages list the names so).
const SHA_BITS = [256, 384, 512] as const;
const FAMILIES: readonly ((bits: 256 | 384 | 512, hash: string) => JwsAlgorithm)[] = [
  (bits, hash) => ({
    name: `HS${bits}`,
    kty: 'oct',
    importParams: { name: 'HMAC', hash },
    verifyParams: 'HMAC',
    signatureLength: bits / 8,
  }),
  (bits, hash) => ({
    name: `RS${bits}`,
    kty: 'RSA',
    importParams: { name: 'RSASSA-PKCS1-v1_5', hash },
    verifyParams: 'RSASSA-PKCS1-v1_5',
  }),
  // RFC 7518 §3.5: MGF1 with the same hash, salt as long as the hash.
  (bits, hash) => ({
    name: `PS${bits}`,
    kty: 'RSA',
    importParams: { name: 'RSA-PSS', hash },
    verifyParams: { name: 'RSA-PSS', saltLength: bits / 8 },
    namedOnly: true,
  }),
  // RFC 7518 §3.4: ES512 is on P-521; the signature is r||s, each the size of the curve's order.
  (bits, hash) => {
    const curve = bits === 512 ? 'P-521' : (`P-${bits}` as const);
    return {
      name: `ES${bits}`,
      kty: 'EC',
      curve,
      importParams: { name: 'ECDSA', namedCurve: curve },
      verifyParams: { name: 'ECDSA', hash },
      signatureLength: bits === 512 ? 132 : bits / 4,
    };
  },
];
// RFC 8037, Ed25519 only (Ed448 is not in Web Crypto everywhere); `Ed25519` is its fully-specified name (RFC 9864).
const eddsa = (name: 'EdDSA' | 'Ed25519'): JwsAlgorithm => ({
  name,
  kty: 'OKP',
  curve: 'Ed25519',
  importParams: { name: 'Ed25519' },
  verifyParams: 'Ed25519',
  signatureLength: 64,
});

// Built by pure calls (/* @__PURE__ */: a bundle that never reads the table leaves it out).
const algorithmTable = (): ReadonlyMap<string, JwsAlgorithm> =>
  new Map(
    [
      ...FAMILIES.flatMap((family) => SHA_BITS.map((bits) => family(bits, `SHA-${bits}`))),
      eddsa('EdDSA'),
      eddsa('Ed25519'),
    ].map((algorithm) => [algorithm.name, Object.freeze(algorithm)]),
  );
const TABLE = /* @__PURE__ */ algorithmTable();

/** Every supported algorithm name, in table order. */
export const ALGORITHM_NAMES: readonly AlgorithmName[] = /* @__PURE__ */ (() =>
  Object.freeze([...TABLE.keys()] as AlgorithmName[]))();

/** The table entry for an exact, case-sensitive `alg`, or `undefined`. */
export function jwsAlgorithm(name: string): JwsAlgorithm | undefined {
  return TABLE.get(name);
}

export function algorithmsFor(kty: KeyType, curve?: NamedCurve): readonly AlgorithmName[] {
  return [...TABLE.values()]
    .filter((algorithm) => algorithm.kty === kty && algorithm.curve === curve)
    .map((algorithm) => algorithm.name);
}

/** The algorithms used when `algorithms` is not given: all of `fits` but those used only when named (one left: that one). */
export function defaultAlgorithms(fits: readonly AlgorithmName[]): readonly AlgorithmName[] {
  const usual = fits.filter((name) => TABLE.get(name)?.namedOnly !== true);
  return usual.length > 0 ? usual : fits;
}
