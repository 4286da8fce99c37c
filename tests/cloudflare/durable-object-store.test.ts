// durableObjectStore (the cloudflare-worker target's store) on a stand-in for Durable Object
// storage: the store contract every store passes, and the chunking of long records. The real
// Durable Object storage runs it in tests/targets/cloudflare-worker-wrangler.node.test.ts (workerd).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CHUNK_UNITS,
  durableObjectStore,
  type DurableObjectStorageLike,
} from '../../src/cloudflare/durable-object-store.ts';
import { sessionRecord, storeContract } from '../helpers/store-contract.ts';

/** Durable Object storage as its API behaves: structured copies, atomic ordered operations, `list` sorted by key. */
class StorageStandIn implements DurableObjectStorageLike {
  readonly data = new Map<string, unknown>();
  largest = 0;
  async get(key: string) {
    return structuredClone(this.data.get(key));
  }
  put(key: string, value: unknown) {
    this.data.set(key, structuredClone(value));
    if (typeof value === 'string') this.largest = Math.max(this.largest, value.length);
    return Promise.resolve();
  }
  delete(key: string) {
    return Promise.resolve(this.data.delete(key));
  }
  async list({ prefix }: { prefix: string }) {
    return new Map([...this.data].filter(([key]) => key.startsWith(prefix)).sort(([a], [b]) => (a < b ? -1 : 1)));
  }
}

storeContract('durableObjectStore', async () => {
  const storage = new StorageStandIn();
  return { store: durableObjectStore(storage), reopen: () => durableObjectStore(storage) };
});

test('durableObjectStore: a record longer than a chunk is split, read back whole, and a shorter save leaves no stale chunk', async () => {
  const storage = new StorageStandIn();
  const store = durableObjectStore(storage);
  const long = sessionRecord('long', { messages: [{ role: 'user', content: `${'ж'.repeat(CHUNK_UNITS * 3)}😀` }] });
  await store.saveSession(long);
  assert.ok(storage.largest <= CHUNK_UNITS, 'no stored value is longer than a chunk');
  assert.ok([...storage.data.keys()].filter((key) => key.includes('#')).length >= 4);
  assert.deepEqual(await durableObjectStore(storage).loadSession('long'), long);
  const short = sessionRecord('long');
  await store.saveSession(short);
  assert.deepEqual(await store.loadSession('long'), short);
  assert.deepEqual([...storage.data.keys()].filter((key) => key.startsWith('session:')).sort(), [
    'session:"long"',
    'session:"long"#0',
  ]);
  assert.equal(await store.deleteSession!('long'), true);
  assert.deepEqual([...storage.data.keys()], []);
});

test('durableObjectStore: ids that look like key syntax stay apart', async () => {
  const store = durableObjectStore(new StorageStandIn());
  for (const id of ['a', 'a"#0', 'a":x', 'a#0']) await store.saveSession(sessionRecord(id));
  await store.saveCheckpoint({ approvalId: 'p', sessionId: 'a":x', metadata: {} });
  assert.deepEqual((await store.listCheckpoints('a')).length, 0);
  assert.deepEqual(
    (await store.listCheckpoints('a":x')).map((c) => c.approvalId),
    ['p'],
  );
  for (const id of ['a', 'a"#0', 'a":x', 'a#0']) assert.equal((await store.loadSession(id))!.id, id);
});
