import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import { AuthConfigError } from '../../src/auth/index.ts';
import type { Model, ModelRequest, RunEvent, Tool } from '../../src/agent/index.ts';

const add: Tool<{ a: number; b: number }> = {
  name: 'add',
  description: 'Adds two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: ({ a, b }) => ({ sum: a + b }),
};

test('a new session id is random 128-bit base64url when the caller gives none', async () => {
  const agent = createAgent({ name: 't', model: echoModel() });
  const ids = new Set<string>();
  for (let i = 0; i < 20; i++) ids.add((await agent.send('hi')).sessionId);
  assert.equal(ids.size, 20);
  for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{21}[AQgw]$/);
});

test("echoModel replies with the user's text and the transcript keeps both turns", async () => {
  const agent = createAgent({ name: 't', model: echoModel() });
  const result = await agent.send('hello there');
  assert.deepEqual(result, {
    sessionId: result.sessionId,
    status: 'completed',
    text: 'hello there',
    messages: [
      { role: 'user', content: 'hello there' },
      { role: 'assistant', content: 'hello there' },
    ],
    approvals: [],
  });
  const transcript = await agent.transcript(result.sessionId);
  assert.deepEqual(transcript, { sessionId: result.sessionId, messages: result.messages, audit: [] });
});

test('a session continues: session(id).send appends to the same transcript; a given id that does not exist is created by its first send', async () => {
  const agent = createAgent({ name: 't', model: echoModel() });
  const session = agent.session('my-thread');
  await session.send('one');
  const second = await session.send('two');
  assert.equal(second.sessionId, 'my-thread');
  assert.deepEqual(
    second.messages.map((m) => m.content),
    ['one', 'one', 'two', 'two'],
  );
  const viaSend = await agent.send('three', { sessionId: 'my-thread' });
  assert.equal(viaSend.messages.length, 6);
});

test('the tool loop: a /tool call runs the tool and the model answers with its output', async () => {
  const agent = createAgent({ name: 't', model: echoModel(), tools: [add] });
  const result = await agent.send('/tool add {"a":2,"b":3}');
  assert.equal(result.status, 'completed');
  assert.equal(result.text, 'Tool results: add: {"sum":5}');
  assert.deepEqual(result.messages.slice(1, 3), [
    { role: 'assistant', content: '', toolCalls: [{ id: 'call_1_0', name: 'add', arguments: { a: 2, b: 3 } }] },
    { role: 'tool', toolCallId: 'call_1_0', content: '{"sum":5}', json: true },
  ]);
});

test('events arrive in order as the run happens, text as several deltas when the model streams', async () => {
  const agent = createAgent({ name: 't', model: echoModel(), tools: [add] });
  const events: RunEvent[] = [];
  const result = await agent.send('/tool add {"a":1,"b":1}', {
    sessionId: 'ev',
    onEvent: (event) => events.push(event),
  });
  assert.deepEqual(
    events.map((e) => e.type),
    [
      'start',
      'step-start',
      'tool-call',
      'tool-result',
      'step-finish',
      'step-start',
      'text-delta',
      'text-delta',
      'text-delta',
      'text-delta',
      'step-finish',
      'finish',
    ],
  );
  assert.deepEqual(events[0], { type: 'start', sessionId: 'ev' });
  assert.deepEqual(events[3], { type: 'tool-result', toolCallId: 'call_1_0', output: { sum: 2 } });
  const text = events.flatMap((e) => (e.type === 'text-delta' ? [e.text] : [])).join('');
  assert.equal(text, result.text);
  assert.deepEqual(events.at(-1), { type: 'finish', result });
});

test('a model without stream is streamed as one text delta', async () => {
  const echo = echoModel();
  const agent = createAgent({ name: 't', model: { generate: (request) => echo.generate(request) } });
  const deltas: string[] = [];
  await agent.send('three little words', { onEvent: (e) => e.type === 'text-delta' && deltas.push(e.text) });
  assert.deepEqual(deltas, ['three little words']);
});

test('model, instructions and tools may be async functions; the model sees instructions, history and tool definitions', async () => {
  const requests: ModelRequest[] = [];
  const echo = echoModel();
  const recording: Model = { generate: (request) => (requests.push(request), echo.generate(request)) };
  const agent = createAgent({
    name: 't',
    model: async () => recording,
    instructions: async ({ metadata }) => `Answer in ${String(metadata.locale)}.`,
    tools: async () => [add],
  });
  await agent.send('bonjour', { metadata: { locale: 'fr' } });
  assert.equal(requests[0]!.instructions, 'Answer in fr.');
  assert.deepEqual(requests[0]!.messages, [{ role: 'user', content: 'bonjour' }]);
  assert.deepEqual(requests[0]!.tools, [{ name: 'add', description: 'Adds two numbers', parameters: add.parameters }]);
});

test('the tool loop is bounded: at most maxSteps model turns per run (default 10)', async () => {
  let turns = 0;
  const looping: Model = {
    generate: async () => ({
      text: `turn ${++turns}`,
      toolCalls: [{ id: `c${turns}`, name: 'add', arguments: { a: 1, b: 1 } }],
    }),
  };
  const bounded = createAgent({ name: 't', model: looping, tools: [add], maxSteps: 3 });
  const result = await bounded.send('go');
  assert.equal(turns, 3);
  assert.equal(result.status, 'completed');
  assert.equal(result.text, 'turn 3');
  // Every call of the last turn is still answered: the transcript stays consistent.
  assert.deepEqual(result.messages.at(-1), { role: 'tool', toolCallId: 'c3', content: '{"sum":2}', json: true });
  turns = 0;
  await createAgent({ name: 't', model: looping, tools: [add] }).send('go');
  assert.equal(turns, 10);
});

test('all calls of one model turn run in order', async () => {
  const agent = createAgent({ name: 't', model: echoModel(), tools: [add] });
  const result = await agent.send('/tool add {"a":1,"b":2}\n/tool add {"a":3,"b":4}');
  assert.deepEqual(
    result.messages.filter((m) => m.role === 'tool').map((m) => m.content),
    ['{"sum":3}', '{"sum":7}'],
  );
  assert.equal(result.text, 'Tool results: add: {"sum":3}; add: {"sum":7}');
});

test('a caller mutating a result or an event never changes the stored transcript', async () => {
  const agent = createAgent({ name: 't', model: echoModel(), tools: [add] });
  const result = await agent.send('/tool add {"a":1,"b":2}', {
    onEvent: (event) => {
      if (event.type === 'tool-call') (event.call.arguments as { a: number }).a = 100;
    },
  });
  assert.equal(result.text, 'Tool results: add: {"sum":3}');
  result.messages[0]!.content = 'changed';
  const transcript = await agent.transcript(result.sessionId);
  assert.equal(transcript.messages[0]!.content, '/tool add {"a":1,"b":2}');
  transcript.messages.length = 0;
  assert.equal((await agent.transcript(result.sessionId)).messages.length, 4);
});

test('createAgent rejects options that cannot work with AuthConfigError (AGENT_AUTH_CONFIG_INVALID)', () => {
  const invalid = (options: unknown) =>
    assert.throws(
      () => createAgent(options as never),
      (e: unknown) => e instanceof AuthConfigError && e.code === 'AGENT_AUTH_CONFIG_INVALID',
    );
  invalid({ model: echoModel() });
  invalid({ name: 't' });
  invalid({ name: 't', model: {} });
  invalid({ name: 't', model: echoModel(), maxSteps: 0 });
  invalid({ name: 't', model: echoModel(), maxSteps: 1.5 });
  invalid({ name: 't', model: echoModel(), tools: [add, add] });
  invalid({ name: 't', model: echoModel(), tools: [{ name: 'x', description: '', parameters: {} }] });
  invalid({ name: 't', model: echoModel(), tools: [{ ...add, name: 'remember' }], memory: { scope: () => 'n' } });
  invalid({ name: 't', model: echoModel(), memory: {} });
  invalid({ name: 't', model: echoModel(), store: {} });
  invalid(undefined);
});

test('runs of one session take turns: concurrent sends all land in the transcript, in order', async () => {
  const agent = createAgent({ name: 't', model: echoModel() });
  const results = await Promise.all(['a', 'b', 'c'].map((text) => agent.send(text, { sessionId: 'busy' })));
  assert.deepEqual(
    results.map((r) => r.text),
    ['a', 'b', 'c'],
  );
  assert.deepEqual(
    (await agent.transcript('busy')).messages.map((m) => m.content),
    ['a', 'a', 'b', 'b', 'c', 'c'],
  );
});

test('a listener that throws does not stop the run', async () => {
  const agent = createAgent({ name: 't', model: echoModel(), tools: [add] });
  const result = await agent.send('/tool add {"a":1,"b":1}', {
    sessionId: 'listener',
    onEvent: () => {
      throw new Error('stream closed');
    },
  });
  assert.equal(result.status, 'completed');
  assert.equal((await agent.transcript('listener')).messages.length, 4);
});
