import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { routeAuth } from '../../src/auth/index.ts';
import { KEY_SET_TIMEOUT_MS } from '../../src/auth/key-set.ts';
import { bearer, claimsFor, jwksJwt, rsaKey, sign, startServer, type TestServer } from '../helpers/jwks.ts';

let server: TestServer;
before(async () => {
  server = await startServer(() => {}); // accepts the request and never answers
});
after(() => server.close());

test('key-set fetch: a server that never answers is given up after the 5-second timeout, and the request skips (401)', async () => {
  assert.equal(KEY_SET_TIMEOUT_MS, 5000);
  const key = await rsaKey('a');
  const authenticate = routeAuth([jwksJwt(`${server.origin}/jwks`, {})]);
  const started = Date.now();
  const result = await authenticate(bearer(await sign(key, claimsFor('ada'))));
  const waited = Date.now() - started;
  assert.equal(result.ok ? 'accepted' : result.response.status, 401);
  assert.ok(waited < 6000, `the request waited ${waited} ms`);
  assert.equal(server.hits.get('/jwks'), 1);
});
