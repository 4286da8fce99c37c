// Token usage (design §21): each model turn's `{ inputTokens, outputTokens }` kept on its
// assistant entry, the call's total on RunResult.usage, and `onUsage` seeing each turn's usage
// once the store has saved it, before the run goes on or answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentError, createAgent, memoryStore } from '../../src/index.ts';
import type { Model, ModelDelta, ModelRequest, Store, Tool, Usage } from '../../src/index.ts';

const lookup: Tool = { name: 'lookup', description: '', parameters: { type: 'object' }, execute: () => 'found' };
const guarded: Tool = { ...lookup, name: 'guarded', needsApproval: true };

/** Calls `tool` on the first turn, answers after a tool result; each turn reports the next usage of `usages`. */
function reporting(usages: (Usage | undefined)[], tool = 'lookup'): Model {
  let turn = 0;
  return {
    async generate(request: ModelRequest) {
      const usage = usages[turn++];
      const answer =
        request.messages.at(-1)!.role === 'tool'
          ? { text: 'done' }
          : { toolCalls: [{ id: `c${turn}`, name: tool, arguments: {} }] };
      return usage === undefined ? answer : { ...answer, usage };
    },
  };
}

test('each model turn keeps its usage on its assistant entry; the result adds up the turns of the call', async () => {
  const agent = createAgent({
    name: 't',
    model: reporting([
      { inputTokens: 100, outputTokens: 20 },
      { inputTokens: 130, outputTokens: 8 },
    ]),
    tools: [lookup],
  });
  const result = await agent.send('find it');
  assert.deepEqual(result.usage, { inputTokens: 230, outputTokens: 28 });
  assert.deepEqual(result.messages, [
    { role: 'user', content: 'find it' },
    {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'c1', name: 'lookup', arguments: {} }],
      usage: { inputTokens: 100, outputTokens: 20 },
    },
    { role: 'tool', toolCallId: 'c1', content: 'found' },
    { role: 'assistant', content: 'done', usage: { inputTokens: 130, outputTokens: 8 } },
  ]);
  assert.deepEqual((await agent.transcript(result.sessionId)).messages, result.messages);
  result.usage!.inputTokens = 0;
  (result.messages[1] as { usage: Usage }).usage.inputTokens = 0;
  assert.deepEqual((await agent.transcript(result.sessionId)).messages[1], {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'c1', name: 'lookup', arguments: {} }],
    usage: { inputTokens: 100, outputTokens: 20 },
  });
});

test('a turn that reports no usage has none on its entry, and a call none of whose turns did has no usage', async () => {
  const some = await createAgent({
    name: 't',
    model: reporting([undefined, { inputTokens: 5, outputTokens: 1 }]),
    tools: [lookup],
  }).send('x');
  assert.deepEqual(some.usage, { inputTokens: 5, outputTokens: 1 });
  assert.equal('usage' in some.messages[1]!, false);
  const none = await createAgent({ name: 't', model: reporting([undefined, undefined]), tools: [lookup] }).send('x');
  assert.equal('usage' in none, false);
});

test('a streamed turn may report usage in several deltas: they add up', async () => {
  const model: Model = {
    generate: async () => ({ text: 'unused' }),
    async *stream(): AsyncIterable<ModelDelta> {
      yield { type: 'usage', usage: { inputTokens: 40, outputTokens: 0 } };
      yield { type: 'text', text: 'hi' };
      yield { type: 'usage', usage: { inputTokens: 0, outputTokens: 7 } };
    },
  };
  const result = await createAgent({ name: 't', model }).send('x', { onEvent: () => {} });
  assert.deepEqual(result.usage, { inputTokens: 40, outputTokens: 7 });
  assert.deepEqual(result.messages[1], {
    role: 'assistant',
    content: 'hi',
    usage: { inputTokens: 40, outputTokens: 7 },
  });
});

test('usage that is not two token counts is MODEL_ERROR, and nothing is stored', async () => {
  for (const usage of [
    { inputTokens: -1, outputTokens: 2 },
    { inputTokens: 1.5, outputTokens: 2 },
    { inputTokens: '3', outputTokens: 2 },
    { inputTokens: 3 },
    'lots',
  ]) {
    const agent = createAgent({ name: 't', model: { generate: async () => ({ text: 'x', usage: usage as never }) } });
    await assert.rejects(
      agent.send('x', { sessionId: 's' }),
      (error: unknown) => error instanceof AgentError && error.code === 'MODEL_ERROR' && /usage/.test(error.message),
    );
    await assert.rejects(agent.transcript('s'), (error: unknown) => (error as AgentError).code === 'SESSION_NOT_FOUND');
  }
});

/** A memory store that logs each saveSession (without withSession, whose turns would use the inner store). */
function loggingStore(log: string[]): Store {
  const { withSession: _, ...store } = memoryStore();
  return {
    ...store,
    saveSession: async (record) => {
      await store.saveSession(record);
      log.push(`saved ${record.messages.length}`);
    },
  };
}

test("onUsage sees each turn's usage after the store saved the turn, before the run goes on or answers; a pause and a decision too", async () => {
  const log: string[] = [];
  const onUsage = async (usage: Usage) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    log.push(`usage ${usage.inputTokens}+${usage.outputTokens}`);
  };
  const agent = createAgent({
    name: 't',
    model: reporting([
      { inputTokens: 10, outputTokens: 1 },
      { inputTokens: 20, outputTokens: 2 },
    ]),
    tools: [lookup],
    store: loggingStore(log),
  });
  const result = agent.send('x', { onUsage });
  await result;
  log.push('answered');
  assert.deepEqual(log, ['saved 3', 'usage 10+1', 'saved 4', 'usage 20+2', 'answered']);

  log.length = 0;
  const pausing = createAgent({
    name: 't',
    model: reporting(
      [
        { inputTokens: 7, outputTokens: 3 },
        { inputTokens: 9, outputTokens: 4 },
      ],
      'guarded',
    ),
    tools: [guarded],
    store: loggingStore(log),
  });
  const paused = await pausing.send('x', { onUsage });
  log.push('paused');
  await pausing.decide(paused.approvals[0]!.id, { approved: true, onUsage });
  log.push('decided');
  assert.deepEqual(log, ['saved 2', 'usage 7+3', 'paused', 'saved 3', 'saved 4', 'usage 9+4', 'decided']);
});

test('onUsage is not called for a turn without usage, nor for a turn that was never stored', async () => {
  const seen: Usage[] = [];
  await createAgent({ name: 't', model: reporting([undefined, undefined]), tools: [lookup] }).send('x', {
    onUsage: (usage) => void seen.push(usage),
  });
  const full = createAgent({
    name: 't',
    model: { generate: async () => ({ text: 'y'.repeat(2048), usage: { inputTokens: 1, outputTokens: 1 } }) },
    limits: { sessionBytes: 1024 },
  });
  await assert.rejects(
    full.send('x', { onUsage: (usage) => void seen.push(usage) }),
    (error: unknown) => (error as AgentError).code === 'SESSION_FULL',
  );
  assert.deepEqual(seen, []);
});

test('what onUsage throws fails the run after the turn is stored; onUsage that is not a function is INVALID_INPUT', async () => {
  const agent = createAgent({
    name: 't',
    model: { generate: async () => ({ text: 'y', usage: { inputTokens: 1, outputTokens: 1 } }) },
  });
  await assert.rejects(
    agent.send('x', {
      sessionId: 's',
      onUsage: () => {
        throw new Error('limit store down');
      },
    }),
    /limit store down/,
  );
  assert.equal((await agent.transcript('s')).messages.length, 2);
  await assert.rejects(
    agent.send('x', { onUsage: 'count' as never }),
    (error: unknown) => (error as AgentError).code === 'INVALID_INPUT',
  );
});
