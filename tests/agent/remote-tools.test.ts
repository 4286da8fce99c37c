// Remote tools that cannot hide local ones (design §27): `remoteTools(tools, { prefix })` names each
// of a remote server's tools `<prefix>_<name>` (the prefix checked, every name one model providers
// take), and `createAgent({ tools: [local, remote] })` takes one record per source and refuses one
// name given by two of them: at creation, or when a dynamic `tools` function returns them, before
// any tool runs. The same against a real MCP server: tests/agent/remote-tools-mcp.node.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonSchema, tool as aiTool } from 'ai';
import { z } from 'zod';
import {
  AgentError,
  AuthConfigError,
  createAgent,
  echoModel,
  memoryStore,
  remoteTools,
  tool,
} from '../../src/index.ts';
import { assertConfigError } from '../helpers/config-error.ts';

/** What the tools below ran, in order. */
const ran: string[] = [];

const remote = {
  find_customer: aiTool({
    description: 'Finds a customer by name',
    inputSchema: z.object({ name: z.string() }),
    execute: async ({ name }) => (ran.push(`remote find_customer ${name}`), `${name}: customer since 2019`),
  }),
  deploy: aiTool({
    description: 'Deploys anything, no questions asked',
    inputSchema: jsonSchema<{ service: string }>({
      type: 'object',
      properties: { service: { type: 'string' } },
      required: ['service'],
    }),
    execute: async ({ service }) => (ran.push(`remote deploy ${service}`), `remote deployed ${service}`),
  }),
};

const deploy = tool({
  name: 'deploy',
  description: 'Deploys a service',
  parameters: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
  needsApproval: true,
  execute: ({ service }: { service: string }) => (ran.push(`local deploy ${service}`), `deployed ${service}`),
});

const weather = aiTool({
  description: 'The current weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, celsius: 21 }),
});

test('remoteTools() names each tool <prefix>_<name>: the same AI SDK tools, and copies of this library’s tools under the new name', () => {
  const local = tool({ ...deploy, name: 'status', needsApproval: false });
  const prefixed = remoteTools({ ...remote, status: local }, { prefix: 'crm' });
  assert.deepEqual(Object.keys(prefixed), ['crm_find_customer', 'crm_deploy', 'crm_status']);
  assert.equal(prefixed.crm_find_customer, remote.find_customer);
  assert.equal(prefixed.crm_deploy, remote.deploy);
  assert.equal(prefixed.crm_status.name, 'crm_status');
  assert.equal(local.name, 'status', 'the tool given is left as it was');
  assert.deepEqual(remoteTools({}, { prefix: 'crm' }), {});
});

test('remoteTools() refuses a prefix that is not a letter, then letters, digits, _ or - (62 at most), and options that are not { prefix }', () => {
  for (const prefix of ['', '1crm', '_crm', 'crm.v2', 'crm/v2', 'crm ', 'é', 'c'.repeat(63), 7, undefined, null])
    assertConfigError(
      () => remoteTools(remote, { prefix } as never),
      'remoteTools()',
      `prefix ${JSON.stringify(prefix)}`,
    );
  for (const options of [undefined, null, 'crm', { prefix: 'crm', prefx: 'crm' }])
    assertConfigError(
      () => remoteTools(remote, options as never),
      'remoteTools()',
      `options ${JSON.stringify(options)}`,
    );
  for (const prefix of ['c', 'crm', 'CRM-v2', 'crm_eu', 'c'.repeat(62)])
    assert.ok(`${prefix}_d` in remoteTools({ d: remote.deploy }, { prefix }), prefix);
});

test('remoteTools() refuses a name model providers would refuse: past 64 characters with its prefix, or one that is not letters, digits, _ and -', () => {
  const named = (name: string) => ({ [name]: remote.deploy });
  assert.deepEqual(Object.keys(remoteTools(named('d'.repeat(60)), { prefix: 'crm' })), [`crm_${'d'.repeat(60)}`]);
  assert.throws(
    () => remoteTools(named('d'.repeat(61)), { prefix: 'crm' }),
    (error: unknown) =>
      error instanceof AuthConfigError &&
      /with its prefix is 65 characters; model providers take at most 64/.test(error.message),
  );
  for (const name of ['admin.delete', 'files/read', 'send mail', 'naïve', ''])
    assert.throws(
      () => remoteTools(named(name), { prefix: 'crm' }),
      (error: unknown) =>
        error instanceof AuthConfigError &&
        error.message.startsWith(
          `remoteTools(): tool ${JSON.stringify(name)} is not a name model providers take (letters, digits, _ and - only)`,
        ),
      name,
    );
});

test('remoteTools() refuses what is not a record of tools', () => {
  for (const tools of [
    undefined,
    null,
    [remote.deploy],
    'deploy',
    { deploy: 'run' },
    { deploy: { ...deploy, name: 'other' } },
  ])
    assertConfigError(() => remoteTools(tools as never, { prefix: 'crm' }), 'remoteTools()', JSON.stringify(tools));
});

test('createAgent({ tools: [local, remote] }): one record per source; the local tool asks for approval, the remote one answers under its prefix', async () => {
  const agent = createAgent({
    name: 'support',
    model: echoModel(),
    tools: [{ weather, deploy }, remoteTools(remote, { prefix: 'crm' })],
  });
  ran.length = 0;
  const paused = await agent.send('/tool deploy {"service":"edge"}');
  assert.equal(paused.status, 'awaiting-approval');
  assert.equal(paused.approvals[0]?.tool, 'deploy');
  assert.deepEqual(ran, [], 'nothing ran before the decision');
  const resumed = await agent.decide(paused.approvals[0]!.id, { approved: true });
  assert.equal(resumed.text, 'Tool results: deploy: deployed edge');
  const asked = await agent.send('/tool crm_find_customer {"name":"Acme"}\n/tool weather {"city":"Paris"}');
  assert.equal(
    asked.text,
    'Tool results: crm_find_customer: Acme: customer since 2019; weather: {"city":"Paris","celsius":21}',
  );
  assert.deepEqual(ran, ['local deploy edge', 'remote find_customer Acme']);
});

test('createAgent refuses one name from two sources at creation, naming the tool and both places; never one hiding the other', () => {
  const cases: [unknown, string][] = [
    [[{ weather, deploy }, remote], 'tool "deploy" needs a unique name (given in tools[0] and tools[1];'],
    [
      [{ weather }, { deploy }, { deploy: remote.deploy }],
      'tool "deploy" needs a unique name (given in tools[1] and tools[2];',
    ],
    [[deploy, { weather }, remote], 'tool "deploy" needs a unique name (given in tools[0] and tools[2];'],
    [[deploy, deploy], 'tool "deploy" needs a unique name (given in tools[0] and tools[1];'],
  ];
  for (const [tools, said] of cases)
    assert.throws(
      () => createAgent({ name: 'support', model: echoModel(), tools: tools as never }),
      (error: unknown) =>
        error instanceof AuthConfigError &&
        error.message.startsWith(`createAgent(): tools: ${said}`) &&
        error.message.includes('remoteTools(tools, { prefix })'),
      said,
    );
});

test('a dynamic tools function may return a list of records; one name from two of them fails the run with INVALID_AGENT before any tool runs', async () => {
  const agent = createAgent({
    name: 'support',
    model: echoModel(),
    tools: ({ metadata }) => [
      { weather, deploy },
      metadata.prefixed === true ? remoteTools(remote, { prefix: 'crm' }) : remote,
    ],
  });
  ran.length = 0;
  await assert.rejects(
    agent.send('/tool deploy {"service":"edge"}'),
    (error: unknown) =>
      error instanceof AgentError &&
      error.code === 'INVALID_AGENT' &&
      error.message.startsWith(
        'the tools function result: tool "deploy" needs a unique name (given in tools[0] and tools[1];',
      ),
  );
  assert.deepEqual(ran, []);
  const paused = await agent.send('/tool deploy {"service":"edge"}', { metadata: { prefixed: true } });
  assert.equal(paused.status, 'awaiting-approval');
  assert.deepEqual(ran, []);
});

test("a list of records keeps the other rules: memory's remember is taken, a record's tool must be a tool, and a tool without a name says so", () => {
  const store = memoryStore();
  const memory = { scope: () => 'all' };
  const refusals: [unknown, object | undefined, RegExp][] = [
    [[{ weather }, { remember: remote.deploy }], memory, /tool "remember" needs a unique name/],
    [[{ weather }, { deploy: 'run' }], undefined, /"deploy" is not an AI SDK tool/],
    [[{ weather }, remote.deploy], undefined, /an AI SDK tool \(inputSchema\) has no name of its own/],
    [[{ weather }, 7], undefined, /every tool needs a name/],
  ];
  for (const [tools, memoryOption, said] of refusals)
    assert.throws(
      () =>
        createAgent({
          name: 'support',
          model: echoModel(),
          store,
          tools: tools as never,
          ...(memoryOption !== undefined && { memory: memoryOption as never }),
        }),
      (error: unknown) => error instanceof AuthConfigError && said.test(error.message),
      String(said),
    );
});
