// The limit stores that need no server (design §22): the memory store (the default of `limits`)
// and the Durable Object store on stand-ins for a namespace and its storage run the shared limit
// store contract; the memory store's bound (forgets ended windows first, refuses a new key when
// every key is live) on a clock of the test's own. PostgreSQL runs the contract in
// tests/postgres/limit-store.node.test.ts, the real Durable Objects in tests/cloudflare/limits.node.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryCounters, memoryLimitStore } from '../../src/http/limit-store.ts';
import {
  durableObjectLimitStore,
  LimitObject,
  type LimitNamespaceLike,
  type LimitStorageLike,
} from '../../src/cloudflare/durable-object-limit-store.ts';
import { limitStoreContract } from '../helpers/limit-store-contract.ts';

limitStoreContract('memoryLimitStore', async () => ({ store: memoryLimitStore(), expiresLeases: false }));

/** Durable Object storage as its API behaves: structured copies, asynchronous. */
class StorageStandIn implements LimitStorageLike {
  readonly data = new Map<string, unknown>();
  async get(key: string) {
    return structuredClone(this.data.get(key));
  }
  async put(key: string, value: unknown) {
    this.data.set(key, structuredClone(value));
  }
  async delete(key: string) {
    return this.data.delete(key);
  }
}

/** A namespace of `LimitObject`s: one object per name, reached through `fetch` with a Request, as a stub is. */
function namespaceStandIn(): LimitNamespaceLike & { objects: Map<string, LimitObject> } {
  const objects = new Map<string, LimitObject>();
  return {
    objects,
    idFromName: (name) => `id:${name}`,
    get(id) {
      const name = id as string;
      let object = objects.get(name);
      if (object === undefined) objects.set(name, (object = new LimitObject({ storage: new StorageStandIn() })));
      return { fetch: (request: Request) => object.fetch(new Request(request)) };
    },
  };
}

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
});

test('memoryLimitStore: past maxKeys, windows that ended are forgotten first; with every key live, a new key is refused, never another key forgotten', async () => {
  let now = 1_000_000;
  const store = memoryCounters(3, () => now);
  assert.equal((await store.hit('a', 10, 1, 5)).allowed, true);
  now += 5;
  assert.equal((await store.hit('b', 100, 1, 5)).allowed, true);
  assert.equal(await store.acquire('c', 'lease', 2, 60), true);
  // Full, every key live: a new key is refused (a read and a slot too), and says when room comes (a's window ends).
  const refused = await store.hit('d', 100, 1, 5);
  assert.equal(refused.allowed, false);
  assert.equal(refused.resetSec, 5);
  assert.equal((await store.hit('d', 100, 0, 5)).allowed, false);
  assert.equal(await store.acquire('e', 'lease', 2, 60), false);
  // Known keys go on counting.
  assert.deepEqual(await store.hit('b', 100, 1, 5), { allowed: true, count: 2, resetSec: 95 });
  assert.equal(await store.acquire('c', 'another', 2, 60), true);
  // a's window ends: a new key takes its place; a's count is gone with its window, as it would be anyway.
  now += 5;
  assert.equal((await store.hit('d', 100, 1, 5)).allowed, true);
  assert.equal((await store.hit('e', 100, 1, 5)).allowed, false);
  // A released slot frees its key.
  await store.release('c', 'lease');
  await store.release('c', 'another');
  assert.equal((await store.hit('e', 100, 1, 5)).allowed, true);
  assert.equal((await store.hit('b', 100, 0, 5)).count, 2, 'b was never forgotten');
});

test('memoryLimitStore: fixed windows aligned to their length; a window that ended starts again from 0', async () => {
  let now = 120.5;
  const store = memoryCounters(100, () => now);
  assert.deepEqual(await store.hit('k', 60, 2, 3), { allowed: true, count: 2, resetSec: 59.5 });
  now = 179.9;
  assert.equal((await store.hit('k', 60, 2, 3)).allowed, false);
  now = 180;
  assert.deepEqual(await store.hit('k', 60, 2, 3), { allowed: true, count: 2, resetSec: 60 });
});
