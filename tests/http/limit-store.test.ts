// The limit stores that need no server (design §22, §25): the memory store (the default of
// `limits`) and the Durable Object store on stand-ins for a namespace and its storage run the
// shared limit store contract; the memory store's bound (per kind of key, the least recently
// counted window going first, a new key never refused) on a clock of the test's own. PostgreSQL runs the contract in
// tests/postgres/limit-store.node.test.ts, the real Durable Objects in tests/cloudflare/limits.node.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryLimitStore } from '../../src/http/limit-store.ts';
import { limitStoreAt } from '../helpers/test-hook.ts';
import { durableObjectLimitStore } from '../../src/cloudflare/durable-object-limit-store.ts';
import { limitNamespaceStandIn as namespaceStandIn } from '../helpers/limit-namespace.ts';
import { limitStoreContract } from '../helpers/limit-store-contract.ts';

limitStoreContract('memoryLimitStore', async () => ({ store: memoryLimitStore(), expiresLeases: false }));

limitStoreContract('durableObjectLimitStore', async () => ({
  store: durableObjectLimitStore(namespaceStandIn()),
  expiresLeases: true,
}));

test('durableObjectLimitStore: each key is counted by an object of its own', async () => {
  const namespace = namespaceStandIn();
  const store = durableObjectLimitStore(namespace);
  await store.hit('requests/60:p["a","1"]', 60, 1, 5);
  await store.hit('requests/60:p["a","2"]', 60, 1, 5);
  await store.acquire('concurrent:p["a","1"]', 'lease', 1, 60);
  assert.equal(namespace.objects.size, 3);
});

test('durableObjectLimitStore: an object that cannot be reached, or fails, is STORE_UNAVAILABLE (the route answers 503)', async () => {
  const throwing = durableObjectLimitStore({
    idFromName: (name) => name,
    get: () => ({ fetch: () => Promise.reject(new Error('network lost')) }),
  });
  await assert.rejects(
    throwing.hit('k', 60, 1, 1),
    (error: Error & { code?: string }) => error.code === 'STORE_UNAVAILABLE',
  );
  const failing = durableObjectLimitStore({
    idFromName: (name) => name,
    get: () => ({ fetch: async () => new Response('boom', { status: 500 }) }),
  });
  await assert.rejects(
    failing.acquire('k', 'l', 1, 60),
    (error: Error & { code?: string }) => error.code === 'STORE_UNAVAILABLE' && !error.message.includes('boom'),
  );
});

test('memoryLimitStore: options are closed and checked', () => {
  assert.throws(() => memoryLimitStore({ maxKey: 5 } as never), /unknown option "maxKey" \(did you mean "maxKeys"\?\)/);
  for (const maxKeys of [0, -1, 1.5, Number.NaN, '10'])
    assert.throws(() => memoryLimitStore({ maxKeys } as never), /maxKeys must be a positive integer/);
  // The test hook is closed too: a clock in milliseconds, nothing else.
  assert.throws(() => memoryLimitStore({ _internal: { clock: () => 0 } } as never), /unknown option "clock"/);
  assert.throws(() => memoryLimitStore({ _internal: { now: 5 } } as never), /_internal.now must be a function/);
  assert.throws(() => memoryLimitStore({ _internal: null } as never), /_internal must be an object/);
});

test('memoryLimitStore: past maxKeys windows of one kind, the least recently counted goes; a new key is never refused, other kinds untouched', async () => {
  let now = 1_000_000;
  const store = limitStoreAt(2, () => now);
  assert.equal((await store.hit('requests/10:pa', 10, 1, 5)).allowed, true);
  now += 5;
  assert.equal((await store.hit('requests/10:pb', 10, 1, 5)).allowed, true);
  assert.equal((await store.hit('requests/10:aaddress', 10, 3, 5)).allowed, true, 'addresses are a kind of their own');
  assert.equal(await store.acquire('concurrent:pc', 'lease', 2, 60), true);
  // Full: a new principal is counted, and the least recently counted of its kind (a) goes.
  assert.deepEqual(await store.hit('requests/10:pd', 10, 1, 5), {
    allowed: true,
    count: 1,
    resetSec: 5,
    start: 1_000_000,
  });
  assert.equal((await store.hit('requests/10:pa', 10, 0, 5)).count, 0, 'a was forgotten');
  assert.equal((await store.hit('requests/10:pb', 10, 0, 5)).count, 1, 'b was not');
  assert.equal((await store.hit('requests/10:aaddress', 10, 0, 5)).count, 3);
  // Counting b again makes d the least recent.
  await store.hit('requests/10:pb', 10, 1, 5);
  await store.hit('requests/10:pe', 10, 1, 5);
  assert.equal((await store.hit('requests/10:pd', 10, 0, 5)).count, 0, 'd went');
  assert.equal((await store.hit('requests/10:pb', 10, 0, 5)).count, 2);
  // Slots live while their requests run: never refused for want of room.
  assert.equal(await store.acquire('concurrent:pf', 'lease', 2, 60), true);
  await store.release('concurrent:pc', 'lease');
  await store.release('concurrent:pf', 'lease');
});

test('memoryLimitStore: fixed windows aligned to their length; a window that ended starts again from 0', async () => {
  let now = 120.5;
  const store = limitStoreAt(100, () => now);
  assert.deepEqual(await store.hit('k', 60, 2, 3), { allowed: true, count: 2, resetSec: 59.5, start: 120 });
  now = 179.9;
  assert.equal((await store.hit('k', 60, 2, 3)).allowed, false);
  now = 180;
  assert.deepEqual(await store.hit('k', 60, 2, 3), { allowed: true, count: 2, resetSec: 60, start: 180 });
});
