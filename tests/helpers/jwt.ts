// Shared by tests/jwt*.test.ts and tests/jose*.test.ts: vectors, keys, token signing, a pinned clock.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { routeAuth } from '../../src/auth/route-auth.ts';
import type { AuthFn, AuthResult } from '../../src/auth/types.ts';
import { encodeBase64url } from '../../src/auth/jws/base64url.ts';
import { bearerRequest as bearer } from './requests.ts';

/** The test vectors the repository carries (fixtures/vectors: Wycheproof, RFC examples; their sources and licences in its README). */
export const VECTORS_DIR = fileURLToPath(new URL('../../fixtures/vectors/', import.meta.url));

export function readVectors<T = any>(path: string): T {
  return JSON.parse(readFileSync(VECTORS_DIR + path, 'utf8')) as T;
}

export const encoder = new TextEncoder();
export const b64 = (text: string): string => encodeBase64url(encoder.encode(text));
export const b64json = (value: unknown): string => b64(typeof value === 'string' ? value : JSON.stringify(value));

export function hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/** The pinned clock of these tests, in seconds. */
export const NOW = 1_800_000_000;
export const ISSUER = 'https://issuer.example.com';
export const AUDIENCE = 'agent-api';
export const SECRET = 'a-test-secret-that-is-at-least-32-bytes-long';

/** Valid claims at `NOW`, with `extra` merged over them (`undefined` removes a claim). */
export function claims(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const all: Record<string, unknown> = {
    sub: 'user-1',
    iss: ISSUER,
    aud: AUDIENCE,
    exp: NOW + 600,
    iat: NOW - 10,
    ...extra,
  };
  for (const [name, value] of Object.entries(all)) if (value === undefined) delete all[name];
  return all;
}

export type Sign = (input: Uint8Array<ArrayBuffer>) => Promise<Uint8Array>;

const HASH: Record<string, string> = { '256': 'SHA-256', '384': 'SHA-384', '512': 'SHA-512' };

export async function hmacSigner(secret: string | Uint8Array<ArrayBuffer>, alg = 'HS256'): Promise<Sign> {
  const bytes = typeof secret === 'string' ? encoder.encode(secret) : secret;
  const key = await crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: HASH[alg.slice(2)]! }, false, ['sign']);
  return async (input) => new Uint8Array(await crypto.subtle.sign('HMAC', key, input));
}

export interface TestKey {
  readonly alg: string;
  readonly sign: Sign;
  readonly publicKey: CryptoKey;
  /** Public JWK without `key_ops` and `ext`. */
  readonly jwk: JsonWebKey;
  readonly privateJwk: JsonWebKey;
  readonly pem: string;
  readonly spki: Uint8Array<ArrayBuffer>;
}

export function toPem(der: Uint8Array, label = 'PUBLIC KEY'): string {
  let binary = '';
  for (const byte of der) binary += String.fromCharCode(byte);
  return `-----BEGIN ${label}-----\n${btoa(binary).replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END ${label}-----\n`;
}

const CURVES: Record<string, string> = { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' };

/** A fresh key pair for `RS*`/`PS*` (2048 bits unless given), `ES256`, `ES384`, `ES512` or `EdDSA` (Ed25519). */
export async function testKey(alg: string, modulusLength = 2048): Promise<TestKey> {
  const hash = HASH[alg.slice(2)]!;
  const family = alg.slice(0, 2);
  const rsaName = family === 'PS' ? 'RSA-PSS' : 'RSASSA-PKCS1-v1_5';
  const params =
    family === 'RS' || family === 'PS'
      ? { name: rsaName, modulusLength, publicExponent: new Uint8Array([1, 0, 1]), hash }
      : alg === 'EdDSA'
        ? { name: 'Ed25519' }
        : { name: 'ECDSA', namedCurve: CURVES[alg]! };
  const pair = (await crypto.subtle.generateKey(params, true, ['sign', 'verify'])) as CryptoKeyPair;
  const signParams =
    family === 'RS'
      ? { name: rsaName }
      : family === 'PS'
        ? { name: rsaName, saltLength: Number(alg.slice(2)) / 8 }
        : alg === 'EdDSA'
          ? { name: 'Ed25519' }
          : { name: 'ECDSA', hash };
  const { key_ops: _ops, ext: _ext, alg: _alg, ...jwk } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  const { key_ops: _pops, ext: _pext, ...privateJwk } = await crypto.subtle.exportKey('jwk', pair.privateKey);
  const spki = new Uint8Array(await crypto.subtle.exportKey('spki', pair.publicKey));
  return {
    alg,
    sign: async (input) => new Uint8Array(await crypto.subtle.sign(signParams, pair.privateKey, input)),
    publicKey: pair.publicKey,
    jwk,
    privateJwk,
    pem: toPem(spki),
    spki,
  };
}

/** A compact JWS: header and payload given as objects or raw JSON text, signed with `sign` (none: empty signature). */
export async function signToken(header: unknown, payload: unknown, sign?: Sign): Promise<string> {
  const input = `${b64json(header)}.${b64json(payload)}`;
  const signature = sign === undefined ? new Uint8Array(0) : await sign(encoder.encode(input));
  return `${input}.${encodeBase64url(signature)}`;
}

export { bearer };

/** Runs the request through `routeAuth` like a route would. */
export function authenticate(entries: AuthFn | readonly AuthFn[], token: string): Promise<AuthResult> {
  return routeAuth(entries)(bearer(token));
}

/** The status the list answers: 200 when accepted. */
export async function statusOf(entries: AuthFn | readonly AuthFn[], token: string): Promise<number> {
  const result = await authenticate(entries, token);
  return result.ok ? 200 : result.response.status;
}

/** Silences `console.error` (a 500 logs) while `run` runs; returns what was logged. */
export async function capturingErrors<T>(run: () => Promise<T>): Promise<{ value: T; logged: unknown[][] }> {
  const original = console.error;
  const logged: unknown[][] = [];
  console.error = (...args: unknown[]) => void logged.push(args);
  try {
    return { value: await run(), logged };
  } finally {
    console.error = original;
  }
}

/** The runtime running the tests, detected: `node`, `bun`, `deno` or `workerd`. */
export function runtimeName(): string {
  const g = globalThis as { Bun?: unknown; Deno?: unknown; navigator?: { userAgent?: string } };
  if (g.navigator?.userAgent === 'Cloudflare-Workers') return 'workerd';
  return g.Bun !== undefined ? 'bun' : g.Deno !== undefined ? 'deno' : 'node';
}

// One Wycheproof key and its first valid vector per algorithm that some runtime may lack.
const PROBES: Record<
  string,
  [
    file: string,
    params: Algorithm | EcKeyImportParams | RsaHashedImportParams,
    verify: string | EcdsaParams | RsaPssParams,
  ]
> = {
  EdDSA: ['ed25519_test.json', { name: 'Ed25519' }, 'Ed25519'],
  ES512: [
    'ecdsa_secp521r1_sha512_p1363_test.json',
    { name: 'ECDSA', namedCurve: 'P-521' },
    { name: 'ECDSA', hash: 'SHA-512' },
  ],
  PS256: [
    'rsa_pss_2048_sha256_mgf1_32_test.json',
    { name: 'RSA-PSS', hash: 'SHA-256' },
    { name: 'RSA-PSS', saltLength: 32 },
  ],
};
const support = new Map<string, Promise<string | undefined>>();

/**
 * Why this runtime cannot verify `alg` (`EdDSA`, `ES512`, `PS256`), or `undefined` when it can:
 * detected by importing a Wycheproof key and verifying its first valid vector, never assumed.
 */
export function runtimeLacks(alg: string): Promise<string | undefined> {
  const probe = PROBES[alg];
  if (probe === undefined) return Promise.resolve(undefined);
  let known = support.get(alg);
  if (known === undefined) {
    known = (async () => {
      const [file, params, verify] = probe;
      const group = readVectors(`wycheproof/${file}`).testGroups[0];
      const vector = group.tests.find((t: { result: string }) => t.result === 'valid');
      try {
        const key = await crypto.subtle.importKey('spki', hexBytes(group.publicKeyDer), params, false, ['verify']);
        return (await crypto.subtle.verify(verify, key, hexBytes(vector.sig), hexBytes(vector.msg)))
          ? undefined
          : 'a valid signature does not verify';
      } catch (error) {
        return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      }
    })();
    support.set(alg, known);
  }
  return known;
}
