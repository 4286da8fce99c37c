// MCP `mcp.tools` (design §36): the agent's own tools listed beside ask and decide, and called
// through the agent's tool path (arguments, approval decided with decide, per-tool scopes in a
// step-up challenge, a tools function per principal), on every runtime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { protectedResourceMetadata } from '../../src/auth/index.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { createAgent, echoModel, tool } from '../../src/agent/index.ts';
import type { Principal, Tool } from '../../src/agent/types.ts';
import type { AuthFn } from '../../src/auth/types.ts';
import { agentHandler } from '../../src/http/index.ts';
import type { AuditRecord } from '../../src/http/audit.ts';
import { AUDIENCE, NOW, SECRET, claims, hmacSigner, signToken } from '../helpers/jwt.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { memoryTracer } from '../helpers/memory-tracer.ts';

const URL_MCP = 'https://agent.example.com/agent/mcp';
const rpc = (id: number, method: string, params?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params && { params }),
});
type Handler = (request: Request) => Promise<Response>;
async function post(handler: Handler, body: unknown, headers: Record<string, string> = {}) {
  const response = await handler(
    new Request(URL_MCP, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    }),
  );
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}
const call = (id: number, name: string, args: unknown) => rpc(id, 'tools/call', { name, arguments: args });

/** The tools, each counting its runs: weather (zod, an output schema), deploy (asks first), echo (JSON Schema). */
function tools() {
  const runs: string[] = [];
  const weather = tool({
    name: 'weather',
    description: 'Current weather of a city',
    parameters: z.object({ city: z.string() }),
    outputSchema: z.object({ city: z.string(), celsius: z.number() }),
    execute: ({ city }) => {
      runs.push(`weather ${city}`);
      return { city, celsius: 21 };
    },
  });
  const deploy = tool({
    name: 'deploy',
    description: 'Deploys a service',
    parameters: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
    needsApproval: true,
    execute: ({ service }: { service: string }) => {
      runs.push(`deploy ${service}`);
      return `deployed ${service}`;
    },
  });
  const echo = tool({
    name: 'echo',
    description: 'Echoes its text',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    execute: ({ text }: { text: string }) => {
      runs.push(`echo ${text}`);
      return text;
    },
  });
  return { runs, weather, deploy, echo };
}

test('mcp.tools lists the agent tools with their schemas beside ask and decide; calls run them, arguments checked first', async () => {
  const { runs, weather, deploy, echo } = tools();
  const agent = createAgent({ name: 'ops', model: echoModel(), tools: [weather, deploy, echo] });
  const handler = agentHandler(agent, { basePath: '/agent', mcp: { tools: 'agent' } });
  const listed = (await post(handler, rpc(1, 'tools/list'))).body.result.tools as Record<string, any>[];
  assert.deepEqual(
    listed.map((entry) => entry.name),
    ['ask', 'decide', 'read', 'weather', 'deploy', 'echo'],
  );
  const byName = Object.fromEntries(listed.map((entry) => [entry.name, entry]));
  assert.equal(byName.weather.description, 'Current weather of a city');
  assert.equal(byName.weather.inputSchema.type, 'object');
  assert.deepEqual(byName.weather.inputSchema.required, ['city']);
  assert.equal(byName.weather.outputSchema.type, 'object');
  assert.deepEqual(byName.weather.outputSchema.properties.celsius, { type: 'number' });
  assert.equal(byName.echo.outputSchema, undefined);
  // A tool that may wait for approval lists an outputSchema its waiting answer is valid against.
  assert.deepEqual(byName.deploy.outputSchema.properties.status.enum, ['completed', 'awaiting-approval']);
  assert.deepEqual(byName.deploy.outputSchema.required, ['status', 'sessionId']);

  const sunny = await post(handler, call(2, 'weather', { city: 'Oslo' }));
  assert.equal(sunny.status, 200);
  assert.deepEqual(sunny.body.result.structuredContent, { city: 'Oslo', celsius: 21 });
  assert.equal(sunny.body.result.isError, false);
  assert.deepEqual(JSON.parse(sunny.body.result.content[0].text), { city: 'Oslo', celsius: 21 });
  const echoed = await post(handler, call(3, 'echo', { text: 'hi' }));
  assert.deepEqual(echoed.body.result, { content: [{ type: 'text', text: 'hi' }], isError: false });

  // Arguments the schema refuses: an isError result, never a 500, and the tool does not run.
  for (const args of [{ city: 7 }, {}, { text: 1 }]) {
    const bad = await post(handler, call(4, 'weather', args));
    assert.equal(bad.status, 200);
    assert.equal(bad.body.result.isError, true);
    assert.match(bad.body.result.content[0].text, /invalid arguments/);
  }
  // An unknown tool: a JSON-RPC error (invalid params), never a 500.
  const unknown = await post(handler, call(5, 'nope', {}));
  assert.equal(unknown.status, 200);
  assert.equal(unknown.body.error.code, -32602);
  assert.deepEqual(runs, ['weather Oslo', 'echo hi']);
});

test('a call that needs approval answers awaiting-approval, runs only once decide approves it, and a denial never runs it', async () => {
  const { runs, deploy } = tools();
  const agent = createAgent({ name: 'ops', model: echoModel(), tools: [deploy] });
  const handler = agentHandler(agent, { basePath: '/agent', mcp: { tools: ['deploy'] } });
  const waiting = await post(handler, call(1, 'deploy', { service: 'api' }));
  const { structuredContent } = waiting.body.result;
  assert.equal(structuredContent.status, 'awaiting-approval');
  assert.deepEqual(Object.keys(structuredContent).sort(), ['approvalId', 'sessionId', 'status']);
  assert.deepEqual(runs, []);
  const decided = await post(handler, call(2, 'decide', { approvalId: structuredContent.approvalId, approved: true }));
  assert.equal(decided.body.result.structuredContent.status, 'completed');
  assert.equal(decided.body.result.structuredContent.text, 'deployed api');
  assert.equal(decided.body.result.structuredContent.sessionId, structuredContent.sessionId);
  assert.deepEqual(runs, ['deploy api']);
  const again = (await post(handler, call(3, 'deploy', { service: 'db' }))).body.result.structuredContent;
  const denied = await post(handler, call(4, 'decide', { approvalId: again.approvalId, approved: false }));
  assert.equal(denied.body.result.structuredContent.status, 'completed');
  assert.deepEqual(runs, ['deploy api']);
  // The direct call's session holds the call and its answer, as a run's would.
  const transcript = await agent.transcript(structuredContent.sessionId);
  assert.deepEqual(
    transcript.messages.map((message) => message.role),
    ['assistant', 'tool'],
  );
});

test('per-tool scopes: the union of the entry, scopes.mcp and mcp.scopes.<tool> in one 403 challenge; no scope group applies', async () => {
  const { runs, weather, deploy } = tools();
  const agent = createAgent({ name: 'ops', model: echoModel(), tools: [weather, deploy] });
  const metadata = protectedResourceMetadata({
    resource: 'https://agent.example.com/agent/mcp',
    authorizationServers: ['https://id.example.com'],
  });
  const auth = jwtAt({ secret: SECRET, audience: AUDIENCE, resourceMetadata: metadata }, () => NOW);
  const token = async (scope: string) =>
    `Bearer ${await signToken({ alg: 'HS256' }, claims({ scope }), await hmacSigner(SECRET))}`;
  const records: AuditRecord[] = [];
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth,
    protectedResource: metadata,
    scopes: { mcp: ['agent:mcp'], send: ['agent:send'], approve: ['agent:approve'] },
    mcp: { tools: 'agent', scopes: { deploy: ['ops:deploy'] } },
    audit: (record) => {
      records.push(record);
    },
  });
  const plain = await token('agent:mcp');
  const refused = await post(handler, call(1, 'deploy', { service: 'api' }), { authorization: plain });
  assert.equal(refused.status, 403);
  assert.equal(
    refused.headers.get('www-authenticate'),
    `Bearer error="insufficient_scope", scope="agent:mcp ops:deploy", resource_metadata="${metadata.url}"`,
  );
  assert.deepEqual(runs, []);
  assert.equal(records.at(-1)?.tool, 'deploy');
  assert.deepEqual(records.at(-1)?.scopes, ['agent:mcp', 'ops:deploy']);
  // A tool without its own scopes needs the route's only (no send group).
  const sunny = await post(handler, call(2, 'weather', { city: 'Oslo' }), { authorization: plain });
  assert.equal(sunny.body.result.structuredContent.celsius, 21);
  assert.equal(records.at(-1)?.tool, 'weather');
  assert.equal(records.at(-1)?.outcome, 'allowed');
  const stepped = await post(handler, call(3, 'deploy', { service: 'api' }), {
    authorization: await token('agent:mcp ops:deploy'),
  });
  assert.equal(stepped.body.result.structuredContent.status, 'awaiting-approval');
  // The record names the session and approval the call made.
  assert.equal(records.at(-1)?.approvalId, stepped.body.result.structuredContent.approvalId);
  assert.equal(records.at(-1)?.sessionId, stepped.body.result.structuredContent.sessionId);
  // A tool named "toString" finds no scopes it was not given, and is unknown.
  const inherited = await post(handler, call(4, 'toString', {}), { authorization: plain });
  assert.equal(inherited.body.error.code, -32602);
});

test('a tools function is called with the caller principal: each caller lists and calls only its tools; ask and decide names are left out', async () => {
  const { runs, weather, deploy } = tools();
  const shadow: Tool = { ...weather, name: 'ask' } as Tool;
  const seen: (string | undefined)[] = [];
  const agent = createAgent({
    name: 'ops',
    model: echoModel(),
    tools: ({ principal }) => {
      seen.push(principal?.id);
      return principal?.id === 'admin' ? [weather, deploy, shadow] : [weather, shadow];
    },
  });
  const principals: Record<string, Principal> = {
    admin: { type: 'user', id: 'admin', authenticator: 'test' },
    guest: { type: 'user', id: 'guest', authenticator: 'test' },
  };
  const auth: AuthFn = (request) => principals[request.headers.get('authorization') ?? ''] ?? null;
  const handler = agentHandler(agent, { basePath: '/agent', auth, mcp: { tools: 'agent' } });
  const names = async (who: string) =>
    ((await post(handler, rpc(1, 'tools/list'), { authorization: who })).body.result.tools as { name: string }[]).map(
      (entry) => entry.name,
    );
  assert.deepEqual(await names('admin'), ['ask', 'decide', 'read', 'weather', 'deploy']);
  assert.deepEqual(await names('guest'), ['ask', 'decide', 'read', 'weather']);
  const refused = await post(handler, call(2, 'deploy', { service: 'api' }), { authorization: 'guest' });
  assert.equal(refused.status, 200);
  assert.equal(refused.body.error.code, -32602);
  assert.deepEqual(runs, []);
  const waiting = await post(handler, call(3, 'deploy', { service: 'api' }), { authorization: 'admin' });
  assert.equal(waiting.body.result.structuredContent.status, 'awaiting-approval');
  assert.ok(seen.includes('guest') && seen.includes('admin'));
});

test('mcp.tools is closed: names must be agent tools, never ask or decide; mcp.scopes names only exposed tools', () => {
  const { weather, deploy } = tools();
  const make =
    (mcp: unknown, agentTools: Tool[] = [weather, deploy]) =>
    () =>
      agentHandler(createAgent({ name: 'ops', model: echoModel(), tools: agentTools }), {
        mcp: mcp as never,
        auth: () => ({ type: 'user', id: 'x', authenticator: 'test' }),
      });
  assertConfigError(make({ tools: ['wether'] }), 'agentHandler()', 'mcp.tools');
  assertConfigError(make({ tools: [] }), 'agentHandler()', 'mcp.tools');
  assertConfigError(make({ tools: 'all' }), 'agentHandler()', 'mcp.tools');
  assertConfigError(make({ tools: ['decide'] }), 'agentHandler()', 'mcp.tools');
  assertConfigError(make({ tools: 'agent' }, [{ ...weather, name: 'ask' } as Tool]), 'agentHandler()', 'mcp.tools');
  assertConfigError(make({ tools: ['weather'], scopes: { deploy: ['x'] } }), 'agentHandler()', 'mcp.scopes');
  assertConfigError(make({ scopes: { weather: ['x'] } }), 'agentHandler()', 'mcp.scopes');
  make({ tools: ['weather'], scopes: { weather: ['x'] } })();
  // Off by default: no agent tool is listed or callable.
});

test('an agent tool call counts against limits.requests (429 with a JSON-RPC error, the tool not run) and is an execute_tool span', async () => {
  const { runs, weather } = tools();
  const tracer = memoryTracer();
  const agent = createAgent({ name: 'ops', model: echoModel(), tools: [weather] });
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: () => ({ type: 'user', id: 'ada', authenticator: 'test' }),
    mcp: { tools: 'agent' },
    limits: { requests: { limit: 1, windowSec: 60 } },
    telemetry: { tracer: tracer.tracer },
  });
  assert.equal((await post(handler, call(1, 'weather', { city: 'Oslo' }))).body.result.isError, false);
  const refused = await post(handler, call(2, 'weather', { city: 'Rome' }));
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error.message, 'Too Many Requests');
  assert.equal(refused.body.id, 2);
  assert.deepEqual(runs, ['weather Oslo']);
  const span = tracer.spans().find((each) => each.attributes['gen_ai.tool.name'] === 'weather');
  assert.equal(span?.attributes['gen_ai.operation.name'], 'execute_tool');
});

test('under concurrent: 1 a second call while one runs is refused, and its tool does not run', async () => {
  let release: () => void = () => undefined;
  const started: string[] = [];
  const slow = tool({
    name: 'slow',
    description: 'Waits',
    parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    execute: async ({ n }: { n: number }) => {
      started.push(`slow ${n}`);
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return n;
    },
  });
  const agent = createAgent({ name: 'ops', model: echoModel(), tools: [slow] });
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: () => ({ type: 'user', id: 'ada', authenticator: 'test' }),
    mcp: { tools: ['slow'] },
    limits: { concurrent: 1 },
  });
  const first = post(handler, call(1, 'slow', { n: 1 }));
  while (started.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  const second = await post(handler, call(2, 'slow', { n: 2 }));
  assert.equal(second.status, 429);
  release();
  assert.equal((await first).body.result.content[0].text, '1');
  assert.deepEqual(started, ['slow 1']);
});

test("under sessions: 'owned' a direct call's approval is its caller's: another principal's decide finds none", async () => {
  const { runs, deploy } = tools();
  const principals: Record<string, Principal> = {
    alice: { type: 'user', id: 'alice', authenticator: 'test' },
    bob: { type: 'user', id: 'bob', authenticator: 'test' },
  };
  const auth: AuthFn = (request) => principals[request.headers.get('authorization') ?? ''] ?? null;
  const agent = createAgent({ name: 'ops', model: echoModel(), tools: [deploy], sessions: 'owned' });
  const handler = agentHandler(agent, { basePath: '/agent', auth, mcp: { tools: 'agent' } });
  const waiting = (await post(handler, call(1, 'deploy', { service: 'api' }), { authorization: 'alice' })).body.result
    .structuredContent;
  const decide = call(2, 'decide', { approvalId: waiting.approvalId, approved: true });
  const stranger = await post(handler, decide, { authorization: 'bob' });
  assert.equal(stranger.body.result.isError, true);
  assert.equal(stranger.body.result.content[0].text, 'Approval not found');
  assert.deepEqual(runs, []);
  const owner = await post(handler, decide, { authorization: 'alice' });
  assert.equal(owner.body.result.structuredContent.status, 'completed');
  assert.deepEqual(runs, ['deploy api']);
});
