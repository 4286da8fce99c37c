// Memory scoped on both `issuer` and `id`: ids from different issuers can collide.
// Run: node examples/memory-scoping.ts
//
// Two identity providers each have a user with id "42". Scoped on `id` alone they would
// share one memory namespace, and each would read the other's notes. Scoped on issuer + id,
// every caller keeps their own notes. The notes are added to the instructions of that
// caller's later runs; the built-in `remember` tool (present whenever `memory` is set) writes them.
import { createAgent, echoModel, memoryStore } from '../src/index.ts';
import type { Model, Principal } from '../src/index.ts';

const store = memoryStore();

// Shows the instructions the model receives, so the notes in them are visible.
const echo = echoModel();
const model: Model = {
  async generate(request) {
    console.log(`  instructions seen by the model: ${JSON.stringify(request.instructions)}`);
    return echo.generate(request);
  },
};

const agent = createAgent({
  name: 'assistant',
  model,
  instructions: 'You are a helpful assistant.',
  store,
  memory: {
    // `authenticator` stands in when a principal has no issuer (api-token, basic):
    // JSON.stringify keeps the parts apart, so no id can forge another namespace.
    scope: ({ principal }) =>
      principal ? JSON.stringify([principal.issuer ?? principal.authenticator, principal.id]) : 'anonymous',
  },
});

const fromAcme: Principal = { id: '42', type: 'user', authenticator: 'jwt', issuer: 'https://login.acme.example' };
const fromGlobex: Principal = { id: '42', type: 'user', authenticator: 'jwt', issuer: 'https://id.globex.example' };

console.log('acme user 42 asks the agent to remember something:');
await agent.send('/tool remember {"note":"prefers answers in French"}', { principal: fromAcme });

console.log('globex user 42 (same id, other issuer) starts a conversation:');
await agent.send('hello', { principal: fromGlobex });

console.log('acme user 42 comes back:');
await agent.send('hello again', { principal: fromAcme });

console.log('notes per namespace:');
for (const principal of [fromAcme, fromGlobex]) {
  const namespace = JSON.stringify([principal.issuer, principal.id]);
  console.log(`  ${namespace}: ${JSON.stringify(await store.loadMemory(namespace))}`);
}
