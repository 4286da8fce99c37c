// Tools whose parameters are a Standard Schema with Standard JSON Schema (zod, valibot through
// @valibot/to-json-schema, arktype) or a plain JSON Schema (design §21): what the model is sent,
// arguments validated before the approval policy and execute, the model told what failed
// without the values, and `tool()` typing execute's arguments (tsc checks this file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import * as v from 'valibot';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { type } from 'arktype';
import { AuthConfigError, createAgent, tool } from '../../src/index.ts';
import type { Model, ModelRequest, StandardJsonSchema, Tool, ToolSpec } from '../../src/index.ts';
import { captureConsoleError } from '../helpers/console.ts';

/** A model that calls `name` with `args` once, then answers with the tool's message; it keeps the tool specs it was sent. */
function callsTool(name: string, args: unknown): Model & { tools: ToolSpec[][] } {
  const tools: ToolSpec[][] = [];
  return {
    tools,
    async generate(request: ModelRequest) {
      tools.push(request.tools);
      const last = request.messages.at(-1)!;
      if (last.role === 'tool') return { text: last.content };
      return { toolCalls: [{ id: 'call_1', name, arguments: args }] };
    },
  };
}

const SECRETISH = 'kelvin-sk-9f8e7d';
const INVALID = { city: 'x', unit: SECRETISH, days: 99 };

const schemas = {
  zod: z.object({
    city: z.string().min(2),
    unit: z.enum(['c', 'f']).default('c'),
    days: z.number().int().max(7).optional(),
  }),
  valibot: toStandardJsonSchema(
    v.object({
      city: v.pipe(v.string(), v.minLength(2)),
      unit: v.optional(v.picklist(['c', 'f']), 'c'),
      days: v.optional(v.pipe(v.number(), v.integer(), v.maxValue(7))),
    }),
  ),
  arktype: type({ city: 'string >= 2', unit: "'c' | 'f' = 'c'", 'days?': 'number.integer <= 7' }),
};

// execute's arguments are typed from each schema's output (a type error here fails `tsc`).
const typed = {
  zod: tool({
    name: 'forecast',
    description: 'The forecast of a city',
    parameters: schemas.zod,
    execute: ({ city, unit, days }) => {
      const checked: [string, 'c' | 'f', number | undefined] = [city, unit, days];
      // @ts-expect-error city is a string
      const wrong: number = city;
      return { checked, wrong };
    },
  }),
  valibot: tool({
    name: 'forecast',
    description: 'The forecast of a city',
    parameters: schemas.valibot,
    execute: ({ city, unit, days }) => {
      const checked: [string, 'c' | 'f', number | undefined] = [city, unit, days];
      // @ts-expect-error city is a string
      const wrong: number = city;
      return { checked, wrong };
    },
  }),
  arktype: tool({
    name: 'forecast',
    description: 'The forecast of a city',
    parameters: schemas.arktype,
    execute: ({ city, unit, days }) => {
      const checked: [string, 'c' | 'f', number | undefined] = [city, unit, days];
      // @ts-expect-error city is a string
      const wrong: number = city;
      return { checked, wrong };
    },
  }),
};
// A JSON Schema types nothing: its arguments are `any`.
const untyped = tool({
  name: 'loose',
  description: '',
  parameters: { type: 'object' },
  execute: (args) => (args.anything as number) + 1,
});
void untyped;

for (const [library, schema] of Object.entries(schemas)) {
  const jsonSchema = (schema as unknown as StandardJsonSchema)['~standard'].jsonSchema.input({
    target: 'draft-2020-12',
  });

  test(`${library}: the model is sent ~standard.jsonSchema.input({ target: 'draft-2020-12' }); valid arguments reach execute as the schema's output`, async () => {
    const ran: unknown[] = [];
    const model = callsTool('forecast', { city: 'Paris' });
    const forecast: Tool = { ...typed[library as keyof typeof typed], execute: (args) => (ran.push(args), 'sunny') };
    const result = await createAgent({ name: 't', model, tools: [forecast] }).send('Paris?');
    assert.deepEqual(model.tools[0], [
      { name: 'forecast', description: 'The forecast of a city', parameters: jsonSchema },
    ]);
    assert.deepEqual(jsonSchema.type, 'object');
    assert.deepEqual(ran, [{ city: 'Paris', unit: 'c' }]);
    assert.equal(result.text, 'sunny');
  });

  test(`${library}: invalid arguments never reach the approval policy or execute; the model is told the failing paths and messages, never the values`, async () => {
    for (const needsApproval of [true, () => true]) {
      let reached = false;
      const forecast: Tool = {
        ...typed[library as keyof typeof typed],
        needsApproval: typeof needsApproval === 'function' ? () => (reached = true) : needsApproval,
        execute: () => (reached = true),
      };
      const result = await createAgent({ name: 't', model: callsTool('forecast', INVALID), tools: [forecast] }).send(
        'Paris?',
      );
      assert.equal(reached, false);
      assert.equal(result.status, 'completed', 'nobody is asked to approve invalid arguments');
      const told = result.messages[2]!.content;
      assert.match(told, /^Error: tool "forecast": invalid arguments: /);
      for (const path of ['city', 'unit', 'days'])
        assert.match(told, new RegExp(`(^|; |: )${path}: `), `${told} names ${path}`);
      assert.doesNotMatch(told, new RegExp(`${SECRETISH}|99`), told);
      assert.equal(result.text, told);
    }
  });

  test(`${library}: arguments that are not an object are refused at the root`, async () => {
    const result = await createAgent({
      name: 't',
      model: callsTool('forecast', 'text'),
      tools: [typed[library as keyof typeof typed]],
    }).send('?');
    assert.match(result.messages[2]!.content, /^Error: tool "forecast": invalid arguments: \S/);
    assert.doesNotMatch(result.messages[2]!.content, /invalid arguments: [\w.]+: |text/, 'no path, no value');
  });
}

test("valibot's messages quote the value they refuse: they are replaced by `invalid`", async () => {
  const result = await createAgent({ name: 't', model: callsTool('forecast', INVALID), tools: [typed.valibot] }).send(
    '?',
  );
  assert.equal(
    result.messages[2]!.content,
    'Error: tool "forecast": invalid arguments: city: invalid; unit: invalid; days: invalid',
  );
});

test('zod: messages without the value are passed on as they are', async () => {
  const result = await createAgent({ name: 't', model: callsTool('forecast', { city: 42 }), tools: [typed.zod] }).send(
    '?',
  );
  assert.equal(
    result.messages[2]!.content,
    'Error: tool "forecast": invalid arguments: city: Invalid input: expected string, received number',
  );
});

test('a plain JSON Schema is checked on type, required, properties, enum, additionalProperties (and items); the model is told each failure', async () => {
  const parameters = {
    type: 'object',
    properties: {
      city: { type: 'string' },
      country: { type: 'string' },
      unit: { enum: ['c', 'f'] },
      tags: { type: 'array', items: { type: 'string' } },
      days: { type: ['integer', 'null'] },
    },
    required: ['city', 'country'],
    additionalProperties: false,
  };
  let ran = false;
  const loose: Tool = { name: 'loose', description: '', parameters, execute: () => (ran = true) };
  const args = { city: 42, unit: SECRETISH, tags: ['a', 7], days: 1.5, extra: SECRETISH };
  const result = await createAgent({ name: 't', model: callsTool('loose', args), tools: [loose] }).send('?');
  assert.equal(ran, false);
  assert.equal(
    result.messages[2]!.content,
    'Error: tool "loose": invalid arguments: country: is required; city: expected string; unit: must be one of "c","f"; tags.1: expected string; days: expected integer or null; extra: is not allowed',
  );
  const valid = { city: 'Oslo', country: 'NO', unit: 'c', tags: ['a'], days: null };
  const ok = await createAgent({
    name: 't',
    model: callsTool('loose', valid),
    tools: [{ ...loose, execute: (a) => a }],
  }).send('?');
  assert.equal(ok.messages[2]!.content, JSON.stringify(valid));
});

test('parameters that are neither a JSON Schema nor a Standard Schema with Standard JSON Schema are AuthConfigError at createAgent', () => {
  const invalid = (parameters: unknown, pattern: RegExp) =>
    assert.throws(
      () =>
        createAgent({
          name: 't',
          model: callsTool('x', {}),
          tools: [{ name: 'x', description: '', parameters: parameters as never, execute: () => 1 }],
        }),
      (error: unknown) =>
        error instanceof AuthConfigError && error.code === 'AGENT_AUTH_CONFIG_INVALID' && pattern.test(error.message),
    );
  // A valibot schema without toStandardJsonSchema has no ~standard.jsonSchema.
  invalid(
    v.object({ city: v.string() }),
    /tool "x" needs parameters: a JSON Schema object, or a Standard Schema with Standard JSON Schema/,
  );
  invalid(null, /needs parameters/);
  const throwing = {
    '~standard': {
      version: 1,
      vendor: 'x',
      validate: () => ({ value: 1 }),
      jsonSchema: {
        input: () => {
          throw new Error('no');
        },
      },
    },
  };
  invalid(throwing, /tool "x": ~standard.jsonSchema.input\(\) gave no JSON Schema/);
});

test("a schema whose validate throws fails the call as the tool's own failure (logged), and execute never runs", async () => {
  let ran = false;
  const broken = {
    '~standard': {
      version: 1 as const,
      vendor: 'x',
      validate: () => {
        throw new Error('validator crashed');
      },
      jsonSchema: { input: () => ({ type: 'object' }) },
    },
  };
  const flaky: Tool = { name: 'flaky', description: '', parameters: broken, execute: () => (ran = true) };
  const { result, calls } = await captureConsoleError(() =>
    createAgent({ name: 't', model: callsTool('flaky', {}), tools: [flaky] }).send('?'),
  );
  assert.equal(ran, false);
  assert.equal(result.messages[2]!.content, 'Error: tool "flaky" failed');
  assert.equal(calls.length, 1);
  const exposed = await createAgent({
    name: 't',
    model: callsTool('flaky', {}),
    tools: [{ ...flaky, exposeErrors: true }],
  }).send('?');
  assert.equal(exposed.messages[2]!.content, 'Error: its schema of "flaky" failed: validator crashed');
});

test('the approval policy gets the validated arguments, and a resumed call is validated again before execute', async () => {
  const seen: unknown[] = [];
  let strict = false;
  const refine = z.object({ city: z.string() }).refine(() => !strict, { message: 'no longer allowed' });
  const guarded = tool({
    name: 'guarded',
    description: '',
    parameters: z.object({ city: z.string(), unit: z.enum(['c', 'f']).default('f') }),
    needsApproval: (args) => (seen.push(args), true),
    execute: ({ city, unit }) => `${city}/${unit}`,
  });
  const agent = createAgent({
    name: 't',
    model: callsTool('guarded', { city: 'Rome' }),
    tools: () => [strict ? { ...guarded, parameters: refine } : guarded],
  });
  const paused = await agent.send('?');
  assert.deepEqual(seen, [{ city: 'Rome', unit: 'f' }]);
  strict = true;
  const resumed = await agent.decide(paused.approvals[0]!.id, { approved: true });
  assert.equal(resumed.messages[2]!.content, 'Error: tool "guarded": invalid arguments: no longer allowed');
});
