// durableObjectReplayStore (agentward/cloudflare): the DPoP proofs every instance of a Worker has
// seen, in Durable Objects, on stand-ins for the namespace and the objects' storage; and as the
// `dpopReplay` of a `jwt()` entry, a proof replayed to another isolate is refused there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { durableObjectReplayStore, ReplayObjectCore } from '../../src/cloudflare/durable-object-replay.ts';
import { namespaceStandIn } from '../helpers/durable-object-namespace.ts';

const replays = () => namespaceStandIn((state) => new ReplayObjectCore(state));

test('durableObjectReplayStore: a key seen by one isolate is seen by another until it expires, then it is new again', async () => {
  const namespace = replays();
  const one = durableObjectReplayStore(namespace);
  const two = durableObjectReplayStore(namespace);
  assert.equal(await one.seen('key-a', 1_000, 900), false);
  assert.equal(await two.seen('key-a', 1_000, 950), true, 'replayed to another isolate');
  assert.equal(await one.seen('key-b', 1_000, 950), false, 'another key');
  namespace.restart();
  assert.equal(await two.seen('key-a', 1_000, 999), true, 'kept across the object’s restart');
  assert.equal(await two.seen('key-a', 2_000, 1_001), false, 'expired: a new proof may take the key');
  assert.equal(await one.seen('key-a', 2_000, 1_500), true);
});

test('ReplayObject forgets expired keys as it is called: its storage shrinks as fast as it grows', async () => {
  const namespace = replays();
  const store = durableObjectReplayStore(namespace);
  // Keys of one first character live in one object.
  for (let n = 0; n < 40; n++) assert.equal(await store.seen(`k${n}`, 100 + n, 50), false);
  const storage = namespace.storages.get('id:replay:k')!;
  assert.equal(storage.data.size, 80);
  // Each call forgets up to 16 expired keys: three calls forget all 40.
  for (let n = 0; n < 3; n++) await store.seen(`k-late-${n}`, 10_000, 1_000);
  assert.deepEqual([...storage.data.keys()].filter((key) => key.startsWith('proof:')).sort(), [
    'proof:k-late-0',
    'proof:k-late-1',
    'proof:k-late-2',
  ]);
  assert.equal(storage.data.size, 6);
});

test('durableObjectReplayStore: an object it cannot reach throws (the entry refuses the proof), and takes no options', async () => {
  const namespace = replays();
  const store = durableObjectReplayStore(namespace);
  namespace.unreachable(true);
  await assert.rejects(Promise.resolve(store.seen('key-a', 1_000, 900)), { code: 'STORE_UNAVAILABLE' });
  assert.throws(() => durableObjectReplayStore(namespace, { ttl: 1 } as never), /ttl/);
  assert.throws(() => durableObjectReplayStore({} as never), /namespace must be a Durable Object namespace binding/);
});

test('durableObjectReplayStore: DPoP nonces (design §29): the first isolate to ask for a key makes its nonce, every other gets the same; expired ones are forgotten', async () => {
  const namespace = replays();
  const one = durableObjectReplayStore(namespace);
  const two = durableObjectReplayStore(namespace);
  const nonce = await one.nonce!('300 6000000', 1_000, 900);
  assert.match(nonce, /^[\w-]{22}$/);
  assert.equal(await two.nonce!('300 6000000', 1_000, 950), nonce, 'another isolate gets the same nonce');
  namespace.restart();
  assert.equal(await two.nonce!('300 6000000', 1_000, 960), nonce, 'kept across the object’s restart');
  const next = await one.nonce!('300 6000001', 1_300, 1_001);
  assert.notEqual(next, nonce, 'another period, another nonce');
  const storage = namespace.storages.get('id:replay:nonces')!;
  assert.deepEqual([...storage.data.keys()], ['nonce:300 6000001'], 'the expired one was forgotten');
});
