// limits.failures (design §22, §25): 401s per client address, before auth. Each request takes a
// failure slot before the auth list runs and gives it back unless answered 401, so guesses at
// once are bounded too; past `limit` 401s in the window, the address gets 429 without any entry
// of the auth list running, until the window frees; only 401s count; a handler that meets a
// request with no known address answers 500 and logs once what to give it. On Node, Bun and Deno.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthError, protectedResourceMetadata } from '../../src/auth/index.ts';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import type { AuthFn } from '../../src/auth/types.ts';
import { agentHandler } from '../../src/http/index.ts';
import { limitStoreAt } from '../helpers/test-hook.ts';
import { captureConsoleError } from '../helpers/console.ts';

const BASE = 'https://agent.example/agent';
type Handler = (request: Request) => Promise<Response>;

const get = (
  handler: Handler,
  { token, address, path = '/chat/s1' }: { token?: string; address?: string; path?: string },
) =>
  handler(
    new Request(`${BASE}${path}`, {
      headers: {
        ...(token !== undefined && { authorization: `Bearer ${token}` }),
        ...(address !== undefined && { 'x-test-address': address }),
      },
    }),
  );
const testAddress = (request: Request) => request.headers.get('x-test-address') ?? undefined;

/** An entry that accepts the token `good` (as alice), refuses `forbidden` with 403, and counts every call. */
function countingEntry() {
  const calls = { count: 0 };
  const entry: AuthFn = (request) => {
    calls.count++;
    const token = request.headers.get('authorization')?.slice(7);
    if (token === 'forbidden') throw new AuthError(403);
    return token === 'good' ? { id: 'alice', type: 'user' } : null;
  };
  return { entry, calls };
}

function handlerWith(entry: AuthFn, clock: () => number, limit = 3) {
  const agent = createAgent({ name: 'failures', model: echoModel() });
  return agentHandler(agent, {
    basePath: '/agent',
    auth: entry,
    limits: { failures: { limit, windowSec: 60 }, clientAddress: testAddress, store: limitStoreAt(1000, clock) },
  });
}

test('failures { limit: 3 }: after three 401s from an address, its requests get 429 without any entry of the auth list running, until the window frees', async () => {
  let now = 600_030;
  const { entry, calls } = countingEntry();
  const handler = handlerWith(entry, () => now);
  const address = '203.0.113.5';
  for (let i = 0; i < 3; i++) assert.equal((await get(handler, { token: 'guess', address })).status, 401);
  assert.equal(calls.count, 3);
  for (const token of ['guess', 'good', undefined]) {
    const refused = await get(handler, { token, address });
    assert.equal(refused.status, 429, `token ${token}`);
    assert.deepEqual(await refused.json(), { error: 'Too Many Requests' });
    assert.equal(refused.headers.get('content-type'), 'application/json');
    assert.equal(refused.headers.get('cache-control'), 'no-store');
    assert.equal(refused.headers.get('retry-after'), '30');
    assert.equal(refused.headers.get('ratelimit-policy'), '"failures";q=3;w=60');
    assert.equal(refused.headers.get('ratelimit'), '"failures";r=0;t=30');
    assert.equal(refused.headers.get('www-authenticate'), null);
  }
  assert.equal(calls.count, 3, 'no entry ran for the refused requests: a guess costs no verification');
  // Another address is another count.
  assert.equal((await get(handler, { token: 'good', address: '203.0.113.6' })).status, 404);
  assert.equal(calls.count, 4);
  now += 30;
  assert.equal(
    (await get(handler, { token: 'good', address })).status,
    404,
    'the window freed: auth runs again (the session is unknown: 404)',
  );
  assert.equal(calls.count, 5);
});

test('failures counts only 401s: accepted callers and 403s never lock an address out', async () => {
  const { entry, calls } = countingEntry();
  const handler = handlerWith(entry, () => 1_000, 2);
  const address = '198.51.100.77';
  for (let i = 0; i < 5; i++) {
    assert.equal((await get(handler, { token: 'good', address })).status, 404);
    assert.equal((await get(handler, { token: 'forbidden', address })).status, 403);
  }
  assert.equal((await get(handler, { token: 'bad', address })).status, 401);
  assert.equal((await get(handler, { token: 'good', address })).status, 404, 'one 401 of two');
  assert.equal((await get(handler, { address })).status, 401);
  assert.equal((await get(handler, { token: 'good', address })).status, 429);
  assert.equal(calls.count, 13, 'the refused request ran no entry');
});

test('failures keys an IPv6 client by its /64: a new address of the same network is the same count', async () => {
  const { entry } = countingEntry();
  const handler = handlerWith(entry, () => 1_000, 2);
  assert.equal((await get(handler, { token: 'bad', address: '2001:db8:5:6::1' })).status, 401);
  assert.equal((await get(handler, { token: 'bad', address: '2001:db8:5:6::2' })).status, 401);
  assert.equal((await get(handler, { token: 'bad', address: '2001:db8:5:6:1:2:3:4' })).status, 429);
  assert.equal((await get(handler, { token: 'bad', address: '2001:db8:5:7::1' })).status, 401);
});

test('failures with no known client address answers 500 and logs once that clientAddress is needed; no entry runs; health and the metadata document still answer', async () => {
  const { entry, calls } = countingEntry();
  const agent = createAgent({ name: 'failures', model: echoModel() });
  const metadata = protectedResourceMetadata({
    resource: 'https://agent.example/agent',
    authorizationServers: ['https://issuer.example'],
  });
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: entry,
    protectedResource: metadata,
    limits: { failures: { limit: 3, windowSec: 60 } },
  });
  const { result, calls: logged } = await captureConsoleError(async () => {
    const answers = [];
    for (const token of ['good', 'bad', undefined]) answers.push(await get(handler, { token }));
    return answers;
  });
  for (const answer of result) {
    assert.equal(answer.status, 500);
    assert.deepEqual(await answer.json(), { error: 'Internal Server Error' });
  }
  assert.deepEqual(logged, [['agentward: limits.failures needs the client address: give clientAddress']]);
  assert.equal(calls.count, 0);
  assert.equal((await get(handler, { path: '/health' })).status, 200);
  assert.equal(
    (await handler(new Request('https://agent.example/.well-known/oauth-protected-resource/agent'))).status,
    200,
  );
  // clientAddress answering nothing, and no socket address: the same.
  const unknown = agentHandler(agent, {
    basePath: '/agent',
    auth: entry,
    limits: { failures: { limit: 3, windowSec: 60 }, clientAddress: () => undefined },
  });
  const again = await captureConsoleError(() => get(unknown, { token: 'good' }));
  assert.equal(again.result.status, 500);
  assert.equal(again.calls.length, 1);
});

test('failures and requests together: a 401 is not a request of any principal; an accepted caller counts its requests', async () => {
  const { entry } = countingEntry();
  const agent = createAgent({ name: 'failures', model: echoModel() });
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: entry,
    limits: {
      failures: { limit: 5, windowSec: 60 },
      requests: { limit: 2, windowSec: 60 },
      clientAddress: testAddress,
    },
  });
  for (let i = 0; i < 4; i++) assert.equal((await get(handler, { token: 'bad', address: '192.0.2.1' })).status, 401);
  assert.equal((await get(handler, { token: 'good', address: '192.0.2.1' })).status, 404);
  assert.equal((await get(handler, { token: 'good', address: '192.0.2.1' })).status, 404);
  const refused = await get(handler, { token: 'good', address: '192.0.2.1' });
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('ratelimit-policy'), '"requests";q=2;w=60');
});

test('failures counts first: 600 guesses at once through a slow entry (an introspection call) run the auth list at most limit (5) times; an accepted caller gives its slot back', async () => {
  let calls = 0;
  const slow: AuthFn = async (request) => {
    calls++;
    await new Promise((resolve) => setTimeout(resolve, 5));
    return request.headers.get('authorization') === 'Bearer good' ? { id: 'alice', type: 'user' } : null;
  };
  const handler = handlerWith(slow, () => 1_000, 5);
  const address = '203.0.113.50';
  for (let i = 0; i < 8; i++) assert.equal((await get(handler, { token: 'good', address })).status, 404);
  calls = 0;
  const answers = await Promise.all(Array.from({ length: 600 }, () => get(handler, { token: 'guess', address })));
  const statuses = answers.map((answer) => answer.status);
  assert.equal(calls, 5, 'five guesses reached the entry');
  assert.equal(statuses.filter((status) => status === 401).length, 5);
  assert.equal(statuses.filter((status) => status === 429).length, 595);
});
