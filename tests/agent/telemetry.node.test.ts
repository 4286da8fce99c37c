// Design §28 with the real OpenTelemetry SDK: the spans of a run in the GenAI conventions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Model, Tool } from '../../src/agent/index.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { type Span, type SpanOptions, trace } from '@opentelemetry/api';
import { AlwaysOffSampler } from '@opentelemetry/sdk-trace-base';
import { sdkTracer, spanNamed, spanTree } from '../helpers/otel.ts';

const otel = sdkTracer();

function deleteTool(): Tool<{ path: string }> {
  return {
    name: 'delete',
    description: 'Deletes a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    needsApproval: ({ path }) => !path.startsWith('/tmp/'),
    execute: ({ path }) => `deleted ${path}`,
  };
}

/** A model that reports usage and names itself, answering with the echo model's turns. */
function meteredModel(): Model {
  const echo = echoModel();
  return {
    provider: 'openai.chat',
    modelId: 'gpt-test',
    async generate(request) {
      return { ...(await echo.generate(request)), usage: { inputTokens: 7, outputTokens: 3 } };
    },
  };
}

test('telemetry is a closed option: unknown keys, a tracer that is none and non-boolean flags are AuthConfigError', () => {
  const base = { name: 't', model: echoModel() };
  const { tracer } = otel;
  assertConfigError(
    () => createAgent({ ...base, telemetry: { tracer, recordContents: true } as never }),
    'createAgent(): telemetry',
    'misspelled recordContent',
  );
  assertConfigError(() => createAgent({ ...base, telemetry: { tracer: {} } as never }), 'createAgent()', 'no tracer');
  // One message per mistake (design §38), each saying what it got.
  for (const [telemetry, message] of [
    [
      { tracer: {} },
      'createAgent(): telemetry.tracer must be an OpenTelemetry Tracer (startActiveSpan or startSpan); got an object',
    ],
    [{ tracer, recordContent: 'yes' }, 'createAgent(): telemetry.recordContent must be true or false; got a string'],
    [{ tracer, recordPrincipal: 0 }, 'createAgent(): telemetry.recordPrincipal must be true or false; got a number'],
    ['on', 'createAgent(): telemetry must be { tracer, recordContent?, recordPrincipal? }; got a string'],
  ] as const)
    assert.throws(() => createAgent({ ...base, telemetry: telemetry as never }), { message });
  assertConfigError(() => createAgent({ ...base, telemetry: tracer as never }), 'createAgent()', 'a bare tracer');
  assertConfigError(
    () => createAgent({ ...base, telemetry: { tracer, recordContent: 'yes' } as never }),
    'createAgent()',
    'recordContent not a boolean',
  );
  assertConfigError(
    () => createAgent({ ...base, telemetry: { tracer, recordPrincipal: 0 } as never }),
    'createAgent()',
    'recordPrincipal not a boolean',
  );
});

test('a send with a tool call and an approval: invoke_agent parents chat and execute_tool, in two runs', async () => {
  otel.reset();
  const agent = createAgent({
    name: 'support',
    model: meteredModel(),
    tools: [deleteTool()],
    settings: { temperature: 0.2, maxOutputTokens: 100, topP: 0.9, stopSequences: ['END'] },
    telemetry: { tracer: otel.tracer },
  });
  const paused = await agent.send('/tool delete {"path":"/tmp/a"}\n/tool delete {"path":"/srv/b"}');
  assert.equal(paused.status, 'awaiting-approval');
  const first = otel.spans();
  assert.deepEqual(spanTree(first), [
    'invoke_agent support < root',
    'chat gpt-test < invoke_agent support',
    'execute_tool delete < invoke_agent support',
  ]);
  const run = spanNamed(first, 'invoke_agent support');
  assert.equal(run.kind, 0);
  assert.equal(run.attributes['gen_ai.operation.name'], 'invoke_agent');
  assert.equal(run.attributes['gen_ai.agent.name'], 'support');
  // The conventions' Required provider, and the model asked for (design §28).
  assert.equal(run.attributes['gen_ai.provider.name'], 'openai');
  assert.equal(run.attributes['gen_ai.request.model'], 'gpt-test');
  assert.equal(run.attributes['gen_ai.conversation.id'], paused.sessionId);
  assert.equal(run.attributes['agentward.run.status'], 'awaiting-approval');
  assert.equal(run.attributes['gen_ai.usage.input_tokens'], 7);
  assert.equal(run.attributes['gen_ai.usage.output_tokens'], 3);
  const chat = spanNamed(first, 'chat gpt-test');
  assert.equal(chat.kind, 2);
  assert.deepEqual(chat.attributes, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': 'gpt-test',
    'gen_ai.conversation.id': paused.sessionId,
    'gen_ai.request.temperature': 0.2,
    'gen_ai.request.max_tokens': 100,
    'gen_ai.request.top_p': 0.9,
    'gen_ai.request.stop_sequences': ['END'],
    'gen_ai.usage.input_tokens': 7,
    'gen_ai.usage.output_tokens': 3,
    'gen_ai.response.finish_reasons': ['tool_calls'],
  });
  const ran = spanNamed(first, 'execute_tool delete');
  assert.deepEqual(ran.attributes, {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.agent.name': 'support',
    'gen_ai.tool.name': 'delete',
    'gen_ai.tool.call.id': 'call_1_0',
    'gen_ai.tool.type': 'function',
    'gen_ai.tool.description': deleteTool().description,
  });
  assert.equal(ran.status.code, 0);

  otel.reset();
  const resumed = await agent.decide(paused.approvals[0]!.id, { approved: true });
  assert.equal(resumed.status, 'completed');
  const second = otel.spans();
  assert.deepEqual(spanTree(second), [
    'invoke_agent support < root',
    'execute_tool delete < invoke_agent support',
    'chat gpt-test < invoke_agent support',
  ]);
  const decided = spanNamed(second, 'execute_tool delete');
  assert.equal(decided.attributes['agentward.approval.outcome'], 'approved');
  assert.equal(decided.attributes['gen_ai.agent.name'], 'support');
  assert.equal(decided.attributes['gen_ai.tool.description'], deleteTool().description);
  assert.equal(spanNamed(second, 'chat gpt-test').attributes['gen_ai.conversation.id'], paused.sessionId);
  assert.equal(decided.attributes['gen_ai.tool.call.id'], 'call_1_1');
  assert.equal(spanNamed(second, 'invoke_agent support').attributes['gen_ai.conversation.id'], paused.sessionId);
  assert.deepEqual(spanNamed(second, 'chat gpt-test').attributes['gen_ai.response.finish_reasons'], ['stop']);
});

test('a denied call is an execute_tool span with the outcome denied', async () => {
  otel.reset();
  const agent = createAgent({
    name: 't',
    model: echoModel(),
    tools: [deleteTool()],
    telemetry: { tracer: otel.tracer },
  });
  const paused = await agent.send('/tool delete {"path":"/srv/b"}');
  otel.reset();
  await agent.decide(paused.approvals[0]!.id, { approved: false, reason: 'no' });
  assert.equal(spanNamed(otel.spans(), 'execute_tool delete').attributes['agentward.approval.outcome'], 'denied');
  assert.equal(spanNamed(otel.spans(), 'chat echo').attributes['gen_ai.provider.name'], 'agentward');
});

test('a model failure sets status ERROR and error.type MODEL_ERROR on the chat span and the run', async () => {
  otel.reset();
  const failing: Model = {
    modelId: 'broken',
    async generate() {
      throw new Error('upstream said: key sk-secret-123 is invalid');
    },
  };
  const agent = createAgent({ name: 't', model: failing, telemetry: { tracer: otel.tracer } });
  await assert.rejects(agent.send('hi'), { code: 'MODEL_ERROR' });
  const spans = otel.spans();
  assert.deepEqual(spanTree(spans), ['invoke_agent t < root', 'chat broken < invoke_agent t']);
  for (const span of spans) {
    assert.equal(span.status.code, 2, span.name);
    assert.equal(span.attributes['error.type'], 'MODEL_ERROR', span.name);
    assert.ok(!JSON.stringify([span.attributes, span.events, span.status]).includes('sk-secret-123'), span.name);
  }
});

test('a tool that fails is an execute_tool span with status ERROR and error.type TOOL_ERROR', async () => {
  otel.reset();
  const broken: Tool = {
    name: 'broken',
    description: 'Fails',
    parameters: { type: 'object' },
    execute: () => {
      throw new Error('db password hunter2 refused');
    },
  };
  const agent = createAgent({ name: 't', model: echoModel(), tools: [broken], telemetry: { tracer: otel.tracer } });
  const original = console.error;
  console.error = () => undefined;
  try {
    await agent.send('/tool broken {}');
  } finally {
    console.error = original;
  }
  const span = spanNamed(otel.spans(), 'execute_tool broken');
  assert.equal(span.status.code, 2);
  assert.equal(span.attributes['error.type'], 'TOOL_ERROR');
  assert.ok(!JSON.stringify([span.attributes, span.events, span.status]).includes('hunter2'));
});

test('contents are recorded only with recordContent: true', async () => {
  otel.reset();
  const plain = createAgent({
    name: 't',
    model: echoModel(),
    tools: [deleteTool()],
    telemetry: { tracer: otel.tracer },
  });
  await plain.send('/tool delete {"path":"/tmp/x"}\nthe launch code is 0000');
  for (const span of otel.spans()) {
    const text = JSON.stringify([span.attributes, span.events]);
    assert.ok(!text.includes('launch code'), `${span.name}: no message content`);
    assert.ok(!text.includes('/tmp/x'), `${span.name}: no tool arguments or results`);
    for (const key of Object.keys(span.attributes))
      assert.ok(!/messages|instructions|arguments|result/.test(key), `${span.name}: no content attribute ${key}`);
  }

  otel.reset();
  const recording = createAgent({
    name: 't',
    model: echoModel(),
    instructions: 'Be brief.',
    tools: [deleteTool()],
    telemetry: { tracer: otel.tracer, recordContent: true },
  });
  await recording.send('/tool delete {"path":"/tmp/x"}');
  const spans = otel.spans();
  const chat = spans.filter((span) => span.name === 'chat echo');
  assert.equal(chat.length, 2);
  assert.deepEqual(JSON.parse(chat[0]!.attributes['gen_ai.input.messages'] as string), [
    { role: 'user', parts: [{ type: 'text', content: '/tool delete {"path":"/tmp/x"}' }] },
  ]);
  assert.match(chat[1]!.attributes['gen_ai.output.messages'] as string, /deleted \/tmp\/x/);
  assert.deepEqual(JSON.parse(chat[1]!.attributes['gen_ai.input.messages'] as string)[2], {
    role: 'tool',
    parts: [{ type: 'tool_call_response', id: 'call_1_0', response: 'deleted /tmp/x' }],
  });
  const run = spanNamed(spans, 'invoke_agent t');
  assert.equal(run.attributes['gen_ai.input.messages'], undefined, 'contents are on the chat spans, once');
  assert.deepEqual(JSON.parse(chat[0]!.attributes['gen_ai.system_instructions'] as string), [
    { type: 'text', content: 'Be brief.' },
  ]);
  assert.deepEqual(JSON.parse(chat[0]!.attributes['gen_ai.output.messages'] as string), [
    {
      role: 'assistant',
      parts: [{ type: 'tool_call', id: 'call_1_0', name: 'delete', arguments: { path: '/tmp/x' } }],
    },
  ]);
  const tool = spanNamed(spans, 'execute_tool delete');
  assert.equal(tool.attributes['gen_ai.tool.call.arguments'], '{"path":"/tmp/x"}');
  assert.equal(tool.attributes['gen_ai.tool.call.result'], 'deleted /tmp/x');
});

test('a run inside an active span (an HTTP instrumentation) nests under it', async () => {
  otel.reset();
  const agent = createAgent({ name: 't', model: echoModel(), telemetry: { tracer: otel.tracer } });
  await otel.tracer.startActiveSpan('POST /agent', async (span) => {
    await agent.send('hi');
    span.end();
  });
  assert.deepEqual(spanTree(otel.spans()), [
    'POST /agent < root',
    'invoke_agent t < POST /agent',
    'chat echo < invoke_agent t',
  ]);
});

test('a run refused before it starts, or failed by its store, still ends its span: ERROR with the code', async () => {
  otel.reset();
  const agent = createAgent({ name: 't', model: echoModel(), telemetry: { tracer: otel.tracer } });
  await assert.rejects(agent.send(''), { code: 'INVALID_INPUT' });
  await assert.rejects(agent.decide('no-such-approval', { approved: true }), { code: 'APPROVAL_NOT_FOUND' });
  const down = Object.assign(new Error('connection refused'), { code: 'STORE_UNAVAILABLE' });
  const broken = createAgent({
    name: 't',
    model: echoModel(),
    store: {
      ...memoryStore(),
      withSession: undefined,
      saveSession: async () => {
        throw down;
      },
    },
    telemetry: { tracer: otel.tracer },
  });
  await assert.rejects(broken.send('hi'), { code: 'STORE_UNAVAILABLE' });
  const spans = otel.spans();
  assert.deepEqual(spanTree(spans), [
    'invoke_agent t < root',
    'invoke_agent t < root',
    'invoke_agent t < root',
    'chat echo < invoke_agent t',
  ]);
  assert.deepEqual(
    spans
      .filter((span) => span.name === 'invoke_agent t')
      .map((span) => [span.status.code, span.attributes['error.type']]),
    [
      [2, 'INVALID_INPUT'],
      [2, 'APPROVAL_NOT_FOUND'],
      [2, 'STORE_UNAVAILABLE'],
    ],
  );
  // The turn itself went well: only the store failed.
  assert.equal(spanNamed(spans, 'chat echo').status.code, 0);
});

test('a run whose span records nothing (a sampler that drops it; the API without an SDK) makes no turn or tool span, and runs as without telemetry', async () => {
  const dropped = sdkTracer(new AlwaysOffSampler());
  const apiOnly = trace.getTracer('no-sdk-registered');
  for (const tracer of [dropped.tracer, apiOnly]) {
    const started: string[] = [];
    const watched = {
      startActiveSpan: ((name: string, options: SpanOptions, fn: (span: Span) => unknown) => {
        started.push(name);
        return tracer.startActiveSpan(name, options, fn);
      }) as never,
    };
    const agent = createAgent({ name: 't', model: echoModel(), tools: [deleteTool()], telemetry: { tracer: watched } });
    const result = await agent.send('hello');
    assert.equal(result.status, 'completed');
    assert.deepEqual(started, ['invoke_agent t'], 'only the run’s span was asked for');
  }
  assert.deepEqual(dropped.spans(), []);
});

test('a span that says it records nothing is ended at once and told nothing; one that records is traced as ever', async () => {
  const calls: string[] = [];
  const tracerOf = (recording: boolean) => ({
    startActiveSpan: ((name: string, _options: unknown, fn: (span: unknown) => unknown) =>
      fn({
        isRecording: () => recording,
        setAttribute: (key: string) => void calls.push(`${name} ${key}`),
        setStatus: () => void calls.push(`${name} status`),
        end: () => void calls.push(`${name} end`),
      })) as never,
  });
  await createAgent({ name: 'quiet', model: echoModel(), telemetry: { tracer: tracerOf(false) } }).send('hello');
  assert.deepEqual(calls, ['invoke_agent quiet end']);
  calls.length = 0;
  await createAgent({ name: 'loud', model: echoModel(), telemetry: { tracer: tracerOf(true) } }).send('hello');
  assert.ok(calls.includes('chat echo end') && calls.includes('invoke_agent loud agentward.run.status'), calls.join());
});

test('a model chosen by a function per caller: the run span names its provider and model with the first turn (design §28)', async () => {
  otel.reset();
  const agent = createAgent({
    name: 'picker',
    model: () => meteredModel(),
    telemetry: { tracer: otel.tracer },
  });
  await agent.send('hi');
  const run = spanNamed(otel.spans(), 'invoke_agent picker');
  assert.equal(run.attributes['gen_ai.provider.name'], 'openai');
  assert.equal(run.attributes['gen_ai.request.model'], 'gpt-test');
  otel.reset();
  await createAgent({ name: 'echoing', model: echoModel(), telemetry: { tracer: otel.tracer } }).send('hi');
  const echoRun = spanNamed(otel.spans(), 'invoke_agent echoing');
  assert.equal(echoRun.attributes['gen_ai.provider.name'], 'agentward');
  assert.equal(echoRun.attributes['gen_ai.request.model'], 'echo');
});
