import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import type { Checkpoint, Model, RunEvent, SessionRecord, Store, Tool } from '../../src/agent/index.ts';
import { copyMessages, copyRecord } from '../../src/agent/copy.ts';

/** A store that keeps the very objects it is given and hands them back: only the agent's own copies stand between callers and its state. */
function byReferenceStore() {
  const sessions = new Map<string, SessionRecord>();
  const checkpoints = new Map<string, Checkpoint>();
  const store: Store = {
    loadSession: async (id) => sessions.get(id),
    saveSession: async (record) => void sessions.set(record.id, record),
    loadCheckpoint: async (id) => checkpoints.get(id),
    saveCheckpoint: async (checkpoint) => void checkpoints.set(checkpoint.approvalId, checkpoint),
    deleteCheckpoint: async (id) => checkpoints.delete(id),
    listCheckpoints: async (sessionId) => [...checkpoints.values()].filter((c) => c.sessionId === sessionId),
    loadMemory: async () => [],
    appendMemory: async () => undefined,
  };
  return { store, sessions, checkpoints };
}

const add: Tool<{ a: number; b: number }> = {
  name: 'add',
  description: 'Adds two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: ({ a, b }) => ({ sum: a + b }),
};

test('a caller mutating a result, its messages or their tool calls never changes what the store keeps', async () => {
  const { store, sessions } = byReferenceStore();
  const agent = createAgent({ name: 't', model: echoModel(), tools: [add], store });
  const result = await agent.send('/tool add {"a":1,"b":2}');
  const kept = structuredClone(sessions.get(result.sessionId)!.messages);
  assert.deepEqual(result.messages, kept);
  result.messages[0]!.content = 'changed';
  (result.messages[1] as { toolCalls: { arguments: { a: number } }[] }).toolCalls[0]!.arguments.a = 100;
  result.messages.push({ role: 'user', content: 'extra' });
  assert.deepEqual(sessions.get(result.sessionId)!.messages, kept);
});

test('a model mutating its request never changes the transcript', async () => {
  const { store, sessions } = byReferenceStore();
  const vandal: Model = {
    async generate(request) {
      const first = request.messages[0]!;
      first.content = 'rewritten by the model';
      request.messages.push({ role: 'assistant', content: 'injected' });
      return { text: 'ok' };
    },
  };
  const agent = createAgent({ name: 't', model: vandal, store });
  const result = await agent.send('hello');
  assert.deepEqual(result.messages, [
    { role: 'user', content: 'hello' },
    { role: 'assistant', content: 'ok' },
  ]);
  assert.deepEqual(sessions.get(result.sessionId)!.messages, result.messages);
});

test('a listener mutating events (the finished result, a tool call) never changes the run or the store', async () => {
  const { store, sessions } = byReferenceStore();
  const agent = createAgent({ name: 't', model: echoModel(), tools: [add], store });
  const onEvent = (event: RunEvent) => {
    if (event.type === 'tool-call') (event.call.arguments as { a: number }).a = 100;
    if (event.type === 'finish') {
      event.result.messages[0]!.content = 'changed';
      event.result.messages.length = 1;
    }
  };
  const result = await agent.send('/tool add {"a":1,"b":2}', { onEvent });
  assert.equal(result.text, 'Tool results: add: {"sum":3}');
  assert.equal(result.messages.length, 4);
  assert.equal(result.messages[0]!.content, '/tool add {"a":1,"b":2}');
  assert.deepEqual(sessions.get(result.sessionId)!.messages, result.messages);
});

test('a caller mutating a pending approval never changes the checkpointed call', async () => {
  const { store, checkpoints } = byReferenceStore();
  const log: number[] = [];
  const gated: Tool<{ a: number; b: number }> = {
    ...add,
    needsApproval: true,
    execute: ({ a, b }) => (log.push(a), { sum: a + b }),
  };
  const agent = createAgent({ name: 't', model: echoModel(), tools: [gated], store });
  const paused = await agent.send('/tool add {"a":1,"b":2}');
  const approval = paused.approvals[0]!;
  (approval.arguments as { a: number }).a = 100;
  assert.deepEqual(
    (checkpoints.get(approval.id) as Checkpoint & { pending: { arguments: unknown } }).pending.arguments,
    { a: 1, b: 2 },
  );
  await agent.decide(approval.id, { approved: true });
  assert.deepEqual(log, [1]);
});

test('copyRecord copies as structuredClone does: equal, sharing nothing, and refusing what cannot be cloned', () => {
  const nested = { list: [1, { deep: 'x' }], when: new Date(0), map: new Map([['k', 1]]) };
  class Shape {
    side = 2;
  }
  const nullProto = Object.assign(Object.create(null) as object, { a: 1, b: { c: 2 } });
  const ownProto = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
  const samples: unknown[] = [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 1, b: [2, 3] } }] },
    { role: 'tool', toolCallId: 'c1', content: '{"sum":3}', extra: undefined, n: 1, flag: true, none: null, big: 10n },
    { type: 'finish', result: { messages: [{ role: 'user', content: 'x' }] }, nested },
    nullProto,
    ownProto,
    new Shape(),
    [1, 2, { a: 3 }],
    'text',
    42,
    null,
  ];
  for (const sample of samples) {
    const copy = copyRecord(sample);
    assert.deepStrictEqual(copy, structuredClone(sample));
    if (typeof sample === 'object' && sample !== null) {
      assert.notEqual(copy, sample);
      for (const key of Object.keys(sample)) {
        const member = (sample as Record<string, unknown>)[key];
        if (typeof member === 'object' && member !== null)
          assert.notEqual((copy as Record<string, unknown>)[key], member);
      }
    }
  }
  assert.equal(Object.getPrototypeOf(copyRecord(ownProto)), Object.prototype);
  assert.deepEqual(Object.keys(copyRecord(ownProto)), ['__proto__', 'a']);
  for (const bad of [{ run: () => 1 }, { s: Symbol('s') }, () => 1]) {
    assert.throws(() => structuredClone(bad), { name: 'DataCloneError' });
    assert.throws(() => copyRecord(bad), { name: 'DataCloneError' });
  }
  const messages = [
    { role: 'user' as const, content: 'a' },
    { role: 'assistant' as const, content: 'b' },
  ];
  const copies = copyMessages(messages);
  assert.deepEqual(copies, messages);
  assert.ok(copies.every((copy, i) => copy !== messages[i]));
});
