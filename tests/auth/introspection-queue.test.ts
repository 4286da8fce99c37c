// Design §20: introspection() under a flood. At most 16 calls at once; a request beyond waits in
// line, first in, first out, at most timeoutMs and behind at most 1,000 others; a token already
// being asked joins that call (not on Workers, where each request makes its own). So garbage
// tokens slow valid ones down but do not get them refused. And an answer whose token_type is
// not an access token's skips (`token-type`). The endpoint here is a fetch that answers after a
// delay; tests/auth/introspection.node.test.ts floods a real HTTP endpoint, and inside workerd
// requests of their own. Runs on Node, Bun, Deno and inside workerd (tests/auth/jws/workerd.node.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { introspection, routeAuth, type AuthFn } from '../../src/auth/index.ts';
import { callSlots } from '../../src/auth/call-slots.ts';
import { MAX_IN_FLIGHT, MAX_WAITING } from '../../src/auth/introspection.ts';
import { isWorkersRuntime } from '../../src/auth/attempt-gate.ts';
import type { Refusal } from '../../src/auth/refusals.ts';

const ENDPOINT = 'https://id.example.com/introspect';
const AUDIENCE = 'https://agent.example.com/agent';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An introspection endpoint as a fetch: answers after `delayMs`; tokens starting `valid` are active. Counts calls. */
function slowEndpoint(
  delayMs: number,
  answer: (token: string) => Record<string, unknown> = (token) =>
    token.startsWith('valid') ? { active: true, sub: token, aud: AUDIENCE } : { active: false },
) {
  const stats = { calls: 0, inFlight: 0, maxInFlight: 0, tokens: [] as string[] };
  const fetch = async (_url: string, init: RequestInit) => {
    const token = new URLSearchParams(init.body as string).get('token') as string;
    stats.calls++;
    stats.tokens.push(token);
    stats.maxInFlight = Math.max(stats.maxInFlight, ++stats.inFlight);
    try {
      await sleep(delayMs);
      return new Response(JSON.stringify(answer(token)), { headers: { 'content-type': 'application/json' } });
    } finally {
      stats.inFlight--;
    }
  };
  return { fetch, stats };
}

const entryOf = (
  fetch: (url: string, init: RequestInit) => Promise<Response>,
  options: Record<string, unknown> = {},
  perRequestFetch?: boolean,
): AuthFn =>
  introspection({
    endpoint: ENDPOINT,
    clientId: 'rs',
    clientSecret: 'rs-secret',
    audience: AUDIENCE,
    cache: false,
    ...options,
    _internal: { fetch, ...(perRequestFetch !== undefined && { perRequestFetch }) },
  });

async function status(entry: AuthFn, token: string, refusals?: Refusal[]): Promise<number> {
  const result = await routeAuth(
    entry,
    refusals === undefined ? {} : { onRefused: (refusal) => void refusals.push(refusal) },
  )(new Request(AUDIENCE, { headers: { authorization: `Bearer ${token}` } }));
  return result.ok ? 200 : result.response.status;
}

test('32 garbage requests kept in flight against an endpoint that answers in 200 ms: every valid token sent meanwhile is accepted', async () => {
  const { fetch, stats } = slowEndpoint(200);
  const entry = entryOf(fetch);
  let running = true;
  let garbage = 0;
  const flood = Array.from({ length: 32 }, async (_, loop) => {
    while (running) {
      assert.equal(await status(entry, `garbage-${loop}-${garbage++}`), 401);
      // A request refused at once (no call) must not starve the timers: resend on the next turn.
      await sleep(0);
    }
  });
  await sleep(250);
  const valid = await Promise.all(Array.from({ length: 10 }, (_, i) => status(entry, `valid-${i}`)));
  await sleep(100);
  const late = await Promise.all(Array.from({ length: 5 }, (_, i) => status(entry, `valid-late-${i}`)));
  running = false;
  await Promise.all(flood);
  assert.deepEqual(valid, Array(10).fill(200), 'every valid token sent during the flood');
  assert.deepEqual(late, Array(5).fill(200));
  assert.ok(stats.maxInFlight <= MAX_IN_FLIGHT, `${stats.maxInFlight} calls at once`);
  assert.equal(stats.maxInFlight, MAX_IN_FLIGHT, 'the flood filled every slot');
  assert.ok(garbage >= 48, `the flood kept going (${garbage} garbage requests)`);
});

test('first in, first out: requests are served in the order they came, whatever the token', async () => {
  const { fetch, stats } = slowEndpoint(50);
  const entry = entryOf(fetch);
  const order = Array.from({ length: MAX_IN_FLIGHT * 3 }, (_, i) => (i % 5 === 0 ? `valid-${i}` : `garbage-${i}`));
  const statuses = await Promise.all(order.map((token) => status(entry, token)));
  assert.deepEqual(stats.tokens, order, 'the endpoint was asked in arrival order');
  assert.deepEqual(
    statuses,
    order.map((token) => (token.startsWith('valid') ? 200 : 401)),
  );
});

test('a wait is bounded by timeoutMs: a request that gets no slot in time skips (introspection-unavailable) and is never asked', async () => {
  const { fetch, stats } = slowEndpoint(1_000);
  const entry = entryOf(fetch, { timeoutMs: 200 });
  const refusals: Refusal[] = [];
  // 16 calls that time out at 200 ms, 16 waiting behind them (served at 200 ms, done at 400 ms), then one more.
  const ahead = Array.from({ length: 2 * MAX_IN_FLIGHT }, (_, i) => status(entry, `valid-${i}`));
  assert.equal(await status(entry, 'valid-waiting', refusals), 401);
  assert.equal(refusals[0]?.reason, 'introspection-unavailable');
  assert.deepEqual(await Promise.all(ahead), Array(2 * MAX_IN_FLIGHT).fill(401), 'their calls timed out');
  assert.ok(!stats.tokens.includes('valid-waiting'), 'the request whose wait ran out never reached the endpoint');
});

test('at most 1,000 wait in line per entry: one more skips at once, without a call', async () => {
  const { fetch, stats } = slowEndpoint(20);
  const entry = entryOf(fetch);
  let firstDone = false;
  const ahead = Array.from({ length: MAX_IN_FLIGHT + MAX_WAITING }, (_, i) => status(entry, `garbage-${i}`));
  void ahead[0]!.then(() => (firstDone = true));
  const refusals: Refusal[] = [];
  assert.equal(await status(entry, 'valid-one-too-many', refusals), 401);
  assert.equal(firstDone, false, 'refused before the first call in flight came back');
  assert.equal(refusals[0]?.reason, 'introspection-unavailable');
  assert.equal((await Promise.all(ahead)).length, MAX_IN_FLIGHT + MAX_WAITING);
  assert.ok(!stats.tokens.includes('valid-one-too-many'));
  assert.equal(stats.calls, MAX_IN_FLIGHT + MAX_WAITING, 'all those in line were served');
});

test('callSlots(): a slot for each of the first `size`, FIFO after that, at most `maxWaiting` in line, each wait bounded; a lease ends a slot never released', async () => {
  let time = 0;
  const slots = callSlots(2, 2, 1_000, () => time);
  const a = await slots.take(100);
  const b = await slots.take(100);
  assert.ok(a && b);
  const served: string[] = [];
  const c = slots.take(10_000).then((release) => (served.push('c'), release));
  const d = slots.take(10_000).then((release) => (served.push('d'), release));
  assert.equal(await slots.take(10_000), undefined, 'the line holds 2: a third waiter skips at once');
  b!();
  b!(); // twice: one slot back, not two
  const releaseC = await c;
  assert.ok(releaseC);
  await sleep(1);
  assert.deepEqual(served, ['c'], 'd still waits: one slot came back');
  a!();
  assert.ok(await d);
  assert.deepEqual(served, ['c', 'd']);
  // A wait that runs out gets nothing and leaves the line.
  const e = slots.take(20);
  assert.equal(await e, undefined);
  // Slots held past their lease (a cancelled request that never released) are free again.
  time += 1_000;
  assert.ok(await slots.take(100));
  assert.ok(await slots.take(100));
});

test('one call per token at once: requests for a token being asked join its call (on Workers each makes its own)', async () => {
  const { fetch, stats } = slowEndpoint(100);
  const shared = entryOf(fetch);
  const all = await Promise.all(Array.from({ length: 20 }, () => status(shared, 'valid-shared')));
  assert.deepEqual(all, Array(20).fill(200));
  assert.equal(stats.calls, isWorkersRuntime() ? 20 : 1, 'one call for twenty requests of one token');
  stats.calls = 0;
  const perRequest = entryOf(fetch, {}, true);
  assert.deepEqual(
    await Promise.all(Array.from({ length: 5 }, () => status(perRequest, 'valid-own'))),
    Array(5).fill(200),
  );
  assert.equal(stats.calls, 5, 'Workers mode: each request its own call');
});

test('token_type: an active answer for a token that is not an access token skips (token-type); Bearer, DPoP, access_token in any case, or none, are taken', async () => {
  const types: Record<string, unknown> = {
    'valid-refresh': 'refresh_token',
    'valid-id': 'id_token',
    'valid-na': 'N_A',
    'valid-number': 5,
    'valid-empty': '',
    'valid-bearer': 'Bearer',
    'valid-lower': 'bearer',
    'valid-dpop': 'DPoP',
    'valid-access': 'access_token',
    'valid-upper': 'ACCESS_TOKEN',
    'valid-none': undefined,
  };
  const { fetch } = slowEndpoint(0, (token) => ({ active: true, sub: token, aud: AUDIENCE, token_type: types[token] }));
  const entry = entryOf(fetch, { cache: { maxAgeSec: 60 } });
  for (const [token, type] of Object.entries(types)) {
    const refusals: Refusal[] = [];
    const taken = type === undefined || (typeof type === 'string' && /^(bearer|dpop|access_token)$/i.test(type));
    // DPoP-typed answers without cnf.jkt are unbound tokens: taken as Bearer.
    assert.equal(await status(entry, token, refusals), taken ? 200 : 401, token);
    assert.deepEqual(
      refusals.map((refusal) => refusal.reason),
      taken ? [] : ['token-type'],
      token,
    );
    // Kept answers are checked again: still refused from the cache.
    if (!taken) assert.equal(await status(entry, token), 401, `${token} (kept)`);
  }
});
