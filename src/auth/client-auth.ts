// SPDX-License-Identifier: MIT
// How this server, as a client of the authorization server, proves itself at its endpoints
// (design §17, §27): `client_secret_basic` (RFC 6749 §2.3.1) or `private_key_jwt` (RFC 7523
// §2.2, OpenID Connect Core §9): a JWT signed with the client's private key, made per call.
import { isRecord } from './jws/json.ts';
import { kindOf, throwConfigError } from './errors.ts';
import { jwsAlgorithm, type JwsAlgorithm } from './jws/algorithms.ts';
import { decodeBase64, decodeBase64url, encodeBase64url } from './jws/base64url.ts';
import { MIN_RSA_BITS } from './jws/keys.ts';

/** RFC 6749 §2.3.1 and Appendix B: the client id and secret are form-encoded before they are joined for HTTP Basic. */
export const formEncode = (value: string): string =>
  encodeURIComponent(value)
    .replace(/%20/g, '+')
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The `Authorization` value of `client_secret_basic`. */
export const basicCredentials = (clientId: string, clientSecret: string): string =>
  `Basic ${btoa(`${formEncode(clientId)}:${formEncode(clientSecret)}`)}`;

/** A client's private key: a Web Crypto `CryptoKey` (private, usable to sign), a private JWK, or a PKCS#8 PEM (`BEGIN PRIVATE KEY`). */
export type ClientPrivateKey = CryptoKey | JsonWebKey | string;

/** The algorithms a client assertion may be signed with: every asymmetric JWS algorithm (never HMAC); `Ed25519` is RFC 9864's name. */
const SIGNING = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const CURVE_BITS: Record<string, number> = { 'P-256': 256, 'P-384': 384, 'P-521': 512 };

/** The JWS algorithm a key's own description implies (a CryptoKey's algorithm, a JWK's `kty`/`crv`), or `undefined`. */
function impliedAlgorithm(name: string, hash: string | undefined, curve: string | undefined): string | undefined {
  const bits = hash?.replace('SHA-', '');
  if (name === 'RSASSA-PKCS1-v1_5' || name === 'RSA') return `RS${bits ?? 256}`;
  if (name === 'RSA-PSS') return `PS${bits ?? 256}`;
  if (name === 'ECDSA' || name === 'EC') return curve && CURVE_BITS[curve] ? `ES${CURVE_BITS[curve]}` : undefined;
  if (name === 'Ed25519' || (name === 'OKP' && curve === 'Ed25519')) return 'EdDSA';
  return undefined;
}

/**
 * Checks a client's private key at creation and returns what signs one client assertion per call:
 * `{ iss: clientId, sub: clientId, aud, jti, iat, exp: iat + 60 }`, header `{ alg, typ: 'JWT', kid? }`.
 * `algorithm` defaults to what the key implies (RS256, PS256, ES256/384/512, EdDSA); a PEM needs it.
 */
export function clientAssertion(
  helper: string,
  clientId: string,
  key: unknown,
  algorithm: unknown,
  keyId: unknown,
): (audience: string, nowSec: number) => Promise<string> {
  if (algorithm !== undefined && !SIGNING.includes(algorithm as string))
    throwConfigError(helper, `algorithm must be one of ${SIGNING.join(', ')}`);
  if (keyId !== undefined && (typeof keyId !== 'string' || keyId === ''))
    throwConfigError(helper, 'keyId must be a non-empty string');
  let chosen = algorithm as string | undefined;
  let imported: () => Promise<CryptoKey>;
  if (typeof CryptoKey !== 'undefined' && key instanceof CryptoKey) {
    if (key.type !== 'private' || !key.usages.includes('sign'))
      throwConfigError(helper, 'privateKey must be a private CryptoKey usable to sign (usages: ["sign"])');
    const { name, hash, namedCurve } = key.algorithm as { name: string; hash?: { name: string }; namedCurve?: string };
    const implied = impliedAlgorithm(name, hash?.name, namedCurve);
    chosen ??= implied;
    if (chosen === undefined || chosen !== implied)
      throwConfigError(helper, `privateKey (a ${name} CryptoKey) cannot sign ${chosen ?? 'a client assertion'}`);
    const ready = Promise.resolve(key);
    imported = () => ready;
  } else if (typeof key === 'string') {
    const pem = /^-----BEGIN ([A-Z ]+)-----\s*([A-Za-z0-9+/=\s]+?)\s*-----END \1-----\s*$/.exec(key.trim());
    if (pem?.[1] !== 'PRIVATE KEY')
      throwConfigError(
        helper,
        pem === null
          ? 'privateKey must be a PKCS#8 PEM (BEGIN PRIVATE KEY), a private JWK or a private CryptoKey'
          : `privateKey must be a PKCS#8 PEM (BEGIN PRIVATE KEY), not ${pem[1]}${/PUBLIC|CERTIFICATE/.test(pem[1]!) ? ': a public key cannot sign' : ' (convert it: openssl pkcs8 -topk8 -nocrypt)'}`,
      );
    const der = decodeBase64(pem[2]!.replace(/\s+/g, ''));
    if (der === null) throwConfigError(helper, 'privateKey: the PEM body is not base64');
    if (chosen === undefined) throwConfigError(helper, `a PEM privateKey needs algorithm (${SIGNING.join(', ')})`);
    const params = (jwsAlgorithm(chosen) as JwsAlgorithm).importParams;
    imported = once(() => crypto.subtle.importKey('pkcs8', der, params, false, ['sign']));
  } else if (isRecord(key)) {
    const { kty, crv, d, n, alg } = key as JsonWebKey;
    if (typeof d !== 'string' || d === '')
      throwConfigError(helper, 'privateKey must be a private JWK (with "d"): a public key cannot sign');
    const implied = typeof alg === 'string' ? alg : impliedAlgorithm(String(kty), undefined, crv);
    chosen ??= implied;
    const wanted = SIGNING.includes(chosen as string) ? jwsAlgorithm(chosen as string) : undefined;
    if (wanted === undefined || wanted.kty !== kty || (wanted.curve !== undefined && wanted.curve !== crv))
      throwConfigError(
        helper,
        `privateKey (a JWK of kty ${JSON.stringify(String(kty).slice(0, 8))}) cannot sign ${chosen ?? 'a client assertion'}`,
      );
    if (kty === 'RSA' && (decodeBase64url(String(n))?.length ?? 0) * 8 < MIN_RSA_BITS)
      throwConfigError(helper, `privateKey: an RSA key needs ${MIN_RSA_BITS} bits or more`);
    const { alg: _alg, key_ops: _ops, use: _use, ext: _ext, ...material } = key as JsonWebKey;
    const { importParams } = wanted;
    imported = once(() => crypto.subtle.importKey('jwk', material, importParams, false, ['sign']));
  } else {
    throwConfigError(
      helper,
      `privateKey must be a PKCS#8 PEM, a private JWK or a private CryptoKey; got ${kindOf(key)}`,
    );
  }
  const signing = jwsAlgorithm(chosen as string) as JwsAlgorithm;
  const header = encodeJson({ alg: signing.name, typ: 'JWT', ...(keyId !== undefined && { kid: keyId }) });
  return async (audience, nowSec) => {
    const iat = Math.floor(nowSec);
    const jti = encodeBase64url(crypto.getRandomValues(new Uint8Array(16)));
    const input = `${header}.${encodeJson({ iss: clientId, sub: clientId, aud: audience, jti, iat, exp: iat + 60 })}`;
    const signature = await crypto.subtle.sign(signing.verifyParams, await imported(), new TextEncoder().encode(input));
    return `${input}.${encodeBase64url(new Uint8Array(signature))}`;
  };
}

const encodeJson = (value: unknown) => encodeBase64url(new TextEncoder().encode(JSON.stringify(value)));

/** `make()` called once, on first use; a failure is kept (the key cannot change). */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}
