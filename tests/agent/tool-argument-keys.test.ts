// Tool arguments with an own key `__proto__`, `constructor` or `prototype` at any depth are
// invalid (design §26), whatever the schema: a plain JSON Schema, a Standard Schema (zod, valibot,
// arktype) or an AI SDK tool's. The model is told `tool "<name>": invalid arguments` naming the
// path; neither the approval policy nor `execute` runs, so `execute` always receives plain data.
// The arguments are made by JSON.parse, as a model's are, which makes `__proto__` an own key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonSchema, tool as aiTool } from 'ai';
import { z } from 'zod';
import * as v from 'valibot';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { type } from 'arktype';
import { createAgent } from '../../src/index.ts';
import type { AgentTools, Model } from '../../src/index.ts';

function callsTool(name: string, args: unknown): Model {
  return {
    async generate(request) {
      const last = request.messages.at(-1)!;
      if (last.role === 'tool') return { text: last.content };
      return { toolCalls: [{ id: 'call_1', name, arguments: args }] };
    },
  };
}

/** Schemas that let anything through: only the key rule can refuse. */
const LOOSE: Record<string, unknown> = {
  'a plain JSON Schema': { type: 'object' },
  zod: z.looseObject({}),
  valibot: toStandardJsonSchema(v.looseObject({})),
  arktype: type({ '+': 'ignore' }),
};

const HOSTILE: [string, string][] = [
  ['{"city":"Paris","__proto__":{"isAdmin":true}}', '__proto__'],
  ['{"city":"Paris","constructor":{"prototype":{"isAdmin":true}}}', 'constructor'],
  ['{"options":{"deep":[{"prototype":{"x":1}}]}}', 'options.deep.0.prototype'],
  ['{"a":{"b":{"c":{"__proto__":null}}}}', 'a.b.c.__proto__'],
];

const toolsFor = (schema: string, name: string, run: (args: unknown) => unknown): AgentTools => {
  if (schema === 'an AI SDK tool (jsonSchema())')
    return {
      [name]: aiTool({
        description: 'Saves settings',
        inputSchema: jsonSchema({ type: 'object' }),
        needsApproval: () => run('asked') === undefined,
        execute: async (args) => run(args),
      }),
    };
  if (schema === 'an AI SDK tool (zod)')
    return {
      [name]: aiTool({
        description: 'Saves settings',
        inputSchema: z.looseObject({}),
        needsApproval: () => run('asked') === undefined,
        execute: async (args) => run(args),
      }),
    };
  return [
    {
      name,
      description: 'Saves settings',
      parameters: LOOSE[schema] as never,
      needsApproval: () => run('asked') === undefined,
      execute: (args: unknown) => run(args),
    },
  ];
};

for (const schema of [...Object.keys(LOOSE), 'an AI SDK tool (jsonSchema())', 'an AI SDK tool (zod)']) {
  test(`${schema}: an own __proto__, constructor or prototype key at any depth makes the arguments invalid, naming the path; neither the approval policy nor execute runs`, async () => {
    for (const [json, path] of HOSTILE) {
      const args = JSON.parse(json) as unknown;
      const reached: unknown[] = [];
      const tools = toolsFor(schema, 'save', (value) => void reached.push(value));
      const result = await createAgent({ name: 't', model: callsTool('save', args), tools }).send('?');
      assert.deepEqual(reached, [], `${json}: nothing ran`);
      assert.equal(result.status, 'completed');
      assert.equal(result.messages[2]!.content, `Error: tool "save": invalid arguments: ${path}: is not allowed`, json);
    }
  });

  test(`${schema}: keys that only resemble them pass, and execute receives plain data`, async () => {
    const ran: unknown[] = [];
    const tools = toolsFor(schema, 'save', (value) => {
      if (value !== 'asked') ran.push(value);
      return value === 'asked' ? false : 'saved';
    });
    const args = JSON.parse('{"proto":1,"Constructor":2,"prototypes":[{"__proto":3}]}') as unknown;
    const result = await createAgent({ name: 't', model: callsTool('save', args), tools }).send('?');
    assert.equal(result.text, 'saved');
    assert.equal(ran.length, 1);
    assert.equal(Object.getPrototypeOf(ran[0]), Object.prototype);
    assert.deepEqual(ran[0], { proto: 1, Constructor: 2, prototypes: [{ __proto: 3 }] });
  });
}

test('only the first ten such keys are named', async () => {
  const args = JSON.parse(`[${Array.from({ length: 12 }, () => '{"__proto__":{}}').join(',')}]`) as unknown;
  const result = await createAgent({
    name: 't',
    model: callsTool('save', args),
    tools: [{ name: 'save', description: '', parameters: {}, execute: () => 'saved' }],
  }).send('?');
  const told = result.messages[2]!.content;
  assert.equal(told.split('is not allowed').length - 1, 10, told);
  assert.match(told, /^Error: tool "save": invalid arguments: 0\.__proto__: is not allowed; 1\.__proto__: .*; …$/);
});
