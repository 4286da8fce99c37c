import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStore } from '../src/agent/index.ts';
import type { Checkpoint, SessionRecord } from '../src/agent/index.ts';
import { storeContract } from './helpers/store-contract.ts';

const session = (): SessionRecord => ({ id: 's1', messages: [{ role: 'user', content: 'hi' }], audit: [], createdAt: 't0', updatedAt: 't0' });

test('memoryStore hands out copies: mutating a saved or loaded record never changes the store', async () => {
  const store = memoryStore();
  const record = session();
  await store.saveSession(record);
  record.messages.push({ role: 'assistant', content: 'mutated' });
  const loaded = (await store.loadSession('s1'))!;
  assert.equal(loaded.messages.length, 1);
  loaded.messages.length = 0;
  assert.equal((await store.loadSession('s1'))!.messages.length, 1);
  assert.equal(await store.loadSession('other'), undefined);
});

test('memoryStore: deleteCheckpoint is true only for the one caller that removed it', async () => {
  const store = memoryStore();
  const checkpoint: Checkpoint = { approvalId: 'a1', sessionId: 's1', metadata: {} };
  await store.saveCheckpoint(checkpoint);
  await store.saveCheckpoint({ approvalId: 'a2', sessionId: 's2', metadata: {} });
  assert.deepEqual(await store.loadCheckpoint('a1'), checkpoint);
  assert.deepEqual(await store.listCheckpoints('s1'), [checkpoint]);
  assert.deepEqual(await Promise.all([store.deleteCheckpoint('a1'), store.deleteCheckpoint('a1')]), [true, false]);
  assert.equal(await store.loadCheckpoint('a1'), undefined);
  assert.deepEqual(await store.listCheckpoints('s1'), []);
});

test('memoryStore: two instances over the same data see the same records, as after a restart', async () => {
  const data = new Map<string, string>();
  await memoryStore(data).saveSession(session());
  await memoryStore(data).appendMemory('ns', 'one');
  await memoryStore(data).appendMemory('ns', 'two');
  const restored = memoryStore(new Map(JSON.parse(JSON.stringify([...data]))));
  assert.deepEqual(await restored.loadSession('s1'), session());
  assert.deepEqual(await restored.loadMemory('ns'), ['one', 'two']);
  assert.deepEqual(await restored.loadMemory('other'), []);
});

test('memoryStore keys cannot reach the object prototype', async () => {
  const store = memoryStore();
  await store.saveSession({ ...session(), id: '__proto__' });
  assert.equal((await store.loadSession('__proto__'))!.id, '__proto__');
  assert.equal(await store.loadSession('constructor'), undefined);
});

// The contract's records carry fixed past dates: without a ttl they are never too old.
storeContract('memoryStore', async () => {
  const data = new Map<string, string>();
  return { store: memoryStore({ data, ttl: Infinity }), reopen: () => memoryStore({ data, ttl: Infinity }) };
});
