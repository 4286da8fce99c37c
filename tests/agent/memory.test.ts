import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentError, createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Model, ModelRequest, Principal } from '../../src/agent/index.ts';

const byIssuerAndId = {
  scope: ({ principal }: { principal?: Principal }) =>
    principal ? JSON.stringify([principal.issuer ?? principal.authenticator, principal.id]) : 'anonymous',
};

function recording(requests: ModelRequest[]): Model {
  const echo = echoModel();
  return { generate: (request) => (requests.push(request), echo.generate(request)) };
}

test("the remember tool keeps a note in the run's namespace and later runs there see it in their instructions", async () => {
  const requests: ModelRequest[] = [];
  const store = memoryStore();
  const ada: Principal = { id: 'ada', type: 'user', authenticator: 'jwt', issuer: 'https://a.example' };
  const agent = createAgent({
    name: 't',
    model: recording(requests),
    instructions: 'Be kind.',
    memory: byIssuerAndId,
    store,
  });
  const first = await agent.send('/tool remember {"note":"prefers metric units"}', { principal: ada });
  assert.equal(first.messages[2]!.content, 'Remembered: prefers metric units');
  assert.equal(requests[0]!.instructions, 'Be kind.');
  assert.ok(requests[0]!.tools.some((tool) => tool.name === 'remember'));
  assert.deepEqual(await store.loadMemory('["https://a.example","ada"]'), ['prefers metric units']);
  await agent.send('hello again', { principal: ada });
  assert.equal(
    requests.at(-1)!.instructions,
    'Be kind.\n\nNotes remembered from earlier conversations:\n- prefers metric units',
  );
});

test('memory scopes keyed on issuer and id keep two principals with the same id from different issuers apart', async () => {
  const requests: ModelRequest[] = [];
  const agent = createAgent({ name: 't', model: recording(requests), memory: byIssuerAndId });
  const fromA: Principal = { id: '42', type: 'user', authenticator: 'jwt', issuer: 'https://a.example' };
  const fromB: Principal = { id: '42', type: 'user', authenticator: 'jwt', issuer: 'https://b.example' };
  await agent.send('/tool remember {"note":"secret of A"}', { principal: fromA });
  await agent.send('what do you know?', { principal: fromB });
  assert.equal(requests.at(-1)!.instructions, '');
  await agent.send('/tool remember {"note":"secret of B"}', { principal: fromB });
  await agent.send('and now?', { principal: fromA });
  assert.equal(requests.at(-1)!.instructions, 'Notes remembered from earlier conversations:\n- secret of A');
});

test('without memory there is no remember tool', async () => {
  const requests: ModelRequest[] = [];
  const agent = createAgent({ name: 't', model: recording(requests) });
  const result = await agent.send('/tool remember {"note":"x"}');
  assert.deepEqual(requests[0]!.tools, []);
  assert.equal(result.messages[2]!.content, 'Error: unknown tool "remember"');
});

test('the remember tool refuses an empty note', async () => {
  const store = memoryStore();
  const agent = createAgent({ name: 't', model: echoModel(), memory: { scope: () => 'n' }, store });
  const result = await agent.send('/tool remember {"note":"  "}');
  assert.equal(result.messages[2]!.content, 'Error: note must be a non-empty string');
  assert.deepEqual(await store.loadMemory('n'), []);
});

test('a memory scope that names no namespace fails the run with INVALID_AGENT', async () => {
  const agent = createAgent({ name: 't', model: echoModel(), memory: { scope: () => '' } });
  await assert.rejects(agent.send('hi'), (e: unknown) => e instanceof AgentError && e.code === 'INVALID_AGENT');
});
