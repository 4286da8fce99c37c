// The key-set fetch timeout (design §3 "Key sets", §30): tested with a 50 ms timeout through the test
// hook, and the 5-second default checked by the timer the fetch arms, never by waiting it out.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { routeAuth } from '../../src/auth/index.ts';
import { fetchJsonObject, KEY_SET_TIMEOUT_MS } from '../../src/auth/key-set.ts';
import { bearer, claimsFor, jwksJwt, rsaKey, sign, startServer, type TestServer } from '../helpers/jwks.ts';

let server: TestServer;
before(async () => {
  server = await startServer(() => {}); // accepts the request and never answers
});
after(() => server.close());

test('key-set fetch: a server that never answers is given up after the timeout, and the request skips (401)', async () => {
  const key = await rsaKey('a');
  let fetches = 0;
  const warn = console.warn;
  const warnings: string[] = [];
  console.warn = (...args: unknown[]) => void warnings.push(args.join(' '));
  try {
    // The fetches are counted where they are made: on a loaded machine the 50 ms timer can fire
    // before the request has reached the server, which then never sees it.
    const counted: typeof fetch = (input, init) => {
      fetches++;
      return fetch(input, init);
    };
    const authenticate = routeAuth([jwksJwt(`${server.origin}/jwks`, { timeoutMs: 50, fetch: counted })]);
    const started = Date.now();
    const result = await authenticate(bearer(await sign(key, claimsFor('ada'))));
    const waited = Date.now() - started;
    assert.equal(result.ok ? 'accepted' : result.response.status, 401);
    assert.ok(waited >= 40, `the request waited for the timeout (${waited} ms)`);
    assert.ok(waited < 4_000, `the request was given up at the 50 ms timeout, not the 5 s default (${waited} ms)`);
  } finally {
    console.warn = warn;
  }
  assert.equal(fetches, 1, 'one fetch, given up, not retried');
  assert.ok((server.hits.get('/jwks') ?? 0) <= 1, 'the server saw no second request');
  assert.match(warnings.join('\n'), /could not be fetched \(no answer within 50 ms\)/);
});

test('key-set fetch: the default timeout is 5 seconds (the timer the fetch arms, not waited for)', async () => {
  assert.equal(KEY_SET_TIMEOUT_MS, 5_000);
  const armed: unknown[] = [];
  const original = globalThis.setTimeout;
  globalThis.setTimeout = ((handler: () => void, delay?: number) => {
    armed.push(delay);
    return original(handler, delay);
  }) as typeof setTimeout;
  try {
    const fetched = await fetchJsonObject('https://idp.example/jwks', {
      fetch: async () => Response.json({ keys: [] }),
    });
    assert.deepEqual(fetched, { keys: [] });
  } finally {
    globalThis.setTimeout = original;
  }
  assert.deepEqual(armed, [KEY_SET_TIMEOUT_MS]);
});
