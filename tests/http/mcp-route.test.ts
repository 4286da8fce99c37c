// POST <base>/mcp (design §18): the wire, the tools, ownership, scopes, and the Origin and Host
// checks, through agentHandler() on every runtime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthError, protectedResourceMetadata } from '../../src/auth/index.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Agent, Principal } from '../../src/agent/types.ts';
import type { AuthFn } from '../../src/auth/types.ts';
import { agentHandler } from '../../src/http/index.ts';
import { agentRoutes } from '../../src/http/handler.ts';
import { toResponse } from '../../src/http/responses.ts';
import { webRouteRequest } from '../../src/http/route-request.ts';
import { VERSION } from '../../src/http/version.ts';
import { AUDIENCE, NOW, SECRET, claims, hmacSigner, signToken } from '../helpers/jwt.ts';
import { DEPLOY_MESSAGE, principalAgent } from '../helpers/http-agent.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { captureConsoleError } from '../helpers/console.ts';

const URL_MCP = 'https://agent.example.com/agent/mcp';
const rpc = (id: unknown, method: string, params?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  ...(id !== undefined && { id }),
  method,
  ...(params && { params }),
});

/** Principals by token: a custom entry, so each test names its callers. */
function callers(principals: Record<string, Principal>): AuthFn {
  return (request) => principals[request.headers.get('authorization')?.replace(/^Bearer /, '') ?? ''] ?? null;
}
const alice: Principal = { type: 'user', id: 'alice', authenticator: 'test' };
const bob: Principal = { type: 'user', id: 'bob', authenticator: 'test' };

type Handler = (request: Request) => Promise<Response>;

async function post(handler: Handler, body: unknown, headers: Record<string, string> = {}) {
  const response = await handler(
    new Request(URL_MCP, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  );
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text === '' ? undefined : JSON.parse(text) };
}

const open = (agent: Agent = createAgent({ name: 'echo', model: echoModel() }), mcp: unknown = true) =>
  agentHandler(agent, { basePath: '/agent', mcp: mcp as never });

test('initialize: the asked revision when served (2025-06-18, 2025-11-25, 2026-07-28), else 2025-11-25; tools capability; the agent as serverInfo', async () => {
  const handler = open(undefined, { title: 'The Echo' });
  for (const [asked, answered] of [
    ['2025-06-18', '2025-06-18'],
    ['2025-11-25', '2025-11-25'],
    ['2026-07-28', '2026-07-28'],
    ['2024-11-05', '2025-11-25'],
    [undefined, '2025-11-25'],
  ]) {
    const { status, headers, body } = await post(
      handler,
      rpc(1, 'initialize', { protocolVersion: asked, capabilities: {}, clientInfo: { name: 'test', version: '1' } }),
    );
    assert.equal(status, 200);
    assert.equal(headers.get('content-type'), 'application/json');
    assert.equal(headers.get('mcp-session-id'), null, 'stateless: no session');
    assert.deepEqual(body, {
      jsonrpc: '2.0',
      id: 1,
      result: {
        protocolVersion: answered,
        capabilities: { tools: {} },
        serverInfo: { name: 'echo', title: 'The Echo', version: VERSION },
      },
    });
  }
});

test("notifications and a client's answers get 202 without a body; ping answers {}; other methods -32601", async () => {
  const handler = open();
  for (const body of [
    rpc(undefined, 'notifications/initialized'),
    rpc(undefined, 'notifications/cancelled', { requestId: 1 }),
    { jsonrpc: '2.0', id: 7, result: {} },
  ]) {
    const answer = await post(handler, body);
    assert.deepEqual([answer.status, answer.text], [202, '']);
  }
  assert.deepEqual((await post(handler, rpc('p', 'ping'))).body, { jsonrpc: '2.0', id: 'p', result: {} });
  for (const method of ['resources/list', 'prompts/list', 'logging/setLevel', 'tools/ask']) {
    const answer = await post(handler, rpc(2, method));
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found' } });
  }
});

test('malformed bodies are JSON-RPC errors with 400: -32700 for what is not JSON, -32600 for batches and what is not a request', async () => {
  const handler = open();
  const cases: [unknown, number, number | string | null][] = [
    ['{"jsonrpc":', -32700, null],
    ['\xff', -32700, null],
    [[rpc(1, 'ping'), rpc(2, 'ping')], -32600, null],
    ['"ping"', -32600, null],
    [{ id: 1, method: 'ping' }, -32600, 1],
    [{ jsonrpc: '1.0', id: 1, method: 'ping' }, -32600, 1],
    [{ jsonrpc: '2.0', id: null, method: 'ping' }, -32600, null],
    [{ jsonrpc: '2.0', id: 1.5, method: 'ping' }, -32600, null],
    [{ jsonrpc: '2.0', id: 1, method: 42 }, -32600, 1],
    [{ jsonrpc: '2.0', id: 1, method: 'ping', params: [] }, -32600, 1],
    [{ jsonrpc: '2.0', id: 1 }, -32600, 1],
  ];
  for (const [body, code, id] of cases) {
    const answer = await post(handler, body);
    assert.equal(answer.status, 400, JSON.stringify(body));
    assert.equal(answer.body.error.code, code, JSON.stringify(body));
    assert.equal(answer.body.id, id, JSON.stringify(body));
  }
});

test('GET and DELETE answer 405 with Allow: POST; without mcp there is no route', async () => {
  const handler = open();
  for (const method of ['GET', 'DELETE', 'PUT']) {
    const response = await handler(new Request(URL_MCP, { method }));
    assert.equal(response.status, 405, method);
    assert.equal(response.headers.get('allow'), 'POST');
  }
  assert.equal((await post(open(undefined, false), rpc(1, 'ping'))).status, 404);
  assert.equal(
    (await post(agentHandler(createAgent({ name: 'x', model: echoModel() }), { basePath: '/agent' }), rpc(1, 'ping')))
      .status,
    404,
  );
});

test('MCP-Protocol-Version: an unsupported one is 400 (-32022 naming the served ones); a body claiming another revision than the header is 400 -32020', async () => {
  const handler = open();
  for (const version of ['2025-03-26', '2024-11-05', 'latest']) {
    const answer = await post(handler, rpc(1, 'ping'), { 'mcp-protocol-version': version });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, -32022);
    assert.deepEqual(answer.body.error.data.supported, ['2026-07-28', '2025-11-25', '2025-06-18']);
  }
  const envelope = { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } };
  const mixed = await post(handler, rpc(1, 'ping', envelope), {
    'mcp-protocol-version': '2025-11-25',
    'mcp-method': 'ping',
  });
  assert.deepEqual([mixed.status, mixed.body.error.code], [400, -32020]);
  const unknown = await post(
    handler,
    rpc(1, 'ping', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2030-01-01' } }),
  );
  assert.deepEqual([unknown.status, unknown.body.error.code], [400, -32022]);
  for (const version of ['2025-06-18', '2025-11-25'])
    assert.equal((await post(handler, rpc(1, 'ping'), { 'mcp-protocol-version': version })).status, 200);
});

test('2026-07-28: Mcp-Method (and Mcp-Name for tools/call) required and equal to the body, else 400 -32020 naming the header; results say resultType', async () => {
  const handler = open();
  const modern = { 'mcp-protocol-version': '2026-07-28' };
  const ask = rpc(1, 'tools/call', { name: 'ask', arguments: { message: 'hi' } });
  const cases: [Record<string, string>, string][] = [
    [{}, 'Mcp-Method header is missing'],
    [{ 'mcp-method': 'tools/list' }, "Mcp-Method header is not the body's method"],
    [{ 'mcp-method': 'tools/call' }, 'Mcp-Name header is missing'],
    [{ 'mcp-method': 'tools/call', 'mcp-name': 'decide' }, "Mcp-Name header is not the body's tool name"],
  ];
  for (const [headers, says] of cases) {
    const answer = await post(handler, ask, { ...modern, ...headers });
    assert.equal(answer.status, 400, says);
    assert.equal(answer.body.error.code, -32020);
    assert.ok(answer.body.error.message.includes(says), answer.body.error.message);
  }
  const called = await post(handler, ask, { ...modern, 'mcp-method': 'tools/call', 'mcp-name': 'ask' });
  assert.equal(called.status, 200);
  assert.equal(called.body.result.resultType, 'complete');
  assert.equal(called.body.result.structuredContent.text, 'hi');
  const listed = await post(handler, rpc(2, 'tools/list'), { ...modern, 'mcp-method': 'tools/list' });
  assert.deepEqual(
    [listed.body.result.resultType, listed.body.result.ttlMs, listed.body.result.cacheScope],
    ['complete', 0, 'private'],
  );
  // Without initialize: server/discover says what is served.
  const discovered = await post(handler, rpc(3, 'server/discover'), { ...modern, 'mcp-method': 'server/discover' });
  assert.deepEqual(discovered.body.result.supportedVersions, ['2026-07-28', '2025-11-25', '2025-06-18']);
  assert.deepEqual(discovered.body.result.capabilities, { tools: {} });
  assert.equal(discovered.body.result._meta['io.modelcontextprotocol/serverInfo'].name, 'echo');
  // Older revisions: checked only when present.
  assert.equal((await post(handler, ask, { 'mcp-protocol-version': '2025-11-25' })).status, 200);
  assert.equal((await post(handler, ask, { 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'ping' })).status, 400);
  assert.equal((await post(handler, ask, { 'mcp-method': 'tools/call', 'mcp-name': 'other' })).status, 400);
  assert.equal(
    (await post(handler, ask)).body.result.resultType,
    undefined,
    'older revisions get the older result shape',
  );
});

test('tools/list: ask with its schemas; decide only when some tool can wait for approval (or tools are chosen per run)', async () => {
  const names = async (agent: Agent) =>
    (await post(open(agent), rpc(1, 'tools/list'))).body.result.tools.map((tool: { name: string }) => tool.name);
  assert.deepEqual(await names(createAgent({ name: 'plain', model: echoModel() })), ['ask']);
  const lookup = { name: 'lookup', description: 'd', parameters: { type: 'object' }, execute: () => 1 };
  assert.deepEqual(
    await names(
      createAgent({
        name: 'safe',
        model: echoModel(),
        tools: [lookup, { ...lookup, name: 'l2', needsApproval: false }],
      }),
    ),
    ['ask'],
  );
  assert.deepEqual(await names(principalAgent().agent), ['ask', 'decide', 'read']);
  assert.deepEqual(await names(createAgent({ name: 'dynamic', model: echoModel(), tools: () => [lookup] })), [
    'ask',
    'decide',
    'read',
  ]);
  const [ask, decide] = (await post(open(principalAgent().agent), rpc(1, 'tools/list'))).body.result.tools;
  assert.deepEqual(ask.inputSchema.required, ['message']);
  assert.deepEqual(Object.keys(ask.inputSchema.properties), ['message', 'sessionId']);
  assert.deepEqual(decide.inputSchema.required, ['approvalId', 'approved']);
  assert.deepEqual(Object.keys(decide.inputSchema.properties), ['approvalId', 'approved', 'reason']);
  for (const tool of [ask, decide]) {
    assert.equal(typeof tool.description, 'string');
    assert.deepEqual(tool.outputSchema.required, ['sessionId', 'status', 'text', 'approvals']);
  }
});

test('ask and decide: the reply as text and structuredContent, a waiting approval named in both, decided by decide; the principal reaches the run', async () => {
  const { agent, modelSaw, deployed } = principalAgent();
  const handler = agentHandler(agent, { basePath: '/agent', mcp: true, auth: callers({ a: alice }) });
  const as = { authorization: 'Bearer a' };
  const asked = await post(handler, rpc(1, 'tools/call', { name: 'ask', arguments: { message: DEPLOY_MESSAGE } }), as);
  const waiting = asked.body.result;
  assert.equal(waiting.isError, false);
  assert.equal(waiting.structuredContent.status, 'awaiting-approval');
  const [approval] = waiting.structuredContent.approvals;
  assert.equal(approval.tool, 'deploy');
  assert.deepEqual(approval.arguments, { env: 'prod' });
  assert.ok(waiting.content[0].text.includes(approval.id), 'the text names the approval to decide');
  assert.deepEqual(modelSaw.at(-1), alice);
  const decided = await post(
    handler,
    rpc(2, 'tools/call', { name: 'decide', arguments: { approvalId: approval.id, approved: true, reason: 'ok' } }),
    as,
  );
  assert.equal(decided.body.result.isError, false);
  assert.equal(decided.body.result.structuredContent.status, 'completed');
  assert.equal(decided.body.result.structuredContent.sessionId, waiting.structuredContent.sessionId);
  assert.deepEqual(deployed, [{ env: 'prod' }]);
  const again = await post(
    handler,
    rpc(3, 'tools/call', { name: 'decide', arguments: { approvalId: approval.id, approved: true } }),
    as,
  );
  assert.deepEqual(again.body.result, { content: [{ type: 'text', text: 'Approval not found' }], isError: true });
});

test('arguments are checked: a fault is a tool error naming it; an unknown tool is -32602', async () => {
  const handler = open(principalAgent().agent);
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['ask', {}, /message must be a non-empty string/],
    ['ask', { message: 42 }, /message must be a non-empty string/],
    ['ask', { message: 'hi', sessionId: '' }, /sessionId must be a non-empty string/],
    ['ask', { message: 'hi', principal: { id: 'root' } }, /unknown argument "principal"/],
    ['decide', { approvalId: 'x' }, /approved must be true or false/],
    ['decide', { approvalId: 'x', approved: 'yes' }, /approved must be true or false/],
  ];
  for (const [name, args, says] of cases) {
    const { status, body } = await post(handler, rpc(1, 'tools/call', { name, arguments: args }));
    assert.equal(status, 200);
    assert.equal(body.result.isError, true, JSON.stringify(args));
    assert.match(body.result.content[0].text, says);
  }
  for (const params of [{ name: 'deploy', arguments: {} }, { name: 'decide-all' }]) {
    const { body } = await post(handler, rpc(1, 'tools/call', params));
    assert.equal(body.error.code, -32602);
  }
  assert.equal((await post(handler, rpc(1, 'tools/call', { arguments: {} }))).body.error.code, -32602);
  assert.equal((await post(handler, rpc(1, 'tools/call', { name: 'ask', arguments: 'hi' }))).body.error.code, -32602);
  // decide does not exist on an agent where nothing waits.
  assert.equal(
    (await post(open(), rpc(1, 'tools/call', { name: 'decide', arguments: { approvalId: 'x', approved: true } }))).body
      .error.code,
    -32602,
  );
});

test('a failed run is isError with what the HTTP routes would say, never internals', async () => {
  const failing = createAgent({
    name: 'failing',
    model: {
      generate: () => {
        throw new Error('db password is hunter2');
      },
    },
  });
  const { result: answer, calls } = await captureConsoleError(() =>
    post(open(failing), rpc(1, 'tools/call', { name: 'ask', arguments: { message: 'hi' } })),
  );
  assert.equal(answer.status, 200);
  assert.equal(answer.body.result.isError, true);
  assert.equal(answer.text.includes('hunter2'), false);
  assert.ok(calls.length > 0, 'the failure is logged on the server');
});

test('ownership: another principal can neither continue a session nor decide its approval (as on every route)', async () => {
  // Turns counted: authorize() refuses another's `ask` before its run, so the agent's turn is never entered.
  const entered: string[] = [];
  const store = memoryStore();
  const counted: typeof store = Object.assign(Object.create(null), store, {
    withSession: <T>(id: string, turn: (s: typeof store) => Promise<T>): Promise<T> => {
      entered.push(id);
      return turn(counted);
    },
  });
  const owned = createAgent({
    name: 'owned',
    model: echoModel(),
    sessions: 'owned',
    store: counted,
    tools: [
      { name: 'deploy', description: 'd', parameters: { type: 'object' }, needsApproval: true, execute: () => 'done' },
    ],
  });
  const handler = agentHandler(owned, { basePath: '/agent', mcp: true, auth: callers({ a: alice, b: bob }) });
  const asked = await post(handler, rpc(1, 'tools/call', { name: 'ask', arguments: { message: '/tool deploy {}' } }), {
    authorization: 'Bearer a',
  });
  const { sessionId, approvals } = asked.body.result.structuredContent;
  const taken = await post(
    handler,
    rpc(2, 'tools/call', { name: 'ask', arguments: { message: 'mine now', sessionId } }),
    { authorization: 'Bearer b' },
  );
  assert.deepEqual(taken.body.result, { content: [{ type: 'text', text: 'Session not found' }], isError: true });
  assert.deepEqual(entered, [sessionId], "another's ask never reaches the agent's turn");
  const decided = await post(
    handler,
    rpc(3, 'tools/call', { name: 'decide', arguments: { approvalId: approvals[0].id, approved: true } }),
    { authorization: 'Bearer b' },
  );
  assert.deepEqual(decided.body.result, { content: [{ type: 'text', text: 'Approval not found' }], isError: true });
  // The owner still can.
  const own = await post(
    handler,
    rpc(4, 'tools/call', { name: 'decide', arguments: { approvalId: approvals[0].id, approved: false } }),
    { authorization: 'Bearer a' },
  );
  assert.equal(own.body.result.structuredContent.status, 'completed');
});

test('scopes: mcp.scopes per tool and scopes.mcp for the route answer HTTP 403 insufficient_scope naming them, which is how clients step up', async () => {
  const metadata = protectedResourceMetadata({
    resource: 'https://agent.example.com/agent/mcp',
    authorizationServers: ['https://id.example.com'],
  });
  const auth = jwtAt({ secret: SECRET, audience: AUDIENCE, resourceMetadata: metadata }, () => NOW);
  const token = async (scope: string) =>
    `Bearer ${await signToken({ alg: 'HS256' }, claims({ scope }), await hmacSigner(SECRET))}`;
  const handler = agentHandler(principalAgent().agent, {
    basePath: '/agent',
    auth,
    protectedResource: metadata,
    mcp: { scopes: { ask: ['agent:ask'], decide: ['agent:approve'] } },
  });
  const asker = await token('agent:ask');
  const ask = rpc(1, 'tools/call', { name: 'ask', arguments: { message: DEPLOY_MESSAGE } });
  const asked = await post(handler, ask, { authorization: asker });
  assert.equal(asked.status, 200);
  // Listing and pinging need no tool scope.
  assert.equal((await post(handler, rpc(2, 'tools/list'), { authorization: asker })).status, 200);
  const approvalId = asked.body.result.structuredContent.approvals[0].id;
  const decide = rpc(3, 'tools/call', { name: 'decide', arguments: { approvalId, approved: true } });
  const refused = await post(handler, decide, { authorization: asker });
  assert.equal(refused.status, 403);
  assert.equal(
    refused.headers.get('www-authenticate'),
    `Bearer error="insufficient_scope", scope="agent:approve", resource_metadata="${metadata.url}"`,
  );
  assert.equal(
    (await post(handler, ask, { authorization: await token('agent:approve') })).status,
    403,
    'ask needs its own scope',
  );
  const stepped = await post(handler, decide, { authorization: await token('agent:ask agent:approve') });
  assert.equal(stepped.body.result.structuredContent.status, 'completed');
  const unauthenticated = await post(handler, ask);
  assert.equal(unauthenticated.status, 401);
  assert.match(unauthenticated.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata=/);
  // scopes.mcp guards the whole route.
  const route = agentHandler(principalAgent().agent, {
    basePath: '/agent',
    auth,
    mcp: true,
    scopes: { mcp: ['agent:mcp'] },
  });
  const denied = await post(route, rpc(1, 'ping'), { authorization: asker });
  assert.equal(denied.status, 403);
  assert.match(denied.headers.get('www-authenticate') ?? '', /error="insufficient_scope", scope="agent:mcp"/);
  assert.equal((await post(route, rpc(1, 'ping'), { authorization: await token('agent:mcp') })).status, 200);
  // A scope error thrown by a custom entry reads the same way.
  const custom = agentHandler(principalAgent().agent, {
    basePath: '/agent',
    mcp: true,
    auth: () => {
      throw new AuthError(403, { scope: ['agent:x'] });
    },
  });
  assert.equal((await post(custom, rpc(1, 'ping'))).status, 403);
});

test('Origin: absent, the own origin or an allowed one goes on; any other is 403 before auth', async () => {
  const handler = agentHandler(createAgent({ name: 'x', model: echoModel() }), {
    basePath: '/agent',
    auth: callers({ a: alice }),
    mcp: { allowedOrigins: ['https://app.example'] },
  });
  const as = { authorization: 'Bearer a' };
  for (const origin of [undefined, 'https://agent.example.com', 'https://app.example']) {
    assert.equal((await post(handler, rpc(1, 'ping'), { ...as, ...(origin && { origin }) })).status, 200, origin);
  }
  for (const origin of [
    'https://evil.example',
    'null',
    'https://app.example.evil',
    'http://agent.example.com:8080',
    'https://app.example/',
  ]) {
    const answer = await post(handler, rpc(1, 'ping'), { origin });
    assert.equal(answer.status, 403, origin);
    assert.equal(answer.headers.get('www-authenticate'), null, 'refused before auth');
  }
});

test('Host: on a loopback connection a Host that is not a loopback name is 403 (DNS rebinding), unless an allowed origin names it', async () => {
  const agent = createAgent({ name: 'x', model: echoModel() });
  const serve = (mcp: unknown) => {
    const routes = agentRoutes(agent, { basePath: '/agent', mcp: mcp as never });
    return async (host: string, loopback: boolean, origin?: string) => {
      const request = new Request('http://127.0.0.1:3000/agent/mcp', {
        method: 'POST',
        headers: { host, 'content-type': 'application/json', ...(origin && { origin }) },
        body: JSON.stringify(rpc(1, 'ping')),
      });
      return toResponse(
        await routes({
          ...webRouteRequest(request),
          headers: { get: (name: string) => (name === 'host' ? host : request.headers.get(name)) },
          loopback,
        }),
      ).status;
    };
  };
  const call = serve(true);
  for (const host of ['localhost:3000', '127.0.0.1:3000', '[::1]:3000', 'LOCALHOST', '127.0.0.1'])
    assert.equal(await call(host, true), 200, host);
  for (const host of ['evil.example.com', 'evil.example.com:3000', 'localhost.evil.example', '127.0.0.1.nip.io'])
    assert.equal(await call(host, true), 403, host);
  assert.equal(await call('evil.example.com:3000', true, 'http://evil.example.com:3000'), 403, 'the rebound page');
  assert.equal(await call('localhost:3000', true, 'http://localhost:3000'), 200, 'the own page on localhost');
  assert.equal(await call('agent.example.com', false), 200, "not loopback: the Host is the proxy's business");
  assert.equal(
    await serve({ allowedOrigins: ['https://agent.example.com'] })('agent.example.com', true),
    200,
    'a local proxy for an allowed name',
  );
});

test('mcp.allowedHosts: a Host not in the list is 403 before auth, on any listener; a listed one reaches auth, and passes the loopback check', async () => {
  const agent = createAgent({ name: 'x', model: echoModel() });
  const routes = agentRoutes(agent, {
    basePath: '/agent',
    auth: callers({ 'alice-token-0123456789': alice }),
    mcp: { allowedHosts: ['agent.example.com', 'api.example.com:8443', '[::1]:3000'] },
  });
  const call = async (
    host: string | undefined,
    loopback: boolean,
    token?: string,
    url = 'http://10.0.0.5:3000/agent/mcp',
  ) => {
    const request = new Request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
      body: JSON.stringify(rpc(1, 'ping')),
    });
    const response = toResponse(
      await routes({
        ...webRouteRequest(request),
        headers: { get: (name: string) => (name === 'host' ? (host ?? null) : request.headers.get(name)) },
        loopback,
      }),
    );
    return { status: response.status, challenge: response.headers.get('www-authenticate') };
  };
  for (const loopback of [false, true]) {
    for (const host of [
      'evil.example',
      'agent.example.com.evil.example',
      'api.example.com',
      'api.example.com:443',
      'localhost:3000',
      '10.0.0.5:3000',
    ]) {
      assert.deepEqual(
        await call(host, loopback, 'alice-token-0123456789'),
        { status: 403, challenge: null },
        `${host} (loopback ${loopback}): refused before auth`,
      );
    }
    for (const host of [
      'agent.example.com',
      'AGENT.example.com',
      'agent.example.com:8080',
      'api.example.com:8443',
      '[::1]:3000',
    ]) {
      assert.equal((await call(host, loopback)).status, 401, `${host} (loopback ${loopback}): on to auth`);
      assert.equal(
        (await call(host, loopback, 'alice-token-0123456789')).status,
        200,
        `${host} (loopback ${loopback})`,
      );
    }
  }
  // A Request made without a Host header is judged by its URL's host.
  assert.equal(
    (await call(undefined, false, 'alice-token-0123456789', 'https://agent.example.com/agent/mcp')).status,
    200,
  );
  assert.equal((await call(undefined, false, 'alice-token-0123456789', 'https://evil.example/agent/mcp')).status, 403);
  // Through agentHandler, as on Workers, Bun or Deno: the Host header of the request.
  const handler = agentHandler(agent, { basePath: '/agent', mcp: { allowedHosts: ['agent.example.com'] } });
  assert.equal((await post(handler, rpc(1, 'ping'))).status, 200, 'URL_MCP names agent.example.com');
  assert.equal(
    (
      await handler(
        new Request('https://rebound.example/agent/mcp', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(rpc(1, 'ping')),
        }),
      )
    ).status,
    403,
  );
  // Other routes are not the MCP route's business.
  assert.equal((await handler(new Request('https://rebound.example/agent/health'))).status, 200);
});

test('mcp.allowedHosts is checked at creation: a non-empty list of host or host:port', () => {
  const agent = createAgent({ name: 'x', model: echoModel() });
  const make = (allowedHosts: unknown) => () => agentHandler(agent, { mcp: { allowedHosts } as never });
  for (const bad of [
    'agent.example.com',
    [],
    ['https://agent.example.com'],
    ['agent.example.com/mcp'],
    ['agent.example.com:99999'],
    ['user@agent.example.com'],
    [''],
    [42],
    ['agent example'],
  ]) {
    assertConfigError(make(bad), 'agentHandler()', `mcp.allowedHosts ${JSON.stringify(bad)}`);
  }
  assert.doesNotThrow(
    make(['agent.example.com', 'localhost:3000', '127.0.0.1', '[::1]:8080', 'xn--bcher-kva.example']),
  );
});

test("a JSON-RPC error keeps the request's id whenever the body could be read: -32022 for an unsupported MCP-Protocol-Version header", async () => {
  const handler = open();
  for (const id of [7, 'req-7']) {
    const answer = await post(handler, rpc(id, 'ping'), { 'mcp-protocol-version': '2024-11-05' });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, -32022);
    assert.equal(answer.body.id, id);
  }
  // No readable id (a notification, a batch, not JSON): null, as JSON-RPC asks.
  for (const body of [rpc(undefined, 'notifications/initialized'), [rpc(1, 'ping')], '{not json']) {
    assert.equal(
      (await post(handler, body, { 'mcp-protocol-version': '2024-11-05' })).body.id,
      null,
      JSON.stringify(body),
    );
  }
  const meta = await post(
    handler,
    rpc(9, 'ping', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2030-01-01' } }),
  );
  assert.deepEqual([meta.body.error.code, meta.body.id], [-32022, 9]);
  const version = await post(handler, { jsonrpc: '1.0', id: 3, method: 'ping' });
  assert.deepEqual([version.body.error.code, version.body.id], [-32600, 3]);
});

test('mcp options are closed and checked at creation (AGENT_AUTH_CONFIG_INVALID)', () => {
  const agent = createAgent({ name: 'x', model: echoModel() });
  const make =
    (mcp: unknown, extra: Record<string, unknown> = { auth: callers({}) }) =>
    () =>
      agentHandler(agent, { mcp: mcp as never, ...extra });
  assertConfigError(make({ nmae: 'x' }), 'agentHandler()', 'mcp');
  assertConfigError(make({ scopes: { ask: ['a'], approve: ['b'] } }), 'agentHandler()', 'mcp.scopes');
  assertConfigError(make({ scopes: { ask: [] } }), 'agentHandler()', 'mcp.scopes.ask');
  assertConfigError(make({ scopes: { ask: ['a b'] } }), 'agentHandler()', 'mcp.scopes.ask');
  assertConfigError(make({ scopes: { ask: ['a'] } }, {}), 'agentHandler()', 'mcp.scopes');
  assertConfigError(make({ allowedOrigins: 'https://app.example' }), 'agentHandler()', 'mcp.allowedOrigins');
  assertConfigError(make({ allowedOrigins: ['https://app.example/path'] }), 'agentHandler()', 'mcp.allowedOrigins');
  assertConfigError(make({ allowedOrigins: ['app.example'] }), 'agentHandler()', 'mcp.allowedOrigins');
  assertConfigError(make({ name: '' }), 'agentHandler()', 'mcp.name');
  assertConfigError(make('yes'), 'agentHandler()', 'mcp');
  assert.doesNotThrow(
    make({ name: 'n', title: 't', scopes: { decide: ['agent:approve'] }, allowedOrigins: ['http://localhost:5173'] }),
  );
});
