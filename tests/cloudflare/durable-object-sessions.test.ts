// durableObjectSessionStore (agentward/cloudflare): the agent's store in one Durable Object, reached
// from any instance of a Worker, on stand-ins for the namespace and the object's storage. The real
// Durable Objects run it in tests/cloudflare/worker-recipe.node.test.ts (wrangler dev).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent } from '../../src/agent/agent.ts';
import { echoModel } from '../../src/agent/models/echo.ts';
import { durableObjectSessionStore, SessionStoreObjectCore } from '../../src/cloudflare/durable-object-sessions.ts';
import { namespaceStandIn, ObjectStorageStandIn } from '../helpers/durable-object-namespace.ts';
import { sessionRecord, storeContract } from '../helpers/store-contract.ts';

const sessions = () => namespaceStandIn((state) => new SessionStoreObjectCore(state));

storeContract('durableObjectSessionStore', async () => {
  const namespace = sessions();
  return {
    store: durableObjectSessionStore(namespace),
    // Another isolate, after the object was evicted: only its storage is left.
    reopen: () => {
      namespace.restart();
      return durableObjectSessionStore(namespace);
    },
  };
});

test('durableObjectSessionStore: two isolates share the sessions, and run the turns of one session one after another', async () => {
  const namespace = sessions();
  const one = durableObjectSessionStore(namespace);
  const two = durableObjectSessionStore(namespace);
  const order: string[] = [];
  const turn = (store: typeof one, name: string, ms: number) =>
    store.withSession!('s-1', async () => {
      order.push(`${name} starts`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      order.push(`${name} ends`);
    });
  await Promise.all([turn(one, 'first', 40), turn(two, 'second', 1)]);
  assert.deepEqual(order, ['first starts', 'first ends', 'second starts', 'second ends']);
  // Another session is not held up by a turn in flight.
  let inFlight = true;
  const held = one.withSession!('s-1', () =>
    new Promise<void>((resolve) => setTimeout(resolve, 40)).then(() => void (inFlight = false)),
  );
  await two.withSession!('s-2', async () => assert.equal(inFlight, true, 's-2 ran while s-1 was held'));
  await held;
  // An agent of each isolate over the one store continues the other's session.
  const agentOf = (store: typeof one) => createAgent({ name: 'support', model: echoModel(), store });
  await agentOf(one).send('hello', { sessionId: 'chat-1' });
  await agentOf(two).send('again', { sessionId: 'chat-1' });
  const record = await one.loadSession('chat-1');
  assert.deepEqual(
    record?.messages.filter((message) => message.role === 'user').map((message) => message.content),
    ['hello', 'again'],
  );
});

test('durableObjectSessionStore: an object it cannot reach is STORE_UNAVAILABLE, never a wrong answer', async () => {
  const namespace = sessions();
  const store = durableObjectSessionStore(namespace);
  await store.saveSession(sessionRecord('s-1'));
  namespace.unreachable(true);
  await assert.rejects(store.loadSession('s-1'), { code: 'STORE_UNAVAILABLE' });
  namespace.unreachable(false);
  assert.equal((await store.loadSession('s-1'))?.id, 's-1');
});

test('durableObjectSessionStore: two names on one namespace are two stores', async () => {
  const namespace = sessions();
  await durableObjectSessionStore(namespace, { name: 'support' }).saveSession(sessionRecord('s-1'));
  assert.equal(await durableObjectSessionStore(namespace, { name: 'billing' }).loadSession('s-1'), undefined);
  assert.equal((await durableObjectSessionStore(namespace, { name: 'support' }).loadSession('s-1'))?.id, 's-1');
});

test('durableObjectSessionStore: a namespace that is not a binding, and unknown options, are configuration errors', () => {
  assert.throws(() => durableObjectSessionStore(undefined as never), {
    code: 'AGENT_AUTH_CONFIG_INVALID',
    message: /durableObjectSessionStore\(\): namespace must be a Durable Object namespace binding/,
  });
  assert.throws(() => durableObjectSessionStore(sessions(), { nmae: 'x' } as never), /nmae/);
  assert.throws(() => durableObjectSessionStore(sessions(), { name: '' }), /name must be a string/);
});

test('SessionStoreObject answers 400 to a call it does not know, and runs no store method for it', async () => {
  const object = new SessionStoreObjectCore({ storage: new ObjectStorageStandIn() });
  for (const body of [
    'not json',
    JSON.stringify({ op: 'constructor', args: [] }),
    JSON.stringify({ op: 'loadSession' }),
  ]) {
    const response = await object.fetch(new Request('https://sessions.agentward/', { method: 'POST', body }));
    assert.equal(response.status, 400, body);
  }
});

test('SessionStoreObject: a lock whose isolate died (no renewal, no unlock) is freed when its lease ends', async () => {
  const object = new SessionStoreObjectCore({ storage: new ObjectStorageStandIn() });
  const call = (op: string, args: unknown[]) =>
    object.fetch(new Request('https://sessions.agentward/', { method: 'POST', body: JSON.stringify({ op, args }) }));
  // An isolate took the lock for 0.2 s and was never heard from again.
  assert.equal((await call('lock', ['s-1', 'dead-isolate', 0.2])).status, 200);
  const started = Date.now();
  let acquired = false;
  const waiting = call('lock', ['s-1', 'live-isolate', 60]).then((response) => {
    acquired = true;
    return response;
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(acquired, false, 'held while the lease lasts');
  assert.equal((await waiting).status, 200);
  assert.ok(Date.now() - started >= 150, 'taken once the lease ended');
  // The dead lease's unlock, arriving late, does not free the live one's lock.
  await call('unlock', ['s-1', 'dead-isolate']);
  let next = false;
  const after = call('lock', ['s-1', 'third', 60]).then(() => (next = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(next, false, 'the live lease still holds it');
  await call('unlock', ['s-1', 'live-isolate']);
  await after;
});
