// The one pipeline (design §25), checked surface by surface: every HTTP route, `/ui` sending and
// answering an approval, the MCP tools `ask` and `decide` and MCP's other methods, each with no
// credential, a credential without the group's scope, one with it, and another principal's
// session under `sessions: 'owned'`; on the route handler in Node and the same handler in workerd.
// Then the built cloudflare-worker target against agentHandler with the same options. The
// expected answers are written out here, row by row: nothing is derived from the operation
// table the code uses.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAgent } from '../../src/agent/agent.ts';
import { echoModel } from '../../src/agent/models/echo.ts';
import { apiToken } from '../../src/auth/index.ts';
import { agentHandler } from '../../src/http/handler.ts';
import { build } from '../../src/targets/build.ts';
import { ENV_TOKEN, bearer, tempFolder, writeDir } from '../helpers/build.ts';
import { hmacSigner, signToken } from '../helpers/jwt.ts';
import { MATRIX_SECRET, matrixHandler } from '../helpers/matrix-handler.ts';
import { startWorker, type RunningWorker } from '../helpers/workerd.ts';
import { startBuiltWorker } from '../helpers/worker.ts';

const ORIGIN = 'https://agent.example.com';
const ALL = ['agent:chat', 'agent:read', 'agent:approve', 'agent:sessions', 'agent:mcp'];

interface Call {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
}
type Send = (call: Call) => Promise<Response>;

const toRequest = ({ method, path, headers = {}, body }: Call): [string, RequestInit] => [
  `${ORIGIN}${path}`,
  {
    method,
    headers: {
      ...(body !== undefined && { 'content-type': 'application/json' }),
      ...(path.endsWith('/mcp') && {
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      }),
      ...headers,
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  },
];

async function token(sub: string, scopes: readonly string[]): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signToken(
    { alg: 'HS256', typ: 'JWT' },
    { sub, aud: 'agent', iat: now - 5, exp: now + 600, scope: scopes.join(' ') },
    await hmacSigner(MATRIX_SECRET),
  );
}
const without = (scope: string) => ALL.filter((granted) => granted !== scope);

const rpc = (method: string, params?: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 1, method, params });
const ask = (sessionId: string) => rpc('tools/call', { name: 'ask', arguments: { message: 'hi', sessionId } });
const decideTool = (approvalId: string) =>
  rpc('tools/call', { name: 'decide', arguments: { approvalId, approved: true } });
const uiSend = (chatId: string) => ({
  id: chatId,
  trigger: 'submit-message',
  messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
});
const uiApprove = (chatId: string, approval: { id: string; toolCallId: string }) => ({
  id: chatId,
  trigger: 'submit-message',
  messages: [
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: '/tool deploy {}' }] },
    {
      id: 'm1',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        {
          type: 'tool-deploy',
          toolCallId: approval.toolCallId,
          state: 'approval-responded',
          input: {},
          approval: { id: approval.id, approved: true },
        },
      ],
    },
  ],
});

/** The answer a row expects: its status, its `WWW-Authenticate` (`null`: none), and for MCP whether the tool's result is an error. */
interface Expected {
  status: number;
  challenge?: string | null;
  toolError?: boolean;
}

const UNAUTHORIZED: Expected = { status: 401, challenge: 'Bearer' };
const forbidden = (scope: string): Expected => ({
  status: 403,
  challenge: `Bearer error="insufficient_scope", scope="${scope}"`,
});

async function check(send: Send, name: string, call: Call, expected: Expected): Promise<void> {
  const response = await send(call);
  const text = await response.text();
  assert.equal(response.status, expected.status, `${name}: ${text.slice(0, 300)}`);
  if (expected.challenge !== undefined)
    assert.equal(response.headers.get('www-authenticate'), expected.challenge, `${name}: the challenge`);
  if (expected.toolError !== undefined) {
    const { result } = JSON.parse(text) as { result?: { isError?: boolean } };
    assert.equal(result?.isError === true, expected.toolError, `${name}: ${text.slice(0, 300)}`);
  }
}

/** Every surface × {no credential, without the group's scope, with it, another's session}, against `send`. */
async function runMatrix(send: Send): Promise<void> {
  const alice = { authorization: bearer(await token('alice', ALL)) };
  const bob = { authorization: bearer(await token('bob', ALL)) };
  const aliceWithout = async (scope: string) => ({ authorization: bearer(await token('alice', without(scope))) });
  /** A pending approval in a new session of alice's (a session waiting for one takes no other message). */
  const pending = async (sessionId: string) => {
    const response = await send({
      method: 'POST',
      path: '/agent',
      headers: alice,
      body: { message: '/tool deploy {}', sessionId },
    });
    assert.equal(response.status, 200, `alice's send to ${sessionId}`);
    const { approvals } = (await response.json()) as { approvals: { id: string; toolCallId: string }[] };
    return approvals[0]!;
  };
  const kept = await pending('alice-chat');

  // POST <base>: send.
  const post = (sessionId: string) => ({ method: 'POST', path: '/agent', body: { message: 'hi', sessionId } });
  await check(send, 'POST <base>, no credential', post('alice-new'), UNAUTHORIZED);
  await check(
    send,
    'POST <base>, without agent:chat',
    { ...post('alice-new'), headers: await aliceWithout('agent:chat') },
    forbidden('agent:chat'),
  );
  await check(send, 'POST <base>, with it', { ...post('alice-new'), headers: alice }, { status: 200, challenge: null });
  await check(
    send,
    "POST <base>, another's session",
    { ...post('alice-chat'), headers: bob },
    { status: 404, challenge: null },
  );

  // POST <base>/chat: send.
  const chat = (sessionId: string) => ({ method: 'POST', path: '/agent/chat', body: { message: 'hi', sessionId } });
  await check(send, 'POST /chat, no credential', chat('alice-new'), UNAUTHORIZED);
  await check(
    send,
    'POST /chat, without agent:chat',
    { ...chat('alice-new'), headers: await aliceWithout('agent:chat') },
    forbidden('agent:chat'),
  );
  await check(send, 'POST /chat, with it', { ...chat('alice-new'), headers: alice }, { status: 200, challenge: null });
  await check(
    send,
    "POST /chat, another's session",
    { ...chat('alice-chat'), headers: bob },
    { status: 404, challenge: null },
  );

  // GET <base>/chat/:id: read.
  const transcript = { method: 'GET', path: '/agent/chat/alice-chat' };
  await check(send, 'GET /chat/:id, no credential', transcript, UNAUTHORIZED);
  await check(
    send,
    'GET /chat/:id, without agent:read',
    { ...transcript, headers: await aliceWithout('agent:read') },
    forbidden('agent:read'),
  );
  await check(send, 'GET /chat/:id, with it', { ...transcript, headers: alice }, { status: 200, challenge: null });
  await check(
    send,
    "GET /chat/:id, another's session",
    { ...transcript, headers: bob },
    { status: 404, challenge: null },
  );

  // GET <base>/approvals?sessionId=: read.
  const approvals = { method: 'GET', path: '/agent/approvals?sessionId=alice-chat' };
  await check(send, 'GET /approvals, no credential', approvals, UNAUTHORIZED);
  await check(
    send,
    'GET /approvals, without agent:read',
    { ...approvals, headers: await aliceWithout('agent:read') },
    forbidden('agent:read'),
  );
  await check(send, 'GET /approvals, with it', { ...approvals, headers: alice }, { status: 200, challenge: null });
  await check(
    send,
    "GET /approvals, another's session",
    { ...approvals, headers: bob },
    { status: 404, challenge: null },
  );

  // POST <base>/approvals/:id: decide.
  const decide = (id: string) => ({ method: 'POST', path: `/agent/approvals/${id}`, body: { approved: true } });
  await check(send, 'POST /approvals/:id, no credential', decide(kept.id), UNAUTHORIZED);
  await check(
    send,
    'POST /approvals/:id, without agent:approve',
    { ...decide(kept.id), headers: await aliceWithout('agent:approve') },
    forbidden('agent:approve'),
  );
  await check(
    send,
    "POST /approvals/:id, another's session",
    { ...decide(kept.id), headers: bob },
    { status: 404, challenge: null },
  );
  await check(
    send,
    'POST /approvals/:id, with it',
    { ...decide((await pending('alice-decide')).id), headers: alice },
    { status: 200, challenge: null },
  );

  // GET <base>/sessions: sessions (the caller's own: another principal's are never listed).
  const sessions = { method: 'GET', path: '/agent/sessions' };
  await check(send, 'GET /sessions, no credential', sessions, UNAUTHORIZED);
  await check(
    send,
    'GET /sessions, without agent:sessions',
    { ...sessions, headers: await aliceWithout('agent:sessions') },
    forbidden('agent:sessions'),
  );
  await check(send, 'GET /sessions, with it', { ...sessions, headers: alice }, { status: 200, challenge: null });
  const listed = await send({ ...sessions, headers: bob });
  assert.equal(listed.status, 200);
  assert.deepEqual((await listed.json()).sessions, [], "GET /sessions, another's: alice's sessions are not bob's");

  // DELETE <base>/chat/:id: sessions.
  const remove = (id: string) => ({ method: 'DELETE', path: `/agent/chat/${id}` });
  await check(send, 'DELETE /chat/:id, no credential', remove('alice-new'), UNAUTHORIZED);
  await check(
    send,
    'DELETE /chat/:id, without agent:sessions',
    { ...remove('alice-new'), headers: await aliceWithout('agent:sessions') },
    forbidden('agent:sessions'),
  );
  await check(
    send,
    "DELETE /chat/:id, another's session",
    { ...remove('alice-chat'), headers: bob },
    { status: 404, challenge: null },
  );
  await check(
    send,
    'DELETE /chat/:id, with it',
    { ...remove('alice-new'), headers: alice },
    { status: 204, challenge: null },
  );

  // POST <base>/ui with a user message: send.
  const ui = (body: unknown) => ({ method: 'POST', path: '/agent/ui', body });
  await check(send, '/ui send, no credential', ui(uiSend('alice-ui')), UNAUTHORIZED);
  await check(
    send,
    '/ui send, without agent:chat',
    { ...ui(uiSend('alice-ui')), headers: await aliceWithout('agent:chat') },
    forbidden('agent:chat'),
  );
  await check(
    send,
    '/ui send, with it',
    { ...ui(uiSend('alice-ui')), headers: alice },
    { status: 200, challenge: null },
  );
  await check(
    send,
    "/ui send, another's session",
    { ...ui(uiSend('alice-chat')), headers: bob },
    { status: 404, challenge: null },
  );

  // POST <base>/ui answering an approval: decide, which needs agent:approve (agent:chat is not enough).
  await check(send, '/ui approval, no credential', ui(uiApprove('alice-chat', kept)), UNAUTHORIZED);
  await check(
    send,
    '/ui approval, without agent:approve',
    { ...ui(uiApprove('alice-chat', kept)), headers: await aliceWithout('agent:approve') },
    forbidden('agent:approve'),
  );
  await check(
    send,
    "/ui approval, another's session",
    { ...ui(uiApprove('alice-chat', kept)), headers: bob },
    { status: 404, challenge: null },
  );
  await check(
    send,
    '/ui approval, with it',
    { ...ui(uiApprove('alice-chat', kept)), headers: alice },
    { status: 200, challenge: null },
  );

  // MCP tools/call ask: the route's scope and send's, named together.
  const mcp = (body: unknown) => ({ method: 'POST', path: '/agent/mcp', body });
  await check(send, 'MCP ask, no credential', mcp(ask('alice-mcp')), UNAUTHORIZED);
  await check(
    send,
    'MCP ask, without agent:chat',
    { ...mcp(ask('alice-mcp')), headers: await aliceWithout('agent:chat') },
    forbidden('agent:mcp agent:chat'),
  );
  await check(
    send,
    'MCP ask, without agent:mcp',
    { ...mcp(ask('alice-mcp')), headers: await aliceWithout('agent:mcp') },
    forbidden('agent:mcp agent:chat'),
  );
  await check(
    send,
    'MCP ask, with it',
    { ...mcp(ask('alice-mcp')), headers: alice },
    { status: 200, challenge: null, toolError: false },
  );
  await check(
    send,
    "MCP ask, another's session",
    { ...mcp(ask('alice-chat')), headers: bob },
    { status: 200, challenge: null, toolError: true },
  );

  // MCP tools/call decide: the route's scope and decide's.
  const next = await pending('alice-mcp-decide');
  await check(send, 'MCP decide, no credential', mcp(decideTool(next.id)), UNAUTHORIZED);
  await check(
    send,
    'MCP decide, without agent:approve',
    { ...mcp(decideTool(next.id)), headers: await aliceWithout('agent:approve') },
    forbidden('agent:mcp agent:approve'),
  );
  await check(
    send,
    "MCP decide, another's session",
    { ...mcp(decideTool(next.id)), headers: bob },
    { status: 200, challenge: null, toolError: true },
  );
  await check(
    send,
    'MCP decide, with it',
    { ...mcp(decideTool(next.id)), headers: alice },
    { status: 200, challenge: null, toolError: false },
  );

  // MCP tools/call read: the route's scope and read's; a session not the caller's is not found, as GET /approvals answers.
  const readTool = rpc('tools/call', { name: 'read', arguments: { sessionId: 'alice-chat' } });
  await check(send, 'MCP read, no credential', mcp(readTool), UNAUTHORIZED);
  await check(
    send,
    'MCP read, without agent:read',
    { ...mcp(readTool), headers: await aliceWithout('agent:read') },
    forbidden('agent:mcp agent:read'),
  );
  await check(
    send,
    'MCP read, with it',
    { ...mcp(readTool), headers: alice },
    { status: 200, challenge: null, toolError: false },
  );
  await check(
    send,
    "MCP read, another's session",
    { ...mcp(readTool), headers: bob },
    { status: 200, challenge: null, toolError: true },
  );

  // MCP's other methods: the route's scope only.
  for (const method of ['initialize', 'tools/list', 'ping']) {
    const body = rpc(
      method,
      method === 'initialize'
        ? { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'matrix', version: '1' } }
        : undefined,
    );
    await check(send, `MCP ${method}, no credential`, mcp(body), UNAUTHORIZED);
    await check(
      send,
      `MCP ${method}, without agent:mcp`,
      { ...mcp(body), headers: await aliceWithout('agent:mcp') },
      forbidden('agent:mcp'),
    );
    await check(send, `MCP ${method}, with it`, { ...mcp(body), headers: alice }, { status: 200, challenge: null });
    await check(
      send,
      `MCP ${method}, another principal`,
      { ...mcp(body), headers: bob },
      { status: 200, challenge: null },
    );
  }
}

describe('one pipeline, every surface (design §25)', () => {
  test('the route handler: every surface × {no credential, without the scope, with it, another principal’s session}', async () => {
    const handler = matrixHandler(MATRIX_SECRET);
    await runMatrix((call) => handler(new Request(...toRequest(call))));
  });

  test('the same handler in workerd answers every row the same', async (t) => {
    const worker = await startWorker({
      entry: 'tests/helpers/workerd/matrix-worker.ts',
      bindings: { JWT_SECRET: MATRIX_SECRET },
    });
    t.after(() => worker.dispose());
    await runMatrix((call) => worker.fetch(...toRequest(call)));
  });
});

describe('the built cloudflare-worker target answers as agentHandler with the same options (design §25)', () => {
  let worker: RunningWorker;
  let handler: (request: Request) => Promise<Response>;
  const name = 'matrix-spec';
  before(async () => {
    const dir = writeDir(tempFolder({ after }), {
      'agent.ts':
        "import { createAgent, echoModel } from 'agentward';\nexport default createAgent({ name: 'matrix-spec', model: echoModel() });\n",
      'agent.json': JSON.stringify({ name, model: { provider: 'echo' } }),
      'agentward.json': JSON.stringify({ name, basePath: '/agent', mcp: true }),
    });
    const out = join(tempFolder({ after }), 'out');
    await build(dir, { target: 'cloudflare-worker', out, log: () => {} });
    worker = await startBuiltWorker(out, { AGENT_API_TOKEN: ENV_TOKEN });
    // The options the worker is made with: the declared agent (shared sessions, no tools), the AGENT_API_TOKEN entry, MCP.
    handler = agentHandler(createAgent({ name, instructions: '', model: echoModel() }), {
      basePath: '/agent',
      auth: apiToken(ENV_TOKEN),
      mcp: true,
    });
  });
  after(() => worker?.dispose());

  const token = { authorization: bearer(ENV_TOKEN) };
  // [surface, request, status without a credential, status with the token]
  const rows: [string, Call, number, number][] = [
    ['POST <base>', { method: 'POST', path: '/agent', body: { message: 'hi', sessionId: 's-1' } }, 401, 200],
    ['POST /chat', { method: 'POST', path: '/agent/chat', body: { message: 'hi', sessionId: 's-1' } }, 401, 200],
    ['GET /chat/:id', { method: 'GET', path: '/agent/chat/s-1' }, 401, 200],
    ['GET /approvals', { method: 'GET', path: '/agent/approvals?sessionId=s-1' }, 401, 200],
    ['POST /approvals/:id', { method: 'POST', path: '/agent/approvals/a-1', body: { approved: true } }, 401, 404],
    ['GET /sessions (owned agents only)', { method: 'GET', path: '/agent/sessions' }, 401, 404],
    ['DELETE /chat/:id (owned agents only)', { method: 'DELETE', path: '/agent/chat/s-1' }, 401, 404],
    ['/ui send', { method: 'POST', path: '/agent/ui', body: uiSend('s-2') }, 401, 200],
    [
      '/ui approval',
      { method: 'POST', path: '/agent/ui', body: uiApprove('s-2', { id: 'a-1', toolCallId: 'c-1' }) },
      401,
      404,
    ],
    ['MCP ask', { method: 'POST', path: '/agent/mcp', body: ask('s-3') }, 401, 200],
    [
      'MCP decide (no tool: a spec waits for nothing)',
      { method: 'POST', path: '/agent/mcp', body: decideTool('a-1') },
      401,
      200,
    ],
    ['MCP tools/list', { method: 'POST', path: '/agent/mcp', body: rpc('tools/list') }, 401, 200],
    ['GET /spec (not a route)', { method: 'GET', path: '/agent/spec' }, 401, 404],
    ['a path outside basePath', { method: 'GET', path: '/elsewhere' }, 401, 404],
    ['GET /health', { method: 'GET', path: '/agent/health' }, 200, 200],
  ];
  for (const [surface, call, anonymous, authorized] of rows) {
    test(`${surface}: ${anonymous} without a credential, ${authorized} with AGENT_API_TOKEN, as agentHandler answers`, async () => {
      for (const [headers, status] of [
        [{}, anonymous],
        [token, authorized],
      ] as const) {
        const fromWorker = await worker.fetch(...toRequest({ ...call, headers }));
        const fromHandler = await handler(new Request(...toRequest({ ...call, headers })));
        const [workerText, handlerText] = [await fromWorker.text(), await fromHandler.text()];
        assert.equal(fromWorker.status, status, workerText.slice(0, 300));
        assert.equal(fromHandler.status, status, handlerText.slice(0, 300));
        assert.equal(fromWorker.headers.get('www-authenticate'), fromHandler.headers.get('www-authenticate'));
        assert.equal(fromWorker.headers.get('content-type'), fromHandler.headers.get('content-type'));
        if (!fromWorker.headers.get('content-type')?.startsWith('text/event-stream'))
          assert.deepEqual(redact(workerText), redact(handlerText));
      }
    });
  }
});

/** A body with its random parts (session ids the server made, message ids) blanked. */
const redact = (text: string) => text.replace(/"(sessionId|id|messageId)":"[^"]*"/g, '"$1":"…"');
