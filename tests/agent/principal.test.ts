// The spec's "The principal in the run", bullet by bullet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Principal, RunContext, Tool } from '../../src/agent/index.ts';

const alice: Principal = Object.freeze({
  id: 'alice',
  type: 'user',
  authenticator: 'jwt',
  issuer: 'https://idp.example',
  claims: Object.freeze({ role: 'admin' }),
});
const bob: Principal = Object.freeze({ id: 'bob', type: 'user', authenticator: 'basic' });

/** A tool that always needs approval and records exactly what it and its policy receive. */
function transferTool(received: { execute: unknown[][]; policy: unknown[][] }): Tool {
  return {
    name: 'transfer',
    description: 'Moves money',
    parameters: { type: 'object', properties: { amount: { type: 'number' } } },
    needsApproval(...args: unknown[]) {
      received.policy.push(args);
      return true;
    },
    execute(...args: unknown[]) {
      received.execute.push(args);
      return { done: true };
    },
  };
}

test('the principal is on the run context next to sessionId and metadata', async () => {
  const contexts: RunContext[] = [];
  const agent = createAgent({
    name: 't',
    model: echoModel(),
    instructions: (context) => (contexts.push(context), 'be brief'),
  });
  const result = await agent.send('hi', { principal: alice, sessionId: 's-1', metadata: { locale: 'fr' } });
  assert.equal(result.sessionId, 's-1');
  assert.equal(contexts.length, 1);
  const context = contexts[0]!;
  assert.deepEqual(Object.keys(context).sort(), ['metadata', 'principal', 'sessionId']);
  assert.deepEqual(context.principal, alice);
  assert.equal(context.sessionId, 's-1');
  assert.deepEqual(context.metadata, { locale: 'fr' });
  assert.ok(
    Object.isFrozen(context) &&
      Object.isFrozen(context.principal) &&
      Object.isFrozen(context.principal?.claims) &&
      Object.isFrozen(context.metadata),
  );
});

test('metadata is what the caller sent; principal is what auth verified: a principal inside metadata is just metadata', async () => {
  const contexts: RunContext[] = [];
  const agent = createAgent({ name: 't', model: echoModel(), instructions: (context) => (contexts.push(context), '') });
  const forged = { id: 'root', type: 'service', authenticator: 'jwt' };
  await agent.send('hi', { metadata: { principal: forged } });
  await agent.send('hi', { principal: bob, metadata: { principal: forged } });
  assert.equal(contexts[0]!.principal, undefined);
  assert.equal('principal' in contexts[0]!, false);
  assert.deepEqual(contexts[0]!.metadata, { principal: forged });
  assert.deepEqual(contexts[1]!.principal, bob);
  assert.deepEqual(contexts[1]!.metadata, { principal: forged });
});

test("outside a route, the principal is passed explicitly in the options of agent.send and of a session's send", async () => {
  const seen: (Principal | undefined)[] = [];
  const agent = createAgent({
    name: 't',
    model: echoModel(),
    instructions: ({ principal }) => (seen.push(principal), ''),
  });
  const first = await agent.send('one', { principal: alice });
  await agent.session(first.sessionId).send('two', { principal: bob });
  await agent.session('chosen-id').send('three', { principal: alice });
  assert.deepEqual(seen, [alice, bob, alice]);
  assert.equal((await agent.transcript(first.sessionId)).messages.length, 4);
});

test('the model, instructions, and memory scope functions receive { principal }', async () => {
  const got: Record<string, unknown[]> = { model: [], instructions: [], scope: [] };
  const agent = createAgent({
    name: 't',
    model: (context) => (got.model!.push(context.principal), echoModel()),
    instructions: (context) => (got.instructions!.push(context.principal), ''),
    memory: { scope: (input) => (got.scope!.push(input), `${input.principal?.issuer}|${input.principal?.id}`) },
  });
  await agent.send('hi', { principal: alice });
  assert.deepEqual(got.model, [alice]);
  assert.deepEqual(got.instructions, [alice]);
  assert.deepEqual(got.scope, [{ principal: alice }]);
});

test('principal may be absent', async () => {
  const got: unknown[] = [];
  const agent = createAgent({
    name: 't',
    model: async (context) => (got.push(context.principal), echoModel()),
    instructions: async (context) => (got.push(context.principal), ''),
    tools: async (context) => (got.push(context.principal), []),
    memory: { scope: ({ principal }) => (got.push(principal), principal ? principal.id : 'guest') },
  });
  const result = await agent.send('hi there');
  assert.equal(result.text, 'hi there');
  assert.deepEqual(got, [undefined, undefined, undefined, undefined]);
});

test("a dynamic run resumed from its checkpoint keeps the principal it started with, not the decider's", async () => {
  const received = { execute: [] as unknown[][], policy: [] as unknown[][] };
  const seen: (Principal | undefined)[] = [];
  const agent = createAgent({
    name: 't',
    model: (context) => (seen.push(context.principal), echoModel()),
    instructions: (context) => (seen.push(context.principal), ''),
    tools: (context) => (seen.push(context.principal), [transferTool(received)]),
  });
  const paused = await agent.send('/tool transfer {"amount":5}', { principal: alice, metadata: { channel: 'web' } });
  assert.equal(paused.status, 'awaiting-approval');
  seen.length = 0;
  const resumed = await agent.decide(paused.approvals[0]!.id, { approved: true, principal: bob });
  assert.equal(resumed.status, 'completed');
  assert.equal(received.execute.length, 1);
  assert.ok(seen.length >= 3);
  for (const principal of seen) assert.deepEqual(principal, alice);
});

test('a dynamic run resumed after a restart (a fresh store instance reading the same data) keeps the principal it started with', async () => {
  const received = { execute: [] as unknown[][], policy: [] as unknown[][] };
  const seen: RunContext[] = [];
  const make = (data: Map<string, string>) =>
    createAgent({
      name: 't',
      model: (context) => (seen.push(context), echoModel()),
      instructions: (context) => (seen.push(context), ''),
      tools: [transferTool(received)],
      store: memoryStore(data),
    });
  const before = new Map<string, string>();
  const paused = await make(before).send('/tool transfer {"amount":5}', {
    principal: alice,
    sessionId: 'restart-1',
    metadata: { channel: 'web' },
  });
  // The restarted process: a new agent over a new store holding a JSON round-trip of the data.
  const after = new Map<string, string>(JSON.parse(JSON.stringify([...before])));
  seen.length = 0;
  const resumed = await make(after).decide(paused.approvals[0]!.id, { approved: true, principal: bob });
  assert.equal(resumed.status, 'completed');
  assert.equal(received.execute.length, 1);
  assert.ok(seen.length >= 2);
  for (const context of seen) {
    assert.deepEqual(context.principal, alice);
    assert.deepEqual(context.metadata, { channel: 'web' });
    assert.equal(context.sessionId, 'restart-1');
  }
  const { audit } = await make(after).transcript('restart-1');
  assert.deepEqual(
    audit.map((entry) => entry.decidedBy),
    [{ id: bob.id, authenticator: bob.authenticator, ...(bob.issuer !== undefined && { issuer: bob.issuer }) }],
  );
});

test('Slack and Discord channels set the sender as principal: slack and discord principals pass through unchanged', async () => {
  const slack: Principal = {
    id: 'U024BE7LH',
    type: 'user',
    authenticator: 'slack',
    issuer: 'slack:T0001',
    claims: { teamId: 'T0001', channelId: 'C2147483705' },
  };
  const discord: Principal = {
    id: '80351110224678912',
    type: 'user',
    authenticator: 'discord',
    issuer: 'discord:41771983423143937',
    claims: { guildId: '41771983423143937' },
  };
  const seen: (Principal | undefined)[] = [];
  const agent = createAgent({
    name: 't',
    model: echoModel(),
    instructions: ({ principal }) => (seen.push(principal), ''),
  });
  await agent.send('from slack', { principal: slack });
  await agent.session('discord-thread').send('from discord', { principal: discord });
  assert.deepEqual(seen, [
    {
      id: 'U024BE7LH',
      type: 'user',
      authenticator: 'slack',
      issuer: 'slack:T0001',
      claims: { teamId: 'T0001', channelId: 'C2147483705' },
    },
    {
      id: '80351110224678912',
      type: 'user',
      authenticator: 'discord',
      issuer: 'discord:41771983423143937',
      claims: { guildId: '41771983423143937' },
    },
  ]);
});

test('tools do not receive the principal: execute gets only its arguments and { sessionId, signal }', async () => {
  const calls: unknown[][] = [];
  const signal = new AbortController().signal;
  const tool: Tool = {
    name: 'lookup',
    description: 'Looks up',
    parameters: { type: 'object' },
    execute(...args: unknown[]) {
      calls.push(args);
      return 'found';
    },
  };
  const agent = createAgent({ name: 't', model: echoModel(), tools: [tool] });
  await agent.send('/tool lookup {"q":"x"}', { principal: alice, sessionId: 's-tools', metadata: { who: 'm' } });
  await agent.send('/tool lookup {"q":"y"}', { principal: alice, sessionId: 's-tools', signal });
  assert.equal(calls.length, 2);
  assert.deepEqual(calls[0], [{ q: 'x' }, { sessionId: 's-tools' }]);
  assert.equal(calls[1]!.length, 2);
  assert.deepEqual(calls[1]![0], { q: 'y' });
  const context = calls[1]![1] as Record<string, unknown>;
  assert.deepEqual(Object.keys(context).sort(), ['sessionId', 'signal']);
  assert.equal(context.signal, signal);
  assert.ok(Object.isFrozen(context));
});

test('approval policies do not receive the principal: needsApproval gets only the arguments', async () => {
  const received = { execute: [] as unknown[][], policy: [] as unknown[][] };
  const agent = createAgent({ name: 't', model: echoModel(), tools: [transferTool(received)] });
  const paused = await agent.send('/tool transfer {"amount":7}', { principal: alice, metadata: { principal: alice } });
  await agent.decide(paused.approvals[0]!.id, { approved: true, principal: bob });
  assert.deepEqual(received.policy, [[{ amount: 7 }]]);
  assert.equal(received.execute.length, 1);
  assert.deepEqual(received.execute[0]![0], { amount: 7 });
  assert.deepEqual(Object.keys(received.execute[0]![1] as object), ['sessionId']);
});

test('paused static runs do not receive the principal: the checkpoint keeps none and the resumed run has none', async () => {
  const received = { execute: [] as unknown[][], policy: [] as unknown[][] };
  const data = new Map<string, string>();
  const scopes: unknown[] = [];
  const agent = createAgent({
    name: 't',
    model: echoModel(),
    instructions: 'static',
    tools: [transferTool(received)],
    memory: { scope: ({ principal }) => (scopes.push(principal), `${principal?.issuer}|${principal?.id}`) },
    store: memoryStore(data),
  });
  const paused = await agent.send('/tool transfer {"amount":1}', { principal: alice });
  const stored = [...data]
    .filter(([key]) => key.startsWith('checkpoint:'))
    .map(([, text]) => JSON.parse(text) as Record<string, unknown>);
  assert.equal(stored.length, 1);
  assert.equal('principal' in stored[0]!, false);
  assert.doesNotMatch(JSON.stringify(stored), /authenticator|admin/);
  assert.equal(stored[0]!.namespace, 'https://idp.example|alice');
  const resumed = await agent.decide(paused.approvals[0]!.id, { approved: true, principal: bob });
  assert.equal(resumed.status, 'completed');
  // The memory scope ran once, when the run started: the resumed run kept its namespace and asked nothing with a principal.
  assert.deepEqual(scopes, [alice]);
});
