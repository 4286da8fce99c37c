// Bad input: each a clear error or a recorded failure, never a corrupted transcript or checkpoint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentError, createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Model, ModelDelta, RunEvent, Tool } from '../../src/agent/index.ts';
import { captureConsoleError } from '../helpers/console.ts';

const isCode = (code: string) => (error: unknown) => error instanceof AgentError && error.code === code;

const flaky: Tool = {
  name: 'flaky',
  description: 'Always fails',
  parameters: { type: 'object' },
  execute: () => {
    throw new Error('disk full');
  },
};

test('an unknown session id: transcript throws SESSION_NOT_FOUND and pendingApprovals is empty', async () => {
  const agent = createAgent({ name: 't', model: echoModel() });
  await assert.rejects(agent.transcript('no-such-session'), isCode('SESSION_NOT_FOUND'));
  assert.deepEqual(await agent.pendingApprovals('no-such-session'), []);
});

test('bad send input is INVALID_INPUT: message, session id, metadata, principal', async () => {
  const agent = createAgent({ name: 't', model: echoModel() });
  await assert.rejects(agent.send(42 as never), isCode('INVALID_INPUT'));
  await assert.rejects(agent.send(''), isCode('INVALID_INPUT'));
  await assert.rejects(agent.send('hi', { sessionId: '' }), isCode('INVALID_INPUT'));
  await assert.rejects(agent.send('hi', { sessionId: 'has space' }), isCode('INVALID_INPUT'));
  await assert.rejects(agent.send('hi', { sessionId: 'x'.repeat(257) }), isCode('INVALID_INPUT'));
  await assert.rejects(agent.send('hi', { metadata: [] as never }), isCode('INVALID_INPUT'));
  await assert.rejects(agent.send('hi', { metadata: { n: 1n } }), isCode('INVALID_INPUT'));
  await assert.rejects(
    agent.send('hi', { principal: { id: '', type: 'user', authenticator: 'jwt' } }),
    isCode('INVALID_INPUT'),
  );
  await assert.rejects(agent.send('hi', { principal: { id: 'a', type: 'root' } as never }), isCode('INVALID_INPUT'));
  await assert.rejects(agent.transcript('bad id'), isCode('INVALID_INPUT'));
});

test('a tool that throws is recorded as a generic tool failure (tool "<name>" failed), the error goes to the server log, and the run continues', async () => {
  const leaky: Tool = {
    ...flaky,
    name: 'db',
    execute: () => {
      throw new Error('connect postgres://app:s3cret-pw@db/prod failed');
    },
  };
  const agent = createAgent({ name: 't', model: echoModel(), tools: [leaky] });
  const events: RunEvent[] = [];
  const { result, calls } = await captureConsoleError(() =>
    agent.send('/tool db {}', { onEvent: (e) => events.push(e) }),
  );
  assert.equal(result.status, 'completed');
  assert.deepEqual(result.messages[2], { role: 'tool', toolCallId: 'call_1_0', content: 'Error: tool "db" failed' });
  assert.equal(result.text, 'Tool results: db: Error: tool "db" failed', 'the model saw only the generic text');
  assert.ok(events.some((e) => e.type === 'tool-error' && e.error === 'tool "db" failed'));
  assert.deepEqual((await agent.transcript(result.sessionId)).messages, result.messages);
  assert.ok(
    !JSON.stringify([result, events]).includes('s3cret'),
    'the secret reaches neither the caller, the transcript nor the model',
  );
  assert.equal(calls.length, 1);
  assert.match(String(calls[0]![0]), /tool "db" failed/);
  assert.match((calls[0]![1] as Error).message, /s3cret/, 'the details are in the server log');
});

test('a tool that opts in with exposeErrors: true shows its error as is', async () => {
  const agent = createAgent({ name: 't', model: echoModel(), tools: [{ ...flaky, exposeErrors: true }] });
  const events: RunEvent[] = [];
  const { result, calls } = await captureConsoleError(() =>
    agent.send('/tool flaky {}', { onEvent: (e) => events.push(e) }),
  );
  assert.deepEqual(result.messages[2], { role: 'tool', toolCallId: 'call_1_0', content: 'Error: disk full' });
  assert.equal(result.text, 'Tool results: flaky: Error: disk full');
  assert.ok(events.some((e) => e.type === 'tool-error' && e.error === 'disk full'));
  assert.equal(calls.length, 0);
});

test('a model that calls an unknown tool gets a recorded failure, not a crash', async () => {
  const agent = createAgent({ name: 't', model: echoModel(), tools: [flaky] });
  const events: RunEvent[] = [];
  const result = await agent.send('/tool launch_missiles {"target":"moon"}', { onEvent: (e) => events.push(e) });
  assert.equal(result.status, 'completed');
  assert.deepEqual(result.messages[2], {
    role: 'tool',
    toolCallId: 'call_1_0',
    content: 'Error: unknown tool "launch_missiles"',
  });
  assert.ok(events.some((e) => e.type === 'tool-error' && e.toolCallId === 'call_1_0'));
});

test('arguments that are not an object, for a tool whose parameters are an object, are a recorded failure', async () => {
  let ran = false;
  const tool: Tool = { name: 'strict', description: '', parameters: { type: 'object' }, execute: () => (ran = true) };
  const agent = createAgent({ name: 't', model: echoModel(), tools: [tool] });
  const result = await agent.send('/tool strict "text"');
  assert.equal(ran, false);
  assert.equal(result.messages[2]!.content, 'Error: tool "strict": invalid arguments: expected object');
});

/** Streams a few words, then fails: a model error mid-stream (runs with `onEvent` stream). */
function breaksMidStream(): Model & { broken: boolean } {
  const echo = echoModel();
  const model = {
    broken: false,
    generate: (request: Parameters<Model['generate']>[0]) => echo.generate(request),
    async *stream(request: Parameters<Model['generate']>[0]): AsyncIterable<ModelDelta> {
      if (!model.broken) {
        yield* echo.stream!(request);
        return;
      }
      yield { type: 'text', text: 'half an ' };
      throw new Error('connection reset');
    },
  };
  return model;
}

test('a model error mid-stream fails the run with MODEL_ERROR and the stored transcript is the last consistent one', async () => {
  const model = breaksMidStream();
  const agent = createAgent({ name: 't', model });
  const first = await agent.send('first');
  model.broken = true;
  const events: RunEvent[] = [];
  await assert.rejects(
    agent.session(first.sessionId).send('second', { onEvent: (e) => events.push(e) }),
    (error: unknown) => {
      assert.ok(isCode('MODEL_ERROR')(error));
      assert.equal((error as AgentError).message, 'the model failed');
      assert.equal(((error as AgentError).cause as Error).message, 'connection reset');
      return true;
    },
  );
  assert.deepEqual(
    events.map((e) => e.type),
    ['start', 'step-start', 'text-delta', 'error'],
  );
  assert.deepEqual(events.at(-1), { type: 'error', error: 'the model failed', code: 'MODEL_ERROR' });
  assert.deepEqual((await agent.transcript(first.sessionId)).messages, first.messages);
  model.broken = false;
  const retried = await agent.session(first.sessionId).send('second');
  assert.deepEqual(
    retried.messages.map((m) => m.content),
    ['first', 'first', 'second', 'second'],
  );
});

test('a model error on the first message of a new session stores no session', async () => {
  const model = breaksMidStream();
  model.broken = true;
  const agent = createAgent({ name: 't', model });
  await assert.rejects(agent.send('hello', { sessionId: 'fresh', onEvent: () => {} }), isCode('MODEL_ERROR'));
  await assert.rejects(agent.transcript('fresh'), isCode('SESSION_NOT_FOUND'));
});

test('a model error after an approval keeps the decided call answered in the transcript and leaves no checkpoint behind', async () => {
  const model = breaksMidStream();
  const data = new Map<string, string>();
  const guarded: Tool = {
    name: 'guarded',
    description: '',
    parameters: { type: 'object' },
    needsApproval: true,
    execute: () => 'did it',
  };
  const agent = createAgent({ name: 't', model, tools: [guarded], store: memoryStore(data) });
  const paused = await agent.send('/tool guarded {}');
  model.broken = true;
  await assert.rejects(
    agent.decide(paused.approvals[0]!.id, { approved: true, onEvent: () => {} }),
    isCode('MODEL_ERROR'),
  );
  const { messages, audit } = await agent.transcript(paused.sessionId);
  assert.deepEqual(messages, [...paused.messages, { role: 'tool', toolCallId: 'call_1_0', content: 'did it' }]);
  assert.equal(audit.length, 1);
  assert.equal([...data.keys()].filter((key) => key.startsWith('checkpoint:')).length, 0);
  model.broken = false;
  assert.equal((await agent.session(paused.sessionId).send('next')).text, 'next');
});

test('a model error before it pauses leaves no checkpoint and the session unchanged', async () => {
  let calls = 0;
  const model: Model = {
    generate: async () => {
      if (++calls === 2) throw new Error('boom');
      return { toolCalls: [{ id: 'c1', name: 'flaky', arguments: {} }] };
    },
  };
  const data = new Map<string, string>();
  const agent = createAgent({ name: 't', model, tools: [flaky], store: memoryStore(data) });
  await assert.rejects(agent.send('go', { sessionId: 's' }), isCode('MODEL_ERROR'));
  // The tool turn was complete (every call answered) before the model failed: it is kept.
  assert.deepEqual((await agent.transcript('s')).messages, [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'flaky', arguments: {} }] },
    { role: 'tool', toolCallId: 'c1', content: 'Error: tool "flaky" failed' },
  ]);
  assert.equal(
    [...data.keys()].some((key) => key.startsWith('checkpoint:')),
    false,
  );
});

test('a model turn of the wrong shape is MODEL_ERROR', async () => {
  const bad = (turn: unknown) => createAgent({ name: 't', model: { generate: async () => turn as never } }).send('x');
  await assert.rejects(bad(null), isCode('MODEL_ERROR'));
  await assert.rejects(bad({ text: 5 }), isCode('MODEL_ERROR'));
  await assert.rejects(bad({ toolCalls: [{ name: 'a' }] }), isCode('MODEL_ERROR'));
  await assert.rejects(
    bad({
      toolCalls: [
        { id: 'a', name: 'a' },
        { id: 'a', name: 'a' },
      ],
    }),
    isCode('MODEL_ERROR'),
  );
});

test("an aborted run stops with the signal's reason before the next model turn", async () => {
  const controller = new AbortController();
  const stopper: Tool = {
    name: 'stop',
    description: '',
    parameters: {},
    execute: () => (controller.abort(new Error('user left')), 'ok'),
  };
  const agent = createAgent({ name: 't', model: echoModel(), tools: [stopper] });
  await assert.rejects(agent.send('/tool stop {}', { sessionId: 'ab', signal: controller.signal }), /user left/);
  // The turn was complete before the abort: the transcript holds it, every call answered.
  assert.equal((await agent.transcript('ab')).messages.at(-1)?.role, 'tool');
});

test("the error event carries only the agent's own messages: what a dynamic function throws stays out of it", async () => {
  const agent = createAgent({
    name: 't',
    model: echoModel(),
    instructions: () => {
      throw new Error('cannot reach postgres://admin:hunter2@db');
    },
  });
  const events: RunEvent[] = [];
  await assert.rejects(agent.send('hi', { onEvent: (e) => events.push(e) }), /hunter2/);
  assert.deepEqual(
    events.map((e) => e.type),
    ['start', 'error'],
  );
  assert.deepEqual(events[1], { type: 'error', error: 'the run failed' });
});
