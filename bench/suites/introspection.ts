// Suite `introspection` (design §17, issue 30): a request with an opaque token through
// introspection() when its answer is kept (a cache hit), when every request calls the endpoint
// (a local one, node:http on loopback, answering at once), beside jwt()'s cache hit for the same
// shape of request. Targets: a hit ≥ 50x faster than a call, and within 1.5x of jwt()'s hit.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { introspection, jwt } from '../../src/auth/index.ts';
import { encodeBase64url } from '../../src/auth/jws/base64url.ts';
import type { SuiteSpec } from '../lib.ts';

const encoder = new TextEncoder();

export default async function suites(): Promise<SuiteSpec[]> {
  const now = Math.floor(Date.now() / 1000);
  const answer = JSON.stringify({
    active: true,
    sub: 'user-1234',
    client_id: 'app',
    aud: 'agent-api',
    exp: now + 24 * 3600,
    scope: 'agent:chat',
  });
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(answer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  server.unref();
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/introspect`;
  const token = encodeBase64url(crypto.getRandomValues(new Uint8Array(32))); // an opaque token of 43 characters
  const request = new Request('https://agent.example/agent', { headers: { authorization: `Bearer ${token}` } });
  const cached = introspection({ endpoint, clientId: 'rs', clientSecret: 'secret', audience: 'agent-api' });
  const calling = introspection({
    endpoint,
    clientId: 'rs',
    clientSecret: 'secret',
    audience: 'agent-api',
    cache: false,
  });

  const secret = 'bench-secret-bench-secret-bench-secret-0123456789';
  const input = `${encodeBase64url(encoder.encode(JSON.stringify({ alg: 'HS256', typ: 'JWT' })))}.${encodeBase64url(encoder.encode(JSON.stringify({ sub: 'user-1234', aud: 'agent-api', iat: now, exp: now + 24 * 3600 })))}`;
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const jws = `${input}.${encodeBase64url(new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(input))))}`;
  const jwtCached = jwt({ secret, audience: 'agent-api', cache: true });
  const jwtRequest = new Request('https://agent.example/agent', { headers: { authorization: `Bearer ${jws}` } });
  for (const [entry, req] of [
    [cached, request],
    [calling, request],
    [jwtCached, jwtRequest],
  ] as const) {
    if ((await entry(req))?.id !== 'user-1234')
      throw new Error('introspection suite: a fixture request is not accepted');
  }
  return [
    {
      suite: 'introspection',
      baseline: 'introspection-call',
      cases: {
        'introspection-call': () => calling(request),
        'introspection-cache-hit': () => cached(request),
        'jwt-cache-hit': () => jwtCached(jwtRequest),
      },
      note: 'introspection-call: every request POSTs to a local endpoint (node:http on loopback, answering at once); *-cache-hit: the answer (or verified token) is kept',
      verdict: (ops) => {
        const overCall = ops['introspection-cache-hit']! / ops['introspection-call']!;
        const toJwt = ops['jwt-cache-hit']! / ops['introspection-cache-hit']!;
        return `a kept answer is ${overCall.toFixed(0)}x faster than a call (target ≥ 50x: ${overCall >= 50 ? 'met' : 'MISSED'}); jwt()'s cache hit is ${toJwt.toFixed(2)}x as fast (target within 1.5x: ${toJwt <= 1.5 ? 'met' : 'MISSED'})`;
      },
    },
  ];
}
