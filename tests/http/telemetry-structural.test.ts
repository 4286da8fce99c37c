// Design §28 on every runtime (Node, Bun, Deno) with a structural tracer, no OpenTelemetry package:
// the handler's span parents the run's, the auth outcome and never a credential.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Tool } from '../../src/agent/index.ts';
import { apiToken, basic, type AuthFn } from '../../src/auth/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { memoryTracer } from '../helpers/memory-tracer.ts';

const TOKEN = 'structural-7c1e9a3b5d2f4e6a8b0c';
const PASSWORD = 'structural-password-of-some-length';
const BASIC = `Basic ${btoa(`ada:${PASSWORD}`)}`;

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
  const agent = createAgent({ name: 'ops', model: echoModel(), tools: [deploy], store: memoryStore(), telemetry });
  const handler = agentHandler(agent, { auth: [apiToken(TOKEN), basic({ users: { ada: PASSWORD } })], telemetry });
  const post = (path: string, body: unknown, authorization?: string) =>
    handler(
      new Request(`https://agent.example.com${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization !== undefined && { authorization }) },
        body: JSON.stringify(body),
      }),
    );
  return { memory, post };
}

test('a structural tracer: the send and the decision of an approval, each run under its request’s span', async () => {
  const { memory, post } = setup();
  const sent = await post('/', { message: '/tool deploy {"env":"prod"}' }, `Bearer ${TOKEN}`);
  const { approvals } = (await sent.json()) as { approvals: { id: string }[] };
  assert.deepEqual(memory.tree(), [
    'agentward send < root',
    'invoke_agent ops < agentward send',
    'chat echo < invoke_agent ops',
  ]);
  memory.reset();
  await post(`/approvals/${approvals[0]!.id}`, { approved: true }, BASIC);
  assert.deepEqual(memory.tree(), [
    'agentward decide < root',
    'invoke_agent ops < agentward decide',
    'execute_tool deploy < invoke_agent ops',
    'chat echo < invoke_agent ops',
  ]);
  const [request] = memory.spans().filter((span) => span.name === 'agentward decide');
  assert.equal(request!.attributes['agentward.auth.outcome'], 'accepted');
  assert.equal(request!.attributes['enduser.id'], 'ada');
  assert.ok(memory.spans().every((span) => span.ended));
});

test('a structural tracer: a refused token names the reason, and no span holds a credential', async () => {
  const { memory, post } = setup();
  assert.equal((await post('/', { message: 'hi' }, `Bearer ${TOKEN}x`)).status, 401);
  assert.equal((await post('/', { message: 'hi' }, `Basic ${btoa(`ada:${PASSWORD}x`)}`)).status, 401);
  assert.equal((await post('/', { message: 'hi' }, BASIC)).status, 200);
  const [refused] = memory.spans();
  assert.equal(refused!.attributes['agentward.auth.outcome'], 'refused');
  assert.equal(refused!.attributes['agentward.auth.refusal_reason'], 'mismatch');
  const text = JSON.stringify(memory.spans().map(({ parent: _, ...span }) => span));
  for (const secret of [TOKEN, PASSWORD, BASIC, btoa(`ada:${PASSWORD}x`)])
    assert.ok(!text.includes(secret), `no span holds ${secret.slice(0, 10)}…`);
});

test('a principal with a tenant: the request span carries agentward.tenant, with recordPrincipal: false too; without one, none', async () => {
  for (const recordPrincipal of [true, false]) {
    const memory = memoryTracer();
    const telemetry = { tracer: memory.tracer, recordPrincipal };
    const agent = createAgent({ name: 'ops', model: echoModel(), store: memoryStore(), telemetry });
    const ofAcme: AuthFn = (request) =>
      request.headers.get('authorization') === `Bearer ${TOKEN}-acme`
        ? { id: 'carol', type: 'user', tenant: 'org_acme' }
        : null;
    const handler = agentHandler(agent, { auth: [ofAcme, apiToken(TOKEN)], telemetry });
    const send = (authorization: string) =>
      handler(
        new Request('https://agent.example.com/', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization },
          body: JSON.stringify({ message: 'hi' }),
        }),
      );
    assert.equal((await send(`Bearer ${TOKEN}-acme`)).status, 200);
    const [span] = memory.spans().filter((span) => span.name === 'agentward send');
    assert.equal(span!.attributes['agentward.tenant'], 'org_acme');
    assert.equal(span!.attributes['enduser.id'], recordPrincipal ? 'carol' : undefined);
    memory.reset();
    assert.equal((await send(`Bearer ${TOKEN}`)).status, 200);
    const [other] = memory.spans().filter((span) => span.name === 'agentward send');
    assert.equal(other!.attributes['agentward.tenant'], undefined);
  }
});
