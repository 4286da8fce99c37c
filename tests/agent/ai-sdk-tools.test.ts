// The AI SDK's tools as they are (design §27), made with the real `ai` package's `tool()`,
// `dynamicTool()` and `jsonSchema()`: an array or a record (a ToolSet, its keys the names), or a
// function of the run context returning either; `inputSchema` as zod, valibot, arktype or
// `jsonSchema()`; §21's validation before `needsApproval` and `execute`, approvals, and the
// refusals at creation (provider-executed tools, tools without execute, near-misses naming the AI
// SDK shape). Runs on Node, Bun, Deno, and inside workerd (tests/auth/jws/workerd.node.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dynamicTool, jsonSchema, tool as aiTool, type ToolSet } from 'ai';
import { z } from 'zod';
import * as v from 'valibot';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { type } from 'arktype';
import { AgentError, AuthConfigError, createAgent, tool } from '../../src/index.ts';
import type { Message, Model, ModelRequest, Principal, ToolSpec } from '../../src/index.ts';

/** A model that calls `name` with `args` once, then answers with the last tool message; it keeps what it was sent. */
function callsTool(name: string, args: unknown): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    async generate(request) {
      requests.push(request);
      const last = request.messages.at(-1)!;
      if (last.role === 'tool') return { text: last.content };
      return { toolCalls: [{ id: 'call_1', name, arguments: args }] };
    },
  };
}

const SECRETISH = 'kelvin-sk-9f8e7d';

const weatherSchemas = {
  zod: z.object({ city: z.string().min(2), unit: z.enum(['c', 'f']).default('c') }),
  valibot: toStandardJsonSchema(
    v.object({ city: v.pipe(v.string(), v.minLength(2)), unit: v.optional(v.picklist(['c', 'f']), 'c') }),
  ),
  arktype: type({ city: 'string >= 2', unit: "'c' | 'f' = 'c'" }),
  'jsonSchema()': jsonSchema<{ city: string; unit?: 'c' | 'f' }>({
    type: 'object',
    properties: { city: { type: 'string', minLength: 2 }, unit: { enum: ['c', 'f'] } },
    required: ['city'],
    additionalProperties: false,
  }),
  'jsonSchema() with validate': jsonSchema<{ city: string; unit: 'c' | 'f' }>(
    { type: 'object', properties: { city: { type: 'string' }, unit: { enum: ['c', 'f'] } }, required: ['city'] },
    {
      validate: (value) => {
        const city = (value as { city?: unknown } | null)?.city;
        return typeof city === 'string' && city.length >= 2
          ? { success: true, value: { city, unit: 'c' as const } }
          : { success: false, error: new Error(`not a city: ${JSON.stringify(value)}`) };
      },
    },
  ),
};

for (const [library, inputSchema] of Object.entries(weatherSchemas)) {
  test(`${library}: an AI SDK tool() in a record (a ToolSet) is the agent's tool: its key is its name, the model is sent its JSON Schema, execute gets the input and { toolCallId, messages, abortSignal }`, async () => {
    const seen: { input: unknown; options: Record<string, unknown> }[] = [];
    const weather = aiTool({
      description: 'Current weather of a city',
      inputSchema: inputSchema as typeof weatherSchemas.zod,
      execute: async (input, options) => {
        seen.push({ input, options: options as unknown as Record<string, unknown> });
        return { celsius: 21 };
      },
    });
    const model = callsTool('weather', { city: 'Paris' });
    const result = await createAgent({ name: 't', model, tools: { weather } }).send('Paris?');
    const spec = model.requests[0]!.tools[0] as ToolSpec;
    assert.equal(spec.name, 'weather');
    assert.equal(spec.description, 'Current weather of a city');
    assert.equal(spec.parameters.type, 'object');
    assert.deepEqual(Object.keys(spec.parameters.properties as object).sort(), ['city', 'unit']);
    assert.equal(seen.length, 1);
    assert.equal((seen[0]!.input as { city: string }).city, 'Paris');
    assert.equal(seen[0]!.options.toolCallId, 'call_1');
    // The messages the model was sent for the turn that made the call, as ModelMessages.
    assert.deepEqual(seen[0]!.options.messages, [{ role: 'user', content: [{ type: 'text', text: 'Paris?' }] }]);
    assert.equal(seen[0]!.options.context, undefined);
    assert.equal('principal' in seen[0]!.options, false);
    assert.equal(result.text, '{"celsius":21}');
  });

  test(`${library}: invalid arguments never reach needsApproval or execute; the model is told the paths and messages, never the values`, async () => {
    for (const needsApproval of [true, () => true]) {
      let reached = false;
      const weather = aiTool({
        description: 'Current weather',
        inputSchema: inputSchema as typeof weatherSchemas.zod,
        needsApproval: typeof needsApproval === 'function' ? () => (reached = true) : needsApproval,
        execute: async () => (reached = true),
      });
      const result = await createAgent({
        name: 't',
        model: callsTool('weather', { city: 'x', unit: SECRETISH }),
        tools: { weather },
      }).send('?');
      assert.equal(reached, false);
      assert.equal(result.status, 'completed', 'nobody is asked to approve invalid arguments');
      const told = result.messages[2]!.content;
      assert.match(told, /^Error: tool "weather": invalid arguments: /);
      assert.doesNotMatch(told, new RegExp(`${SECRETISH}|"x"`), told);
    }
  });
}

test('jsonSchema() without validate is checked as a plain JSON Schema: each failing path is named', async () => {
  let ran = false;
  const weather = aiTool({
    description: 'Current weather',
    inputSchema: weatherSchemas['jsonSchema()'],
    execute: async () => (ran = true),
  });
  const result = await createAgent({
    name: 't',
    model: callsTool('weather', { city: 7, unit: SECRETISH, extra: 1 }),
    tools: { weather },
  }).send('?');
  assert.equal(ran, false);
  assert.equal(
    result.messages[2]!.content,
    'Error: tool "weather": invalid arguments: city: expected string; unit: must be one of "c","f"; extra: is not allowed',
  );
});

test("jsonSchema() with validate: the schema's own verdict decides, and its error (which quotes the value) is not passed on", async () => {
  const ran: unknown[] = [];
  const weather = aiTool({
    description: 'Current weather',
    inputSchema: weatherSchemas['jsonSchema() with validate'],
    execute: async (input) => (ran.push(input), 'sunny'),
  });
  const ok = await createAgent({ name: 't', model: callsTool('weather', { city: 'Oslo' }), tools: { weather } }).send(
    '?',
  );
  assert.deepEqual(ran, [{ city: 'Oslo', unit: 'c' }], "execute gets validate's value");
  assert.equal(ok.text, 'sunny');
  const refused = await createAgent({
    name: 't',
    model: callsTool('weather', { city: SECRETISH.slice(0, 1) }),
    tools: { weather },
  }).send('?');
  assert.equal(refused.messages[2]!.content, 'Error: tool "weather": invalid arguments: invalid');
});

test('a jsonSchema() whose JSON Schema is a promise is resolved before the model is sent it', async () => {
  const weather = aiTool({
    description: 'Current weather',
    inputSchema: jsonSchema<{ city: string }>(
      Promise.resolve({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
    ),
    execute: async ({ city }) => `sunny in ${city}`,
  });
  const model = callsTool('weather', { city: 'Rome' });
  const result = await createAgent({ name: 't', model, tools: { weather } }).send('?');
  assert.deepEqual(model.requests[0]!.tools[0]!.parameters, {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
  });
  assert.equal(result.text, 'sunny in Rome');
});

test("dynamicTool() (type: 'dynamic', as @ai-sdk/mcp makes them) is a tool like the others", async () => {
  const lookup = dynamicTool({
    description: 'Looks a word up',
    inputSchema: z.object({ word: z.string() }),
    execute: async (input) => ({ found: (input as { word: string }).word }),
  });
  assert.equal(lookup.type, 'dynamic');
  const result = await createAgent({ name: 't', model: callsTool('lookup', { word: 'tea' }), tools: { lookup } }).send(
    '?',
  );
  assert.equal(result.text, '{"found":"tea"}');
});

test('needsApproval: true pauses the run before execute; the decision resumes it and execute runs with the validated input', async () => {
  const ran: unknown[] = [];
  const deploy = aiTool({
    description: 'Deploys a service',
    inputSchema: z.object({ service: z.string() }),
    needsApproval: true,
    execute: async (input) => (ran.push(input), `deployed ${input.service}`),
  });
  const agent = createAgent({ name: 't', model: callsTool('deploy', { service: 'edge' }), tools: { deploy } });
  const paused = await agent.send('deploy');
  assert.equal(paused.status, 'awaiting-approval');
  assert.deepEqual(ran, []);
  const resumed = await agent.decide(paused.approvals[0]!.id, { approved: true });
  assert.deepEqual(ran, [{ service: 'edge' }]);
  assert.equal(resumed.text, 'deployed edge');
});

test('needsApproval as a function gets the input and { toolCallId, messages, context }, never the principal, and decides', async () => {
  const asked: unknown[][] = [];
  const refund = aiTool({
    description: 'Refunds an order',
    inputSchema: z.object({ amount: z.number() }),
    needsApproval: async (input, options) => {
      asked.push([input, options]);
      return input.amount > 100;
    },
    execute: async ({ amount }) => `refunded ${amount}`,
  });
  const principal: Principal = { id: 'ada', type: 'user', authenticator: 'custom' };
  const small = await createAgent({ name: 't', model: callsTool('refund', { amount: 20 }), tools: { refund } }).send(
    'refund',
    { principal },
  );
  assert.equal(small.text, 'refunded 20');
  const large = await createAgent({ name: 't', model: callsTool('refund', { amount: 500 }), tools: { refund } }).send(
    'refund',
    { principal },
  );
  assert.equal(large.status, 'awaiting-approval');
  assert.deepEqual(asked[0], [
    { amount: 20 },
    {
      toolCallId: 'call_1',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'refund' }] }],
      context: undefined,
    },
  ]);
  assert.doesNotMatch(JSON.stringify(asked), /ada/);
});

test('tools may be a function of the run context returning a record, possibly a promise: it sees the principal, the tools do not', async () => {
  const principal: Principal = { id: 'ada', type: 'user', authenticator: 'custom' };
  const seen: unknown[] = [];
  const agent = createAgent({
    name: 't',
    model: callsTool('whoami', {}),
    tools: async ({ principal }) => ({
      whoami: aiTool({
        description: 'Who the caller is',
        inputSchema: z.object({}),
        execute: async (_input, options) => (seen.push(options), principal?.id ?? 'nobody'),
      }),
    }),
  });
  assert.equal(agent.awaitsApprovals, true, 'tools chosen per run may ask');
  assert.equal((await agent.send('who?', { principal })).text, 'ada');
  assert.doesNotMatch(JSON.stringify(seen), /"ada"/);
});

test("a record may hold this library's tools under their own names, beside AI SDK tools", async () => {
  const time = tool({ name: 'time', description: 'The time', parameters: { type: 'object' }, execute: () => 'noon' });
  const weather = aiTool({ description: 'Weather', inputSchema: z.object({}), execute: async () => 'sunny' });
  const tools: ToolSet = { weather };
  const agent = createAgent({ name: 't', model: callsTool('time', {}), tools: { ...tools, time } });
  assert.equal(agent.awaitsApprovals, false);
  assert.equal((await agent.send('?')).text, 'noon');
});

test('an execute that streams its output (an async iterable) answers with the last value; toModelOutput makes what the model is told', async () => {
  const progress = aiTool({
    description: 'Counts',
    inputSchema: z.object({}),
    async *execute() {
      yield { done: 1 };
      yield { done: 2 };
    },
  });
  const mcpLike = dynamicTool({
    description: 'An MCP-style result',
    inputSchema: z.object({}),
    execute: async () => ({
      content: [
        { type: 'text', text: 'line 1' },
        { type: 'image', data: 'AAAA' },
      ],
    }),
    toModelOutput: ({ output }) => ({
      type: 'content',
      value: (output as { content: { type: string; text?: string }[] }).content.map((part) =>
        part.type === 'text'
          ? { type: 'text' as const, text: part.text! }
          : { type: 'file' as const, mediaType: 'image/png', data: { type: 'data' as const, data: 'AAAA' } },
      ),
    }),
  });
  const counted = await createAgent({ name: 't', model: callsTool('progress', {}), tools: { progress } }).send('?');
  assert.equal(counted.text, '{"done":2}');
  const told = await createAgent({ name: 't', model: callsTool('mcpLike', {}), tools: { mcpLike } }).send('?');
  assert.equal(told.text, 'line 1\n[file omitted]');
});

test('an AI SDK tool that throws fails like any tool: the model sees tool "<name>" failed, the log gets the error', async () => {
  const broken = aiTool({
    description: 'Breaks',
    inputSchema: z.object({}),
    execute: async (): Promise<string> => {
      throw new Error(`db down: ${SECRETISH}`);
    },
  });
  const original = console.error;
  const logged: unknown[][] = [];
  console.error = (...args: unknown[]) => void logged.push(args);
  try {
    const result = await createAgent({ name: 't', model: callsTool('broken', {}), tools: { broken } }).send('?');
    assert.equal(result.text, 'Error: tool "broken" failed');
    assert.equal(logged.length, 1);
  } finally {
    console.error = original;
  }
});

/** createAgent refuses `tools` with the configuration error of every factory, its message matching `pattern`. */
const refused = (tools: unknown, pattern: RegExp) =>
  assert.throws(
    () => createAgent({ name: 't', model: callsTool('x', {}), tools: tools as never }),
    (error: unknown) =>
      error instanceof AuthConfigError && error.code === 'AGENT_AUTH_CONFIG_INVALID' && pattern.test(error.message),
  );

test("a provider-executed tool (type: 'provider') is refused at creation, by name", () => {
  const webSearch = { type: 'provider', id: 'openai.web_search', args: {}, inputSchema: z.object({}) };
  refused({ web_search: webSearch }, /tool "web_search" is provider-executed \(type: 'provider'\)/);
});

test('an AI SDK tool without execute is refused at creation, by name', () => {
  const noExecute = aiTool({ description: 'Asks the client', inputSchema: z.object({}), outputSchema: z.string() });
  refused({ ask_user: noExecute }, /tool "ask_user" has no execute function \(an AI SDK tool: tool\(\{/);
});

test('near-misses name the AI SDK shape: an array of AI SDK tools, a record value that is no tool, an inputSchema of no known kind', () => {
  const weather = aiTool({ description: 'Weather', inputSchema: z.object({}), execute: async () => 'sunny' });
  refused([weather], /an AI SDK tool \(inputSchema\) has no name of its own: give AI SDK tools as a record/);
  refused({ weather: { description: 'Weather', execute: () => 'sunny' } }, /"weather" is not an AI SDK tool/);
  refused(
    { weather: { description: 'Weather', inputSchema: { type: 'object' }, execute: () => 'sunny' } },
    /tool "weather" needs inputSchema: zod 4\.2 or later, valibot through toStandardJsonSchema, arktype, or jsonSchema\(\)/,
  );
  refused('weather', /tools must be an array of tools, or a record of AI SDK tools \(a ToolSet/);
  const time = tool({ name: 'time', description: '', parameters: { type: 'object' }, execute: () => 'noon' });
  refused({ clock: time }, /"clock" is not a tool of that name \(its name is "time"\)/);
});

test('the tools function result is checked the same way when a run starts', async () => {
  const agent = createAgent({
    name: 't',
    model: callsTool('x', {}),
    tools: () => ({ web_search: { type: 'provider', id: 'a.b', args: {}, inputSchema: z.object({}) } }) as never,
  });
  await assert.rejects(
    agent.send('?'),
    (error: unknown) =>
      error instanceof AgentError &&
      /the tools function result: tool "web_search" is provider-executed/.test(error.message),
  );
});

// Types: a ToolSet and tool() results are createAgent tools as they are (tsc checks this file).
const typedSet: ToolSet = { weather: aiTool({ description: 'W', inputSchema: z.object({}), execute: async () => 1 }) };
void createAgent({ name: 't', model: callsTool('x', {}), tools: typedSet });
void createAgent({
  name: 't',
  model: callsTool('x', {}),
  tools: [{ name: 'n', description: '', parameters: { type: 'object' }, execute: (args) => args }],
});
void (null as unknown as Message);
