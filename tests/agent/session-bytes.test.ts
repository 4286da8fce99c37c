// Design §19, the agent's side: a session's stored record is bounded (limits.sessionBytes,
// SESSION_FULL, the stored session unchanged), and under 'owned' the owner is compared before
// the record is read, so "not yours" costs what "unknown" costs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentError, createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Model, Principal, Store, Tool } from '../../src/agent/index.ts';
import { serializedBytes } from '../../src/agent/json-size.ts';
import { DEFAULT_SESSION_BYTES } from '../../src/agent/options.ts';
import { agentHandler } from '../../src/http/index.ts';
import { anonymous } from '../../src/auth/index.ts';

const alice: Principal = Object.freeze({
  id: 'alice',
  type: 'user',
  authenticator: 'jwt',
  issuer: 'https://a.example',
});
const bob: Principal = Object.freeze({ id: 'bob', type: 'user', authenticator: 'jwt', issuer: 'https://a.example' });

const isFull = (error: unknown) => error instanceof AgentError && error.code === 'SESSION_FULL';

/** A model that counts its calls and replies `reply()`. */
function countingModel(reply: () => string = () => 'ok'): Model & { calls: number } {
  const model = {
    calls: 0,
    async generate() {
      model.calls++;
      return { text: reply() };
    },
  };
  return model;
}

test('serializedBytes equals the UTF-8 length of JSON.stringify over random values: escapes, controls, non-ASCII, pairs and lone surrogates', () => {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const units = [
    0x00, 0x08, 0x09, 0x0a, 0x1f, 0x20, 0x22, 0x41, 0x5c, 0x7e, 0x7f, 0x80, 0xe9, 0x7ff, 0x800, 0x20ac, 0xd83d, 0xde00,
    0xfffd, 0xffff,
  ];
  const randomString = () =>
    String.fromCharCode(
      ...Array.from({ length: Math.floor(next() * 12) }, () => units[Math.floor(next() * units.length)]!),
    );
  const randomValue = (depth: number): unknown => {
    const kind = Math.floor(next() * (depth > 2 ? 4 : 6));
    if (kind === 0) return randomString();
    if (kind === 1) return Math.floor(next() * 1e6) / (next() < 0.5 ? 1 : 7);
    if (kind === 2) return next() < 0.5 ? null : next() < 0.5;
    if (kind === 3) return 'plain ascii text';
    if (kind === 4) return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(depth + 1));
    return Object.fromEntries(
      Array.from({ length: Math.floor(next() * 4) }, () => [
        randomString(),
        next() < 0.1 ? undefined : randomValue(depth + 1),
      ]),
    );
  };
  const utf8 = new TextEncoder();
  for (let i = 0; i < 2000; i++) {
    const value = randomValue(0);
    assert.equal(serializedBytes(value), utf8.encode(JSON.stringify(value)).length, JSON.stringify(value));
  }
});

test('serializedBytes counts UTF-8 bytes of the JSON, surrogate pairs as four', () => {
  assert.equal(serializedBytes('a'), 3);
  assert.equal(serializedBytes('é'), 4);
  assert.equal(serializedBytes('€'), 5);
  assert.equal(serializedBytes('😀'), 6);
  assert.equal(serializedBytes({ m: ['é😀'] }), new TextEncoder().encode(JSON.stringify({ m: ['é😀'] })).length);
});

test('limits.sessionBytes: a send the session cannot hold is refused with SESSION_FULL before the model runs; the stored session is unchanged', async () => {
  const store = memoryStore();
  const model = countingModel();
  const agent = createAgent({ name: 'bounded', model, store, limits: { sessionBytes: 4096 } });
  const first = await agent.send('x'.repeat(1000), { sessionId: 's' });
  await agent.send('y'.repeat(1000), { sessionId: 's' });
  const before = await store.loadSession('s');
  const calls = model.calls;
  await assert.rejects(agent.send('z'.repeat(3000), { sessionId: 's' }), isFull);
  assert.equal(model.calls, calls, 'the model never ran');
  assert.deepEqual(await store.loadSession('s'), before, 'the stored session is unchanged');
  assert.ok(serializedBytes(before) <= 4096);
  assert.equal(first.sessionId, 's');
  // A new session is still served.
  assert.equal((await agent.send('fresh', { sessionId: 't' })).text, 'ok');
});

test('limits.sessionBytes: a turn whose own output would pass the bound is not stored (SESSION_FULL), and nothing of it remains', async () => {
  const store = memoryStore();
  let size = 10;
  const agent = createAgent({
    name: 'bounded',
    model: countingModel(() => 'r'.repeat(size)),
    store,
    limits: { sessionBytes: 4096 },
  });
  await agent.send('hello', { sessionId: 's' });
  const before = await store.loadSession('s');
  size = 5000;
  await assert.rejects(agent.send('again', { sessionId: 's' }), isFull);
  assert.deepEqual(await store.loadSession('s'), before);
});

test('limits.sessionBytes: a turn that would pause past the bound writes no checkpoint', async () => {
  const store = memoryStore();
  const tool: Tool = {
    name: 'big',
    description: 'needs approval',
    parameters: { type: 'object' },
    needsApproval: true,
    execute: () => 'done',
  };
  const agent = createAgent({
    name: 'bounded',
    model: echoModel(),
    store,
    tools: [tool],
    limits: { sessionBytes: 2048 },
  });
  await assert.rejects(agent.send(`/tool big {"pad":"${'p'.repeat(900)}"}`, { sessionId: 's' }), isFull);
  assert.deepEqual(await store.listCheckpoints('s'), []);
  assert.equal(await store.loadSession('s'), undefined);
});

test('limits.sessionBytes defaults to 4 MiB: 1 MiB messages fill a session, then SESSION_FULL, and the record stays within the bound', async () => {
  assert.equal(DEFAULT_SESSION_BYTES, 4 * 1024 * 1024);
  const store = memoryStore();
  const agent = createAgent({ name: 'bounded', model: echoModel(), store });
  const big = 'm'.repeat(1024 * 1024 - 64);
  let refused = 0;
  for (let i = 0; i < 4; i++) {
    try {
      await agent.send(big, { sessionId: 's' });
    } catch (error) {
      assert.ok(isFull(error), String(error));
      refused++;
    }
  }
  assert.ok(refused >= 2, `refused ${refused}`);
  assert.ok(serializedBytes(await store.loadSession('s')) <= DEFAULT_SESSION_BYTES);
});

test('POST <base>: SESSION_FULL answers 409 {"error":"Session is full"}', async () => {
  const agent = createAgent({
    name: 'bounded',
    model: echoModel(),
    store: memoryStore(),
    limits: { sessionBytes: 2048 },
  });
  const handler = agentHandler(agent, { auth: anonymous() });
  const send = (message: string, sessionId?: string) =>
    handler(
      new Request('http://x/', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message, sessionId }),
      }),
    );
  const first = (await (await send('a'.repeat(600))).json()) as { sessionId: string };
  const full = await send('b'.repeat(1200), first.sessionId);
  assert.equal(full.status, 409);
  assert.deepEqual(await full.json(), { error: 'Session is full' });
});

test('limits is checked at creation: closed, a whole number of bytes, 1024 or more', () => {
  const base = { name: 'x', model: echoModel() };
  assert.throws(
    () => createAgent({ ...base, limits: { sesionBytes: 1 } } as never),
    /createAgent\(\): limits: unknown option "sesionBytes" \(did you mean "sessionBytes"\?\)/,
  );
  for (const sessionBytes of [0, 1023, 1.5, Number.NaN, Infinity, '4096']) {
    assert.throws(
      () => createAgent({ ...base, limits: { sessionBytes } } as never),
      /limits\.sessionBytes must be a whole number/,
    );
  }
});

/** A memory store that says which record reads happened. */
/** A memory store that notes each record load, the loads inside a turn (`withSession`) included. */
function spied(): { store: Store; loads: string[] } {
  const loads: string[] = [];
  const spy = (target: Store): Store => ({
    ...target,
    loadSession: (id) => (loads.push(id), target.loadSession(id)),
    withSession: (id, turn) => target.withSession!(id, (inTurn) => turn(spy(inTurn))),
  });
  return { store: spy(memoryStore()), loads };
}

test("owned: the owner is compared before the record is read: a stranger's calls on an existing session read it no more than on an unknown one", async () => {
  const { store, loads } = spied();
  const agent = createAgent({ name: 'owned', model: echoModel(), store, sessions: 'owned' });
  const { sessionId } = await agent.send('mine', { principal: alice });
  const calls = [
    (id: string) => agent.transcript(id, { principal: bob }),
    (id: string) => agent.pendingApprovals(id, { principal: bob }),
    (id: string) => agent.deleteSession(id, { principal: bob }),
  ];
  for (const call of calls) {
    loads.length = 0;
    await assert.rejects(
      call(sessionId),
      (error: unknown) => error instanceof AgentError && error.code === 'SESSION_NOT_FOUND',
    );
    assert.deepEqual(loads, [], 'not yours: the record is never read');
    await assert.rejects(
      call('unknown-session'),
      (error: unknown) => error instanceof AgentError && error.code === 'SESSION_NOT_FOUND',
    );
    assert.deepEqual(loads, [], 'unknown: nothing to read either');
  }
  // Continuing someone else's session is refused the same way, before its record is read.
  await assert.rejects(
    agent.send('take over', { principal: bob, sessionId }),
    (error: unknown) => error instanceof AgentError && error.code === 'SESSION_NOT_FOUND',
  );
  assert.deepEqual(loads, []);
  // The owner still reads it.
  assert.equal((await agent.transcript(sessionId, { principal: alice })).messages.length, 2);
});

test('owned: on a 3 MiB session, answering a stranger costs about what an unknown id costs (interleaved samples, medians compared)', async () => {
  const store = memoryStore();
  const agent = createAgent({ name: 'owned', model: echoModel(), store, sessions: 'owned' });
  const { sessionId } = await agent.send('x'.repeat(1024 * 1024), { principal: alice });
  await agent.send('y'.repeat(512 * 1024), { principal: alice, sessionId });
  const time = async (id: string) => {
    const started = performance.now();
    await agent.transcript(id, { principal: bob }).catch(() => undefined);
    return performance.now() - started;
  };
  const stranger: number[] = [];
  const unknown: number[] = [];
  for (let i = 0; i < 200; i++) {
    if (i % 2 === 0) stranger.push(await time(sessionId)), unknown.push(await time('no-such-session'));
    else unknown.push(await time('no-such-session')), stranger.push(await time(sessionId));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  // Reading and parsing the record made "not yours" about 150 times slower; within 3x is the same order.
  assert.ok(
    median(stranger) < median(unknown) * 3 + 0.05,
    `stranger ${median(stranger).toFixed(3)} ms, unknown ${median(unknown).toFixed(3)} ms`,
  );
});

test("a message the stored session cannot hold is refused from the store's size alone (sessionBytesAtLeast), before the record is read; a session with room is never refused by it", async () => {
  for (const sessions of ['shared', 'owned'] as const) {
    const { store, loads } = spied();
    const agent = createAgent({
      name: 'sized',
      model: echoModel(),
      store,
      sessions,
      limits: { sessionBytes: 64 * 1024 },
    });
    const { sessionId } = await agent.send('x'.repeat(20 * 1024), { principal: alice });
    const size = serializedBytes(await store.loadSession(sessionId));
    assert.ok((await store.sessionBytesAtLeast!(sessionId))! <= size);
    loads.length = 0;
    // 40 KiB stored: another 20 KiB message and its echo fit no more, but the message alone still fits.
    await assert.rejects(agent.send('y'.repeat(20 * 1024), { principal: alice, sessionId }), isFull);
    assert.equal(
      loads.length,
      1,
      `${sessions}: the model's turn was refused after the record was read (the echo is what passes the bound)`,
    );
    loads.length = 0;
    await assert.rejects(agent.send('z'.repeat(40 * 1024), { principal: alice, sessionId }), isFull);
    assert.deepEqual(loads, [], `${sessions}: a message that cannot fit is refused without reading the record`);
    if (sessions === 'owned') {
      // A stranger learns nothing, not even that the session is full.
      await assert.rejects(
        agent.send('z'.repeat(40 * 1024), { principal: bob, sessionId }),
        (error: unknown) => error instanceof AgentError && error.code === 'SESSION_NOT_FOUND',
      );
    }
    // Room left: small messages go on (the size is never overstated), up to the bound.
    assert.equal(
      (
        await agent.send('small', {
          principal: alice,
          sessionId: (await agent.send('new', { principal: alice })).sessionId,
        })
      ).status,
      'completed',
    );
  }
});
