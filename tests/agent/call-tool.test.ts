// agent.callTool() and agent.listTools() (design §36): one tool called directly through the
// agent's own tool path, in a session of its own, never followed by a model turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type AgentError, createAgent, tool } from '../../src/agent/index.ts';
import type { Model, Principal } from '../../src/agent/types.ts';

/** A model that counts its turns and always asks for `deploy` again: a run that reached it would not end by itself. */
function countingModel(): { model: Model; turns: () => number } {
  let turns = 0;
  const model: Model = {
    async generate() {
      turns++;
      return { text: '', toolCalls: [{ id: `c${turns}`, name: 'deploy', arguments: { service: 'again' } }] };
    },
  };
  return { model, turns: () => turns };
}

const ran: string[] = [];
const deploy = tool({
  name: 'deploy',
  description: 'Deploys a service',
  parameters: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
  needsApproval: ({ service }: { service: string }) => service !== 'docs',
  execute: ({ service }: { service: string }) => {
    ran.push(service);
    return { deployed: service };
  },
});

test('a direct call runs its tool once and no model turn follows, also when decide resumes it', async () => {
  ran.length = 0;
  const { model, turns } = countingModel();
  const agent = createAgent({ name: 'ops', model, tools: [deploy] });
  const done = await agent.callTool('deploy', { service: 'docs' });
  assert.deepEqual(done, {
    status: 'completed',
    sessionId: (done as { sessionId: string }).sessionId,
    text: '{"deployed":"docs"}',
    output: { deployed: 'docs' },
    isError: false,
  });
  const waiting = await agent.callTool('deploy', { service: 'api' });
  assert.equal(waiting.status, 'awaiting-approval');
  assert.deepEqual(ran, ['docs']);
  if (waiting.status !== 'awaiting-approval') return;
  assert.deepEqual(
    (await agent.pendingApprovals(waiting.sessionId)).map((approval) => approval.id),
    [waiting.approvalId],
  );
  const resumed = await agent.decide(waiting.approvalId, { approved: true });
  assert.equal(resumed.status, 'completed');
  assert.equal(resumed.text, '{"deployed":"api"}');
  assert.deepEqual(ran, ['docs', 'api']);
  assert.equal(turns(), 0);
});

test('bad arguments are refused before anything is stored; an unknown tool is TOOL_NOT_FOUND; only narrows the tools', async () => {
  ran.length = 0;
  const agent = createAgent({ name: 'ops', model: countingModel().model, tools: [deploy] });
  const refused = await agent.callTool('deploy', { service: 3 });
  assert.equal(refused.status, 'completed');
  assert.equal((refused as { isError: boolean }).isError, true);
  assert.equal((refused as { sessionId?: string }).sessionId, undefined);
  await assert.rejects(agent.callTool('nope', {}), (error: unknown) => (error as AgentError).code === 'TOOL_NOT_FOUND');
  await assert.rejects(
    agent.callTool('deploy', { service: 'docs' }, { only: ['other'] }),
    (error: unknown) => (error as AgentError).code === 'TOOL_NOT_FOUND',
  );
  assert.deepEqual(ran, []);
  assert.deepEqual(agent.toolNames, ['deploy']);
});

test('a tools function is called with the caller principal for listing and calling; tools never receive it', async () => {
  const seen: (string | undefined)[] = [];
  const contexts: unknown[] = [];
  const probe = tool({
    name: 'probe',
    description: 'Says what it received',
    parameters: { type: 'object', properties: {} },
    execute: (_args: unknown, context) => {
      contexts.push(context);
      return 'ok';
    },
  });
  const agent = createAgent({
    name: 'ops',
    model: countingModel().model,
    tools: ({ principal }) => {
      seen.push(principal?.id);
      return principal?.id === 'ada' ? [probe, deploy] : [probe];
    },
  });
  const ada: Principal = { type: 'user', id: 'ada', authenticator: 'test' };
  const bo: Principal = { type: 'user', id: 'bo', authenticator: 'test' };
  assert.equal(agent.toolNames, undefined);
  assert.deepEqual(
    (await agent.listTools({ principal: ada })).map((listing) => [listing.name, listing.mayAwaitApproval]),
    [
      ['probe', false],
      ['deploy', true],
    ],
  );
  assert.deepEqual(
    (await agent.listTools({ principal: bo })).map((listing) => listing.name),
    ['probe'],
  );
  await assert.rejects(agent.callTool('deploy', { service: 'x' }, { principal: bo }), /no tool "deploy"/);
  await agent.callTool('probe', {}, { principal: ada });
  assert.deepEqual(Object.keys(contexts[0] as object), ['sessionId']);
  assert.ok(seen.includes('ada') && seen.includes('bo'));
});
