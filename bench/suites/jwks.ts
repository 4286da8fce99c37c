// Suite `jwks`: jwt() with a remote key set next to the static-key jwt() of the same algorithm.
// `static-rs256` (baseline): jwt({ publicKey }) on a prebuilt Request; `jwks-warm-rs256`: jwt({ jwksUrl })
// with a warm cache, same token; `cold-1000`: one op = a new jwt({ jwksUrl }) entry (cold cache) and
// 1,000 concurrent requests, which share one fetch from a key-set server on 127.0.0.1.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwt, routeAuth } from '../../src/auth/index.ts';
import type { AuthFn } from '../../src/auth/index.ts';
import { encodeBase64url } from '../../src/auth/jws/base64url.ts';
import type { SuiteSpec } from '../lib.ts';

const ISSUER = 'https://issuer.example.com';
const AUDIENCE = 'agent-api';
const TARGET = 0.95;
const encoder = new TextEncoder();
const b64json = (value: unknown) => encodeBase64url(encoder.encode(JSON.stringify(value)));

const jwksJwt = (jwksUrl: string): AuthFn => jwt({ jwksUrl, issuer: ISSUER, audience: AUDIENCE });

export default async function suites(): Promise<SuiteSpec[]> {
  const pair = (await crypto.subtle.generateKey(
    { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    true,
    ['sign', 'verify'],
  )) as CryptoKeyPair;
  const { n, e } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  const publicJwk = { kty: 'RSA', n, e };
  const now = Math.floor(Date.now() / 1000);
  const input = `${b64json({ alg: 'RS256', typ: 'JWT', kid: 'bench-1' })}.${b64json({ sub: 'user-1234', iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 24 * 3600 })}`;
  const signature = new Uint8Array(
    await crypto.subtle.sign('RSASSA-PKCS1-v1_5', pair.privateKey, encoder.encode(input)),
  );
  const request = new Request('https://agent.example/agent', {
    headers: { authorization: `Bearer ${input}.${encodeBase64url(signature)}` },
  });

  const body = JSON.stringify({
    keys: [
      { ...publicJwk, kid: 'bench-2' },
      { ...publicJwk, kid: 'bench-1', use: 'sig' },
    ],
  });
  const server = createServer((_, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  // The bench exits when its work is done: neither the server nor its connections hold the process.
  server.on('connection', (socket) => socket.unref());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  server.unref();
  const jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;

  const staticEntry = jwt({ publicKey: publicJwk, issuer: ISSUER, audience: AUDIENCE });
  const warmEntry = jwksJwt(jwksUrl);
  for (const [name, entry] of [
    ['static-rs256', staticEntry],
    ['jwks-warm-rs256', warmEntry],
  ] as const) {
    if ((await entry(request))?.id !== 'user-1234')
      throw new Error(`jwks suite: case ${name} does not accept its request`);
  }
  const cold = async (): Promise<void> => {
    const authenticate = routeAuth([jwksJwt(jwksUrl)]);
    const results = await Promise.all(Array.from({ length: 1000 }, () => authenticate(request)));
    const refused = results.filter((result) => !result.ok).length;
    if (refused > 0) throw new Error(`jwks suite: cold-1000 refused ${refused} valid requests`);
  };
  await cold();

  return [
    {
      suite: 'jwks',
      baseline: 'static-rs256',
      cases: {
        'static-rs256': () => staticEntry(request),
        'jwks-warm-rs256': () => warmEntry(request),
        'cold-1000': cold,
      },
      note: 'RS256, 2048-bit key, same token; cold-1000: one op = new entry + 1,000 concurrent requests (one key-set fetch, 1,000 verifications)',
      verdict: (ops) => {
        const warm = ops['jwks-warm-rs256']! / ops['static-rs256']!;
        const coldMs = 1000 / ops['cold-1000']!;
        return `warm jwksUrl ${warm.toFixed(3)}x static publicKey (target ≥ ${TARGET}x: ${warm >= TARGET ? 'met' : 'MISSED'}); cold start of 1,000 concurrent requests ${coldMs.toFixed(1)} ms`;
      },
    },
  ];
}
