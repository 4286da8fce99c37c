// SPDX-License-Identifier: MIT
/** The JWS algorithms this verifier knows. `none` is not one of them and cannot be configured. */
export type AlgorithmName =
  | 'HS256' | 'HS384' | 'HS512' | 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512'
  | 'ES256' | 'ES384' | 'ES512' | 'EdDSA' | 'Ed25519';

export type KeyType = 'oct' | 'RSA' | 'EC' | 'OKP';
export type NamedCurve = 'P-256' | 'P-384' | 'P-521' | 'Ed25519';

/** One JWS `alg`, bound to exactly one Web Crypto algorithm, hash and (for ECDSA, EdDSA) curve. */
export interface JwsAlgorithm {
  readonly name: AlgorithmName;
  readonly kty: KeyType;
  readonly curve?: NamedCurve;
  readonly importParams: HmacImportParams | RsaHashedImportParams | EcKeyImportParams | Algorithm;
  /** A bare name where the algorithm takes no parameters: runtimes normalize a string faster than an object. */
  readonly verifyParams: string | EcdsaParams | RsaPssParams;
  /** Signature length in bytes: the full HMAC tag, raw `r||s` (RFC 7518 §3.4), Ed25519's 64. RSA: the modulus length. */
  readonly signatureLength?: number;
  /** Used only when named in `algorithms` (RSA-PSS: the spec's RSA default stays `RS*`, design §12). */
  readonly namedOnly?: true;
}

const hmac = (name: AlgorithmName, hash: string, length: number): JwsAlgorithm => ({
  name, kty: 'oct', importParams: { name: 'HMAC', hash }, verifyParams: 'HMAC', signatureLength: length,
});
const rsa = (name: AlgorithmName, hash: string): JwsAlgorithm => ({
  name, kty: 'RSA', importParams: { name: 'RSASSA-PKCS1-v1_5', hash }, verifyParams: 'RSASSA-PKCS1-v1_5',
});
// RFC 7518 §3.5: MGF1 with the same hash, salt as long as the hash.
const pss = (name: AlgorithmName, hash: string, saltLength: number): JwsAlgorithm => ({
  name, kty: 'RSA', importParams: { name: 'RSA-PSS', hash }, verifyParams: { name: 'RSA-PSS', saltLength }, namedOnly: true,
});
const ecdsa = (name: AlgorithmName, curve: NamedCurve, hash: string, length: number): JwsAlgorithm => ({
  name, kty: 'EC', curve, importParams: { name: 'ECDSA', namedCurve: curve }, verifyParams: { name: 'ECDSA', hash }, signatureLength: length,
});

const TABLE: ReadonlyMap<string, JwsAlgorithm> = new Map(
  [
    hmac('HS256', 'SHA-256', 32),
    hmac('HS384', 'SHA-384', 48),
    hmac('HS512', 'SHA-512', 64),
    rsa('RS256', 'SHA-256'),
    rsa('RS384', 'SHA-384'),
    rsa('RS512', 'SHA-512'),
    pss('PS256', 'SHA-256', 32),
    pss('PS384', 'SHA-384', 48),
    pss('PS512', 'SHA-512', 64),
    ecdsa('ES256', 'P-256', 'SHA-256', 64),
    ecdsa('ES384', 'P-384', 'SHA-384', 96),
    ecdsa('ES512', 'P-521', 'SHA-512', 132),
    // RFC 8037; Ed25519 only (Ed448 is not in Web Crypto everywhere).
    { name: 'EdDSA', kty: 'OKP', curve: 'Ed25519', importParams: { name: 'Ed25519' }, verifyParams: 'Ed25519', signatureLength: 64 },
    // RFC 9864: the fully-specified name of EdDSA with an Ed25519 key.
    { name: 'Ed25519', kty: 'OKP', curve: 'Ed25519', importParams: { name: 'Ed25519' }, verifyParams: 'Ed25519', signatureLength: 64 },
  ].map((algorithm) => [algorithm.name, Object.freeze(algorithm as JwsAlgorithm)]),
);

/** Every supported algorithm name, in table order. */
export const ALGORITHM_NAMES: readonly AlgorithmName[] = Object.freeze([...TABLE.keys()] as AlgorithmName[]);

/** The table entry for an exact, case-sensitive `alg`, or `undefined`. */
export function jwsAlgorithm(name: string): JwsAlgorithm | undefined {
  return TABLE.get(name);
}

export function algorithmsFor(kty: KeyType, curve?: NamedCurve): readonly AlgorithmName[] {
  return [...TABLE.values()].filter((algorithm) => algorithm.kty === kty && algorithm.curve === curve).map((algorithm) => algorithm.name);
}

/** The algorithms used when `algorithms` is not given: all of `fits` but those used only when named (one left: that one). */
export function defaultAlgorithms(fits: readonly AlgorithmName[]): readonly AlgorithmName[] {
  const usual = fits.filter((name) => TABLE.get(name)?.namedOnly !== true);
  return usual.length > 0 ? usual : fits;
}
