// AI SDK language models as `createAgent({ model })` (design §21), driven by the AI SDK's own
// MockLanguageModelV3 and MockLanguageModelV4 (`ai/test`): what the agent hands the model
// (system message, transcript, function tools, settings, abort signal), what it reads back
// (text, tool calls, usage), generate against stream, and the failures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, jsonSchema, stepCountIs, tool as aiTool } from 'ai';
import { MockLanguageModelV3, MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { AgentError, AuthConfigError, createAgent, tool } from '../../../src/index.ts';
import type { Principal, RunEvent } from '../../../src/index.ts';

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});
const stop = { unified: 'stop' as const, raw: 'stop' };
const generated = (content: unknown[], tokens: [number, number] = [3, 2]) =>
  ({ content, finishReason: stop, usage: usage(...tokens), warnings: [] }) as never;
const streamed = (parts: unknown[]) => ({ stream: convertArrayToReadableStream(parts) }) as never;
const textStream = (pieces: string[], tokens: [number, number] = [3, 2]) =>
  streamed([
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
    ...pieces.map((delta) => ({ type: 'text-delta', id: 't', delta })),
    { type: 'text-end', id: 't' },
    { type: 'finish', finishReason: stop, usage: usage(...tokens) },
  ]);
const isModelError = (message: string) => (error: unknown) =>
  error instanceof AgentError && error.code === 'MODEL_ERROR' && error.message === message && error.cause === undefined;

const weather = tool({
  name: 'weather',
  description: 'Current weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  execute: ({ city }) => ({ city, celsius: 21 }),
});

for (const Mock of [MockLanguageModelV3, MockLanguageModelV4]) {
  const version = Mock === MockLanguageModelV3 ? 'v3' : 'v4';

  test(`${version}: a run nobody streams calls doGenerate; the model is handed the system message, the transcript, function tools, the settings and the abort signal`, async () => {
    const model = new Mock({
      doGenerate: [
        generated(
          [
            { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: '{"city":"Paris"}' },
            { type: 'tool-call', toolCallId: 'c2', toolName: 'weather', input: '{"city":"Rome"}' },
          ],
          [10, 4],
        ),
        generated(
          [
            { type: 'reasoning', text: 'thinking…' },
            { type: 'text', text: 'Mild ' },
            { type: 'text', text: 'in both.' },
          ],
          [20, 5],
        ),
      ],
    });
    const settings = {
      temperature: 0.2,
      maxOutputTokens: 100,
      topP: 0.9,
      stopSequences: ['END'],
      headers: { 'X-Trace': 'abc' },
    };
    const agent = createAgent({ name: 't', model, instructions: 'Be brief.', tools: [weather], settings });
    const { signal } = new AbortController();
    const result = await agent.send('Paris and Rome?', { signal });
    assert.equal(result.text, 'Mild in both.');
    assert.deepEqual(result.usage, { inputTokens: 30, outputTokens: 9 });
    assert.equal(model.doStreamCalls.length, 0);
    assert.equal(model.doGenerateCalls.length, 2);
    const [first, second] = model.doGenerateCalls;
    assert.equal(first!.abortSignal, signal);
    assert.equal(first!.temperature, 0.2);
    assert.equal(first!.maxOutputTokens, 100);
    assert.equal(first!.topP, 0.9);
    assert.deepEqual(first!.stopSequences, ['END']);
    assert.deepEqual(first!.headers, { 'x-trace': 'abc' });
    assert.deepEqual(first!.tools, [
      { type: 'function', name: 'weather', description: 'Current weather of a city', inputSchema: weather.parameters },
    ]);
    assert.deepEqual(first!.prompt, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Paris and Rome?' }] },
    ]);
    assert.deepEqual(second!.prompt.slice(2), [
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: { city: 'Paris' } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'weather', input: { city: 'Rome' } },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'weather',
            output: { type: 'json', value: { city: 'Paris', celsius: 21 } },
          },
          {
            type: 'tool-result',
            toolCallId: 'c2',
            toolName: 'weather',
            output: { type: 'json', value: { city: 'Rome', celsius: 21 } },
          },
        ],
      },
    ]);
  });

  test(`${version}: a streamed run calls doStream and passes each text delta and tool call on; usage comes from the finish part`, async () => {
    const model = new Mock({
      doStream: [
        streamed([
          { type: 'stream-start', warnings: [] },
          { type: 'tool-input-start', id: 'c1', toolName: 'weather' },
          { type: 'tool-input-delta', id: 'c1', delta: '{"city":' },
          { type: 'tool-input-delta', id: 'c1', delta: '"Oslo"}' },
          { type: 'tool-input-end', id: 'c1' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: '{"city":"Oslo"}' },
          { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(7, 3) },
        ]),
        textStream(['Cold ', 'in ', 'Oslo.'], [12, 4]),
      ],
    });
    const agent = createAgent({ name: 't', model, tools: [weather] });
    const events: RunEvent[] = [];
    const result = await agent.send('Oslo?', { onEvent: (event) => events.push(event) });
    assert.equal(model.doGenerateCalls.length, 0);
    assert.equal(model.doStreamCalls.length, 2);
    assert.deepEqual(
      events.filter((e) => e.type === 'text-delta').map((e) => (e as { text: string }).text),
      ['Cold ', 'in ', 'Oslo.'],
    );
    assert.deepEqual(
      events.filter((e) => e.type === 'tool-call').map((e) => (e as { call: unknown }).call),
      [{ id: 'c1', name: 'weather', arguments: { city: 'Oslo' } }],
    );
    assert.deepEqual(result.usage, { inputTokens: 19, outputTokens: 7 });
    assert.deepEqual(
      result.messages.flatMap((m) => (m.role === 'assistant' ? [m.usage] : [])),
      [
        { inputTokens: 7, outputTokens: 3 },
        { inputTokens: 12, outputTokens: 4 },
      ],
    );
  });

  test(`${version}: a tool call the provider executed itself is not run by the agent`, async () => {
    let ran = false;
    const model = new Mock({
      doGenerate: generated([
        { type: 'tool-call', toolCallId: 'p1', toolName: 'weather', input: '{}', providerExecuted: true },
        { type: 'text', text: 'done' },
      ]),
    });
    const agent = createAgent({ name: 't', model, tools: [{ ...weather, execute: () => (ran = true) }] });
    const result = await agent.send('hi');
    assert.equal(result.text, 'done');
    assert.equal(ran, false);
    assert.deepEqual(
      result.messages.map((m) => m.role),
      ['user', 'assistant'],
    );
  });
}

test('the model function may return an AI SDK model, chosen per caller; a tool that needs approval pauses and resumes', async () => {
  const models = new Map<string, MockLanguageModelV4>();
  const modelFor = (principal?: Principal) => {
    const id = principal?.id ?? 'guest';
    if (!models.has(id)) {
      models.set(
        id,
        new MockLanguageModelV4({
          modelId: id,
          doGenerate: [
            generated(
              [{ type: 'tool-call', toolCallId: 'd1', toolName: 'deploy', input: '{"service":"api"}' }],
              [5, 1],
            ),
            generated([{ type: 'text', text: `deployed for ${id}` }], [9, 2]),
          ],
        }),
      );
    }
    return models.get(id)!;
  };
  const deploy = tool({
    name: 'deploy',
    description: 'Deploys',
    parameters: { type: 'object' },
    needsApproval: true,
    execute: ({ service }) => `ok ${service}`,
  });
  const agent = createAgent({ name: 't', model: async ({ principal }) => modelFor(principal), tools: [deploy] });
  const principal: Principal = { id: 'ada', type: 'user', authenticator: 'basic' };
  const paused = await agent.send('deploy', { principal });
  assert.equal(paused.status, 'awaiting-approval');
  assert.deepEqual(paused.usage, { inputTokens: 5, outputTokens: 1 });
  const done = await agent.decide(paused.approvals[0]!.id, { approved: true });
  assert.equal(done.text, 'deployed for ada');
  assert.deepEqual(done.usage, { inputTokens: 9, outputTokens: 2 });
  assert.equal(models.get('ada')!.doGenerateCalls.length, 2);
  assert.deepEqual(models.get('ada')!.doGenerateCalls[1]!.prompt.at(-1), {
    role: 'tool',
    content: [{ type: 'tool-result', toolCallId: 'd1', toolName: 'deploy', output: { type: 'text', value: 'ok api' } }],
  });
});

test('a provider error is MODEL_ERROR naming its HTTP status, or the AI SDK error name, never its body; no cause is kept', async () => {
  const secret = 'sk-live-from-the-provider-body';
  const apiCallError = Object.assign(new Error(`Incorrect API key provided: ${secret}`), {
    name: 'AI_APICallError',
    statusCode: 401,
    responseBody: `{"error":"${secret}"}`,
    url: 'https://api.example/v1',
  });
  const typeError = Object.assign(new Error(`Type validation failed: Value: {"text":"${secret}"}`), {
    name: 'AI_TypeValidationError',
    value: { text: secret },
  });
  const cases: [unknown, string][] = [
    [apiCallError, 'the model answered with HTTP 401'],
    [typeError, 'the model failed (AI_TypeValidationError)'],
    [new Error(secret), 'the model failed'],
  ];
  for (const [thrown, message] of cases) {
    const agent = createAgent({
      name: 't',
      model: new MockLanguageModelV4({
        doGenerate: async () => {
          throw thrown;
        },
        doStream: async () => {
          throw thrown;
        },
      }),
    });
    for (const onEvent of [undefined, () => {}]) {
      await assert.rejects(agent.send('hi', { onEvent }), (error: unknown) => {
        assert.ok(isModelError(message)(error), String(error));
        assert.doesNotMatch(JSON.stringify(error, Object.getOwnPropertyNames(error)), /sk-live/);
        return true;
      });
    }
  }
});

test('a stream that reports an error, ends without its finish part or says it was interrupted is MODEL_ERROR; the session is left as it was', async () => {
  const start = [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'half an ' },
  ];
  const cases: [unknown[], string][] = [
    [
      [...start, { type: 'error', error: { type: 'overloaded_error', message: 'sk-live-secret' } }],
      'the model reported an error in its stream',
    ],
    [
      [...start, { type: 'error', error: { statusCode: 529, responseBody: 'sk-live-secret' } }],
      'the model answered with HTTP 529',
    ],
    [start, 'the model stream ended before it finished'],
    [
      [...start, { type: 'finish', finishReason: { unified: 'interrupted', raw: undefined }, usage: usage(1, 1) }],
      'the model stream ended before it finished',
    ],
  ];
  for (const [parts, message] of cases) {
    const agent = createAgent({ name: 't', model: new MockLanguageModelV4({ doStream: streamed(parts) }) });
    const events: RunEvent[] = [];
    await assert.rejects(
      agent.send('hi', { sessionId: 's', onEvent: (event) => events.push(event) }),
      isModelError(message),
    );
    assert.deepEqual(events.at(-1), { type: 'error', error: message, code: 'MODEL_ERROR' });
    await assert.rejects(agent.transcript('s'), (error: unknown) => (error as AgentError).code === 'SESSION_NOT_FOUND');
  }
});

test('an aborted run rejects with the abort reason, and the signal the model got is aborted', async () => {
  const model = new MockLanguageModelV4({
    doGenerate: ({ abortSignal }) =>
      new Promise((_, reject) =>
        abortSignal?.addEventListener('abort', () => reject(abortSignal.reason), { once: true }),
      ),
  });
  const agent = createAgent({ name: 't', model });
  const controller = new AbortController();
  const run = agent.send('hi', { signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 5));
  controller.abort();
  await assert.rejects(run, (error: unknown) => (error as Error).name === 'AbortError');
  assert.equal(model.doGenerateCalls[0]!.abortSignal?.aborted, true);
});

test('createAgent takes only AI SDK models of specification v3 and v4: a v2 model is AuthConfigError at creation, a model function returning one fails the run with INVALID_AGENT', async () => {
  const v2 = {
    specificationVersion: 'v2',
    provider: 'p',
    modelId: 'm',
    doGenerate: async () => ({}),
    doStream: async () => ({}),
  };
  const names = (error: unknown) =>
    /AI SDK language model \(specificationVersion 'v3' or 'v4'\)/.test((error as Error).message);
  const refused = (error: unknown) => error instanceof AuthConfigError && names(error);
  assert.throws(() => createAgent({ name: 't', model: v2 as never }), refused);
  assert.throws(
    () => createAgent({ name: 't', model: { specificationVersion: 'v4', doGenerate: async () => ({}) } as never }),
    refused,
  );
  const agent = createAgent({ name: 't', model: () => v2 as never });
  await assert.rejects(
    agent.send('hi'),
    (error) => error instanceof AgentError && error.code === 'INVALID_AGENT' && names(error),
  );
});

test("tool results reach the model as the AI SDK's generateText sends them: an object as { type: 'json', value }, a string as { type: 'text' } (a recording MockLanguageModelV3)", async () => {
  const calls = [
    { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: '{"city":"Paris"}' },
    { type: 'tool-call', toolCallId: 'c2', toolName: 'greet', input: '{"name":"Ada"}' },
    { type: 'tool-call', toolCallId: 'c3', toolName: 'nothing', input: '{}' },
  ];
  const recording = () =>
    new MockLanguageModelV3({ doGenerate: [generated(calls), generated([{ type: 'text', text: 'done' }])] });
  const schema = { type: 'object', properties: { city: { type: 'string' }, name: { type: 'string' } } } as const;
  type Input = { city?: string; name?: string };
  const outputs: Record<string, (input: Input) => unknown> = {
    weather: ({ city }) => ({ city, celsius: 21, tags: ['mild'] }),
    greet: ({ name }) => `Hello ${name}`,
    nothing: () => null,
  };

  const byAiSdk = recording();
  await generateText({
    model: byAiSdk,
    prompt: 'hi',
    stopWhen: stepCountIs(2),
    tools: Object.fromEntries(
      Object.entries(outputs).map(([name, execute]) => [
        name,
        aiTool({ description: name, inputSchema: jsonSchema<Input>(schema), execute }),
      ]),
    ),
  });
  const byAgent = recording();
  await createAgent({
    name: 't',
    model: byAgent,
    tools: Object.entries(outputs).map(([name, execute]) =>
      tool({ name, description: name, parameters: schema, execute: (input) => execute(input as Input) }),
    ),
  }).send('hi');

  // As JSON goes to a provider (generateText leaves `providerOptions: undefined` keys on its parts).
  const toolMessage = (model: InstanceType<typeof MockLanguageModelV3>) =>
    JSON.parse(JSON.stringify(model.doGenerateCalls[1]!.prompt.find((message) => message.role === 'tool')));
  assert.deepEqual(toolMessage(byAgent), toolMessage(byAiSdk));
  assert.deepEqual(
    (toolMessage(byAgent).content as { output: unknown }[]).map((part) => part.output),
    [
      { type: 'json', value: { city: 'Paris', celsius: 21, tags: ['mild'] } },
      { type: 'text', value: 'Hello Ada' },
      { type: 'json', value: null },
    ],
  );
});
