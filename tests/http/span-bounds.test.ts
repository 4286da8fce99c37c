// The sixth review's span findings (design §32), on every runtime with a structural tracer: the
// invoke_agent span of a stranger's refused decision names no session, and the values a caller
// controls are cut (JSON-RPC ids to 128 characters, tool names to 64, unknown tool names kept out
// of span names).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Tool } from '../../src/agent/index.ts';
import { apiToken } from '../../src/auth/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { memoryTracer } from '../helpers/memory-tracer.ts';

const ADA = 'span-bounds-ada-token-0123456789';
const EVE = 'span-bounds-eve-token-0123456789';

const deploy: Tool<{ env: string }> = {
  name: 'deploy',
  description: 'Deploys the app',
  parameters: { type: 'object', properties: { env: { type: 'string' } } },
  needsApproval: true,
  execute: (args) => ({ deployed: args.env }),
};

function setup() {
  const memory = memoryTracer();
  const telemetry = { tracer: memory.tracer };
  const agent = createAgent({
    name: 'ops',
    model: echoModel(),
    tools: [deploy],
    store: memoryStore(),
    sessions: 'owned',
    telemetry,
  });
  const handler = agentHandler(agent, {
    auth: [apiToken(ADA, { id: 'ada' }), apiToken(EVE, { id: 'eve' })],
    telemetry,
    mcp: true,
  });
  const post = (path: string, body: unknown, token: string) =>
    handler(
      new Request(`http://localhost${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify(body),
      }),
    );
  return { memory, post };
}

test("the invoke_agent span of a stranger's refused decision names no session", async () => {
  const { memory, post } = setup();
  const sent = await post('/', { message: '/tool deploy {"env":"prod"}', sessionId: 'ada-secret-session' }, ADA);
  const { approvals } = (await sent.json()) as { approvals: { id: string }[] };
  memory.reset();
  const refused = await post(`/approvals/${approvals[0]!.id}`, { approved: true }, EVE);
  assert.equal(refused.status, 404);
  const spans = memory.spans();
  // authorize() refused it before the agent was asked (design §32): no run, so no invoke_agent span at all.
  assert.ok(!spans.some((span) => span.name.startsWith('invoke_agent')), 'no run was started');
  for (const span of spans)
    assert.ok(!JSON.stringify(span.attributes).includes('ada-secret-session'), `${span.name} names the session`);
  // The owner's own decision still names it.
  memory.reset();
  assert.equal((await post(`/approvals/${approvals[0]!.id}`, { approved: true }, ADA)).status, 200);
  const invoke = memory.spans().find((span) => span.name.startsWith('invoke_agent'))!;
  assert.equal(invoke.attributes['gen_ai.conversation.id'], 'ada-secret-session');
});

test('an MCP tools/call span keeps 128 characters of a JSON-RPC id, 64 of a tool name, and no unknown tool name in its name', async () => {
  const { memory, post } = setup();
  const id = 'i'.repeat(200_000);
  const name = 'n'.repeat(20_000);
  const reply = await post('/mcp', { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } }, ADA);
  assert.equal(reply.status, 200);
  const [span] = memory.spans().filter((span) => span.attributes['mcp.method.name'] === 'tools/call');
  assert.equal(span!.name, 'tools/call');
  assert.equal(span!.attributes['jsonrpc.request.id'], 'i'.repeat(128));
  assert.equal(span!.attributes['gen_ai.tool.name'], 'n'.repeat(64));
});
