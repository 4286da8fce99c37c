/** DPoP proofs (RFC 9449 §4.2) and bound tokens for the tests, signed with real keys. */
import { encodeBase64url } from '../../src/auth/jws/base64url.ts';
import { b64json, encoder, type TestKey } from './jwt.ts';

/** base64url(SHA-256(text)), with Web Crypto: the tests' own computation of `ath` and thumbprints. */
export async function s256(text: string): Promise<string> {
  return encodeBase64url(new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text))));
}

/** RFC 7638 thumbprint of a public JWK, computed here independently of src/. */
export function thumbprint(jwk: JsonWebKey): Promise<string> {
  const required =
    jwk.kty === 'RSA' ? ['e', 'kty', 'n'] : jwk.kty === 'EC' ? ['crv', 'kty', 'x', 'y'] : ['crv', 'kty', 'x'];
  const members = Object.fromEntries(required.map((name) => [name, (jwk as Record<string, unknown>)[name]]));
  return s256(JSON.stringify(members));
}

let counter = 0;
/** A fresh jti. */
export const newJti = () => `jti-${Date.now()}-${++counter}-${Math.random().toString(36).slice(2)}`;

export interface ProofFields {
  htm?: string;
  htu?: string;
  iat?: number;
  jti?: string;
  /** The access token whose hash is `ath`; `ath` given directly wins. */
  token?: string;
  ath?: string;
  /** Header members over `{ typ: 'dpop+jwt', alg, jwk }` (`undefined` removes one). */
  header?: Record<string, unknown>;
  /** Claims over the defaults (`undefined` removes one). */
  claims?: Record<string, unknown>;
  /** Signs with this key instead of the proof's own (a proof whose signature does not verify). */
  signWith?: TestKey;
}

const strip = (object: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));

/** A DPoP proof signed with `key` (its public JWK in the header), `alg` the key's. */
export async function dpopProof(key: TestKey, fields: ProofFields = {}): Promise<string> {
  const alg = key.alg === 'EdDSA' ? 'EdDSA' : key.alg;
  const header = strip({ typ: 'dpop+jwt', alg, jwk: key.jwk, ...fields.header });
  const ath = fields.ath ?? (fields.token === undefined ? undefined : await s256(fields.token));
  const claims = strip({
    jti: fields.jti ?? newJti(),
    htm: fields.htm ?? 'GET',
    htu: fields.htu ?? 'https://agent.example.com/agent',
    iat: fields.iat,
    ath,
    ...fields.claims,
  });
  const input = `${b64json(header)}.${b64json(claims)}`;
  const signature = await (fields.signWith ?? key).sign(encoder.encode(input));
  return `${input}.${encodeBase64url(signature)}`;
}
