// Shared by the key-set and OIDC tests: a key-set server on 127.0.0.1 whose answers each test
// controls, signing keys, and tokens. Runs on Node, Bun and Deno (node:http is enough here).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeBase64url } from '../../src/auth/jws/base64url.ts';
import type { InternalOptions } from '../../src/auth/internal-options.ts';
import { jwt, type AuthFn, type JwtOptions } from '../../src/auth/index.ts';
import { bearerRequest as bearer } from './requests.ts';

const encoder = new TextEncoder();

export type Handler = (request: IncomingMessage, response: ServerResponse) => void;

export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Requests received, by path. */
  readonly hits: Map<string, number>;
  /** Requests received in all. */
  total(): number;
  /** Replaces how the server answers. */
  answer(handler: Handler): void;
  close(): Promise<void>;
}

export async function startServer(
  handler: Handler = (_, res) => {
    res.statusCode = 404;
    res.end();
  },
): Promise<TestServer> {
  let current = handler;
  const hits = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    current(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    hits,
    total: () => [...hits.values()].reduce((a, b) => a + b, 0),
    answer(next) {
      current = next;
    },
    close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      (server as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
      return closed;
    },
  };
}

/** Answers `body` as JSON with status 200. */
export function json(body: unknown, status = 200): Handler {
  const text = JSON.stringify(body);
  return (_, response) => {
    response.writeHead(status, {
      'content-type': 'application/json',
      'content-length': encoder.encode(text).byteLength,
    });
    response.end(text);
  };
}

/** Answers the value `get()` returns at the time of each request. */
export function jsonOf(get: () => unknown): Handler {
  return (request, response) => json(get())(request, response);
}

export interface SigningKey {
  readonly kid: string | undefined;
  readonly alg: 'RS256' | 'RS384' | 'ES256' | 'ES384';
  readonly privateKey: CryptoKey;
  /** The public JWK as a key set lists it (with `kid` when set). */
  readonly jwk: Record<string, unknown>;
}

const RSA_HASH = { RS256: 'SHA-256', RS384: 'SHA-384' } as const;

export async function rsaKey(
  kid: string | undefined,
  bits = 2048,
  alg: 'RS256' | 'RS384' = 'RS256',
): Promise<SigningKey> {
  const pair = await crypto.subtle.generateKey(
    { name: 'RSASSA-PKCS1-v1_5', modulusLength: bits, publicExponent: new Uint8Array([1, 0, 1]), hash: RSA_HASH[alg] },
    true,
    ['sign', 'verify'],
  );
  const { n, e } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  return {
    kid,
    alg,
    privateKey: pair.privateKey,
    jwk: kid === undefined ? { kty: 'RSA', n, e } : { kty: 'RSA', kid, n, e },
  };
}

export async function ecKey(kid: string | undefined, alg: 'ES256' | 'ES384' = 'ES256'): Promise<SigningKey> {
  const namedCurve = alg === 'ES256' ? 'P-256' : 'P-384';
  const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve }, true, ['sign', 'verify']);
  const { x, y } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  const jwk = { kty: 'EC', crv: namedCurve, x, y };
  return { kid, alg, privateKey: pair.privateKey, jwk: kid === undefined ? jwk : { ...jwk, kid } };
}

const segment = (value: unknown): string => encodeBase64url(encoder.encode(JSON.stringify(value)));

/** A JWS signed by `key`; `header` adds members (or replaces `alg`/`kid`). */
export async function sign(
  key: SigningKey,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
): Promise<string> {
  const protectedHeader = { alg: key.alg, ...(key.kid === undefined ? {} : { kid: key.kid }), ...header };
  const input = `${segment(protectedHeader)}.${segment(claims)}`;
  const params = key.alg.startsWith('RS')
    ? { name: 'RSASSA-PKCS1-v1_5' }
    : { name: 'ECDSA', hash: key.alg === 'ES256' ? 'SHA-256' : 'SHA-384' };
  const signature = new Uint8Array(await crypto.subtle.sign(params, key.privateKey, encoder.encode(input)));
  return `${input}.${encodeBase64url(signature)}`;
}

export const AUDIENCE = 'agent-api';

/** Claims that pass with `audience: AUDIENCE`, valid for an hour of real time. */
export function claimsFor(sub: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { sub, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 3600, ...extra };
}

/** A controllable clock in milliseconds for the key-set cache. */
export function manualClock(start = 1_000_000): { now: () => number; advance(ms: number): void } {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}

export { bearer };

/** `jwt({ jwksUrl, audience: AUDIENCE, ...options })` with the key-set internals of a test. */
export function jwksJwt(jwksUrl: string, internals: InternalOptions, options: Partial<JwtOptions> = {}): AuthFn {
  return jwt({ jwksUrl, audience: AUDIENCE, ...options, _internal: internals });
}
