import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MEMORY_STORE_DEFAULTS, memoryStore } from '../../src/agent/index.ts';
import { AuthConfigError } from '../../src/auth/index.ts';
import type { Checkpoint, SessionRecord } from '../../src/agent/index.ts';
import { storeContract } from '../helpers/store-contract.ts';

const session = (): SessionRecord => ({
  id: 's1',
  messages: [{ role: 'user', content: 'hi' }],
  audit: [],
  createdAt: 't0',
  updatedAt: 't0',
});

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

/** A Map that counts how many entries were walked over by iteration (a scan). */
class CountingMap extends Map<string, string> {
  walked = 0;
  override *entries(): MapIterator<[string, string]> {
    for (const entry of super.entries()) {
      this.walked++;
      yield entry;
    }
  }
  override [Symbol.iterator]() {
    return this.entries();
  }
}

test("memoryStore finds checkpoints by session and counts pending approvals by owner without walking other sessions' records", async () => {
  const data = new CountingMap();
  const store = memoryStore({ data });
  await store.saveCheckpoint({ approvalId: 'mine', sessionId: 'mine', metadata: {}, owner: ['jwt', null, 'me'] });
  for (let i = 0; i < 2000; i++)
    await store.saveCheckpoint({
      approvalId: `a${i}`,
      sessionId: `s${i}`,
      metadata: {},
      owner: ['jwt', null, `u${i}`],
    });
  data.walked = 0;
  assert.equal((await store.listCheckpoints('mine')).length, 1);
  assert.equal(await store.countCheckpoints!(['jwt', null, 'me']), 1);
  assert.equal((await store.listSessions!({ owner: ['jwt', null, 'me'], limit: 10 })).length, 0);
  assert.equal(data.walked, 0);
});

test('memoryStore({ maxSessions, ttl }) bounds what it keeps: past maxSessions the least recently updated session goes, with its checkpoints', async () => {
  const store = memoryStore({ maxSessions: 3 });
  for (const id of ['s1', 's2', 's3']) await store.saveSession({ ...session(), id });
  await store.saveCheckpoint({ approvalId: 'a1', sessionId: 's1', metadata: {} });
  await store.saveSession({ ...session(), id: 's2' });
  await store.saveSession({ ...session(), id: 's4' });
  assert.equal(await store.loadSession('s1'), undefined, 's1 was the least recently updated');
  assert.equal(await store.loadCheckpoint('a1'), undefined);
  for (const id of ['s2', 's3', 's4']) assert.equal((await store.loadSession(id))?.id, id);
  for (let i = 0; i < 100; i++) await store.saveSession({ ...session(), id: `many-${i}` });
  const kept = await Promise.all(Array.from({ length: 100 }, (_, i) => store.loadSession(`many-${i}`)));
  assert.equal(kept.filter(Boolean).length, 3);
});

test("memoryStore: an owned session leaves its owner's list when it is dropped, deleted or saved under another owner, also in an instance over earlier data", async () => {
  const alice = ['jwt', null, 'alice'] as const;
  const bob = ['jwt', null, 'bob'] as const;
  const ids = async (store: ReturnType<typeof memoryStore>, owner: readonly [string, null, string]) =>
    (await store.listSessions!({ owner: [...owner], limit: 100 })).map((row) => row.id).sort();
  const data = new Map<string, string>();
  const first = memoryStore({ data, maxSessions: 3 });
  for (const id of ['a1', 'a2', 'a3']) await first.saveSession({ ...session(), id, owner: [...alice] });
  assert.deepEqual(await ids(first, alice), ['a1', 'a2', 'a3']);
  // A new instance derives the owners from the records, then keeps them in step.
  const store = memoryStore({ data, maxSessions: 3 });
  await store.saveSession({ ...session(), id: 'a2', owner: [...bob] });
  assert.deepEqual(await ids(store, alice), ['a1', 'a3']);
  assert.deepEqual(await ids(store, bob), ['a2']);
  await store.saveSession({ ...session(), id: 'b1', owner: [...bob] });
  assert.equal(await store.loadSession('a1'), undefined, 'a1 was the least recently updated');
  assert.deepEqual(await ids(store, alice), ['a3']);
  await store.saveSession({ ...session(), id: 'a3' });
  assert.deepEqual(await ids(store, alice), [], 'saved without an owner: listed under none');
  assert.equal(await store.deleteSession!('b1'), true);
  assert.deepEqual(await ids(store, bob), ['a2']);
  await assert.rejects(store.saveSession({ ...session(), id: 'a2', owner: [...alice], title: 10n as never }));
  assert.deepEqual(await ids(store, bob), ['a2'], 'a record that cannot be saved changes nothing');
  assert.deepEqual(await ids(store, alice), []);
});

test('memoryStore({ ttl }): a session not updated for ttl ms is gone, with its checkpoints; an updated one stays', async () => {
  const store = memoryStore({ ttl: 40 });
  await store.saveSession({ ...session(), id: 'idle' });
  await store.saveSession({ ...session(), id: 'busy' });
  await store.saveCheckpoint({ approvalId: 'a-idle', sessionId: 'idle', metadata: {} });
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, 15));
    await store.saveSession({ ...session(), id: 'busy' });
  }
  assert.equal(await store.loadSession('idle'), undefined);
  assert.equal(await store.loadCheckpoint('a-idle'), undefined);
  assert.equal((await store.loadSession('busy'))?.id, 'busy');
});

test('memoryStore: defaults are documented values that bound memory; options that cannot work are refused', () => {
  assert.deepEqual({ ...MEMORY_STORE_DEFAULTS }, { maxSessions: 1000, ttl: 24 * 60 * 60 * 1000 });
  for (const options of [
    { maxSessions: 0 },
    { maxSessions: 1.5 },
    { ttl: 0 },
    { ttl: -1 },
    { ttl: Number.NaN },
    { data: {} as never },
  ]) {
    assert.throws(() => memoryStore(options), AuthConfigError, JSON.stringify(options));
  }
  memoryStore({ ttl: Infinity, maxSessions: 1 });
});

test('memoryStore({ ttl }): expiry is checked on every call, also after the least recently updated session is saved again or deleted', async () => {
  const realNow = Date.now;
  let now = realNow();
  Date.now = () => now;
  try {
    const store = memoryStore({ ttl: 1000 });
    await store.saveSession({ ...session(), id: 'first' });
    now += 400;
    await store.saveSession({ ...session(), id: 'second' });
    now += 400;
    await store.saveSession({ ...session(), id: 'first' });
    now += 400;
    // 'second' (saved 800 ms ago) is now the oldest, 'first' was saved again 400 ms ago.
    assert.equal((await store.loadSession('second'))?.id, 'second');
    now += 200;
    assert.equal(await store.loadSession('second'), undefined, 'second expired 1,000 ms after its save');
    assert.equal((await store.loadSession('first'))?.id, 'first');
    await store.saveSession({ ...session(), id: 'third' });
    now += 300;
    assert.equal(await store.deleteSession!('first'), true);
    now += 600;
    assert.equal((await store.loadSession('third'))?.id, 'third');
    now += 100;
    assert.equal(await store.loadSession('third'), undefined, 'third expired 1,000 ms after its save');
    // Past `ttl` while the store is empty, then a new session: it expires on time too.
    await store.saveSession({ ...session(), id: 'fourth' });
    now += 999;
    assert.deepEqual(await store.listCheckpoints('fourth'), []);
    assert.equal((await store.loadSession('fourth'))?.id, 'fourth');
    now += 1;
    assert.equal(await store.loadSession('fourth'), undefined);
  } finally {
    Date.now = realNow;
  }
});

test('memoryStore({ ttl }): after the clock steps back, a session that becomes the least recently updated one is checked at once, as before', async () => {
  const realNow = Date.now;
  let now = 1_000_000;
  Date.now = () => now;
  try {
    const store = memoryStore({ ttl: 1000 });
    await store.saveSession({ ...session(), id: 'a' });
    now -= 500; // the clock steps back: 'b' is saved after 'a' with an earlier time
    await store.saveSession({ ...session(), id: 'b' });
    now += 1000;
    // Only the least recently updated session is checked: 'a' is fresh, so 'b' stays for now.
    assert.equal((await store.loadSession('b'))?.id, 'b');
    await store.saveSession({ ...session(), id: 'a' });
    assert.equal(await store.loadSession('b'), undefined, "'b' leads once 'a' is saved again, and it is past ttl");
  } finally {
    Date.now = realNow;
  }
});
