/** The JWS algorithms this verifier knows. `none` is not one of them and cannot be configured. */
export type AlgorithmName = 'HS256' | 'HS384' | 'HS512' | 'RS256' | 'RS384' | 'RS512' | 'ES256' | 'ES384';

export type KeyType = 'oct' | 'RSA' | 'EC';
export type NamedCurve = 'P-256' | 'P-384';

/** One JWS `alg`, bound to exactly one Web Crypto algorithm, hash and (for ECDSA) curve. */
export interface JwsAlgorithm {
  readonly name: AlgorithmName;
  readonly kty: KeyType;
  readonly curve?: NamedCurve;
  readonly importParams: HmacImportParams | RsaHashedImportParams | EcKeyImportParams;
  /** A bare name where the algorithm takes no parameters: runtimes normalize a string faster than an object. */
  readonly verifyParams: string | EcdsaParams;
  /** Signature length in bytes: the full HMAC tag, or raw `r||s` (RFC 7518 §3.4). RSA: the modulus length. */
  readonly signatureLength?: number;
}

const hmac = (name: AlgorithmName, hash: string, length: number): JwsAlgorithm => ({
  name, kty: 'oct', importParams: { name: 'HMAC', hash }, verifyParams: 'HMAC', signatureLength: length,
});
const rsa = (name: AlgorithmName, hash: string): JwsAlgorithm => ({
  name, kty: 'RSA', importParams: { name: 'RSASSA-PKCS1-v1_5', hash }, verifyParams: 'RSASSA-PKCS1-v1_5',
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
    ecdsa('ES256', 'P-256', 'SHA-256', 64),
    ecdsa('ES384', 'P-384', 'SHA-384', 96),
  ].map((algorithm) => [algorithm.name, Object.freeze(algorithm)]),
);

/** Every supported algorithm name, in table order. */
export const ALGORITHM_NAMES: readonly AlgorithmName[] = Object.freeze([...TABLE.keys()] as AlgorithmName[]);

/** The table entry for an exact, case-sensitive `alg`, or `undefined`. */
export function jwsAlgorithm(name: string): JwsAlgorithm | undefined {
  return TABLE.get(name);
}

/** The algorithms a key of this type (and curve) can verify. */
export function algorithmsFor(kty: KeyType, curve?: NamedCurve): readonly AlgorithmName[] {
  return ALGORITHM_NAMES.filter((name) => {
    const algorithm = TABLE.get(name) as JwsAlgorithm;
    return algorithm.kty === kty && algorithm.curve === curve;
  });
}
