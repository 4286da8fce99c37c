// MCP `read` (design §33, §36): the pending approvals a caller may decide, listed through the same
// code as `GET <base>/approvals`: the queue across sessions (limit, cursor) or one session's, with
// the read operation's scopes (and `scopes.approve` for the queue of others' approvals), ownership
// answering as an unknown session, `expired` shown and nothing decided, its record and its span.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentHandler } from '../../src/http/index.ts';
import type { AgentHandlerOptions } from '../../src/http/handler.ts';
import type { AuthFn, Principal } from '../../src/auth/index.ts';
import { createAgent, echoModel, memoryAuditLog, memoryStore } from '../../src/agent/index.ts';
import type { ChainedRecord, Model, Tool } from '../../src/agent/index.ts';
import { decodeBase64url, encodeBase64url } from '../../src/auth/jws/base64url.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { memoryTracer } from '../helpers/memory-tracer.ts';

const BASE = 'http://localhost/agent';
const DEPLOY = '/tool deploy {"env":"prod"}';

/** Accepts the principal a test names in `x-principal` (base64url of its JSON), claims and all. */
const asHeader: AuthFn = Object.assign(
  (request: Request) => {
    const named = request.headers.get('x-principal');
    return named === null ? null : (JSON.parse(new TextDecoder().decode(decodeBase64url(named)!)) as Principal);
  },
  { challenges: [{ scheme: 'Test' }] },
);

const user = (id: string, scope: string): Principal => ({
  id,
  type: 'user',
  authenticator: 'custom',
  claims: { sub: id, scope },
});
const ALL = 'agent:mcp agent:send agent:read agent:approve mcp:read';
const alice = user('alice', ALL);
const bob = user('bob', ALL);
/** Sends and reads over MCP, approves nothing. */
const carol = user('carol', 'agent:mcp agent:send agent:read mcp:read');
/** Approves, but lacks the read group. */
const erin = user('erin', 'agent:mcp agent:send agent:approve mcp:read');
/** Lacks the read tool's own scope. */
const frank = user('frank', 'agent:mcp agent:send agent:read agent:approve');

function setup(approvals: AgentHandlerOptions['approvals'], more: AgentHandlerOptions = {}) {
  const deployed: unknown[] = [];
  const deploy: Tool = {
    name: 'deploy',
    description: 'Deploys',
    parameters: { type: 'object' },
    needsApproval: true,
    execute: (a) => (deployed.push(a), 'ok'),
  };
  const data = new Map<string, string>();
  const agent = createAgent({
    name: 'web',
    model: echoModel(),
    tools: [deploy],
    store: memoryStore(data),
    sessions: 'owned',
  });
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: asHeader,
    scopes: { mcp: ['agent:mcp'], send: ['agent:send'], read: ['agent:read'], approve: ['agent:approve'] },
    mcp: { scopes: { read: ['mcp:read'] } },
    ...(approvals !== undefined && { approvals }),
    ...more,
  });
  return { agent, handler, deployed, data };
}

const as = (principal: Principal) => ({
  'x-principal': encodeBase64url(new TextEncoder().encode(JSON.stringify(principal))),
});
const get = (path: string, principal: Principal) => new Request(BASE + path, { headers: as(principal) });
const post = (path: string, body: unknown, principal: Principal) =>
  new Request(BASE + path, {
    method: 'POST',
    headers: { ...as(principal), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
type Handler = (request: Request) => Promise<Response>;

async function paused(handler: Handler, sessionId: string, owner: Principal) {
  const sent = await handler(post('', { message: DEPLOY, sessionId }, owner));
  assert.equal(sent.status, 200, await sent.clone().text());
  return ((await sent.json()) as { approvals: { id: string }[] }).approvals[0]!.id;
}

interface ToolAnswer {
  status: number;
  challenge: string | null;
  body: {
    id?: number;
    error?: { code: number; message: string };
    result?: {
      isError: boolean;
      content: { type: string; text: string }[];
      structuredContent?: Record<string, unknown>;
    };
  };
}

let ids = 0;
async function mcpCall(handler: Handler, principal: Principal, name: string, args: unknown): Promise<ToolAnswer> {
  const reply = await handler(
    post('/mcp', { jsonrpc: '2.0', id: ++ids, method: 'tools/call', params: { name, arguments: args } }, principal),
  );
  return { status: reply.status, challenge: reply.headers.get('www-authenticate'), body: await reply.json() };
}
const read = (handler: Handler, principal: Principal, args: Record<string, unknown> = {}) =>
  mcpCall(handler, principal, 'read', args);

/** A successful read's structured content, checked to be what its text block says too. */
function listed(answer: ToolAnswer): Record<string, unknown> {
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const result = answer.body.result;
  assert.equal(result?.isError, false, JSON.stringify(answer.body));
  assert.deepEqual(JSON.parse(result!.content[0]!.text), result!.structuredContent);
  return result!.structuredContent!;
}

/** Two minutes pass for a pending approval: its checkpoint's createdAt moved back in the memory store's data. */
function age(data: Map<string, string>, approvalId: string): void {
  const key = `checkpoint:${approvalId}`;
  const checkpoint = JSON.parse(data.get(key)!) as { createdAt: string };
  checkpoint.createdAt = new Date(Date.now() - 120_000).toISOString();
  data.set(key, JSON.stringify(checkpoint));
}

test('tools/list lists read beside decide, with a closed input schema and an outputSchema; not without approvals', async () => {
  const { handler } = setup(undefined);
  const reply = await handler(post('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, alice));
  type Schema = { properties: Record<string, { description?: string }>; required: string[] };
  type Listed = { name: string; description: string; inputSchema: Schema; outputSchema: Schema };
  const { tools } = ((await reply.json()) as { result: { tools: Listed[] } }).result;
  assert.deepEqual(
    tools.map((tool) => tool.name),
    ['ask', 'decide', 'read'],
  );
  const tool = tools[2]!;
  assert.match(String(tool.description), /^Lists pending approvals you may decide/);
  assert.deepEqual(tool.inputSchema, {
    type: 'object',
    properties: {
      sessionId: { type: 'string', description: tool.inputSchema.properties.sessionId!.description },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: 100,
        description: tool.inputSchema.properties.limit!.description,
      },
      cursor: { type: 'string', description: tool.inputSchema.properties.cursor!.description },
    },
    required: [],
    additionalProperties: false,
  });
  assert.deepEqual(tool.outputSchema.required, ['approvals']);
  assert.deepEqual(Object.keys(tool.outputSchema.properties), ['approvals', 'nextCursor']);
  // An agent none of whose runs can wait for an approval offers neither decide nor read.
  const plain = agentHandler(createAgent({ name: 'plain', model: echoModel() }), { mcp: true });
  const call = await plain(
    new Request(`http://localhost/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read', arguments: {} } }),
    }),
  );
  assert.equal(((await call.json()) as { error: { code: number } }).error.code, -32602);
});

test("read's scopes: the read group, scopes.mcp and mcp.scopes.read; the queue of others' approvals needs scopes.approve too, one 403 naming the union", async () => {
  const { handler } = setup({ by: 'approvers' });
  await paused(handler, 'carol-1', carol);
  const queueUnion = 'agent:mcp agent:read agent:approve mcp:read';
  for (const who of [carol, erin, frank]) {
    const refused = await read(handler, who);
    assert.equal(refused.status, 403, who.id);
    assert.match(refused.challenge ?? '', new RegExp(`error="insufficient_scope", scope="${queueUnion}"`), who.id);
  }
  // A session's own approvals need no approve scope; the union then names no approve group.
  assert.equal((listed(await read(handler, carol, { sessionId: 'carol-1' })).approvals as unknown[]).length, 1);
  const withSession = await read(handler, frank, { sessionId: 'carol-1' });
  assert.equal(withSession.status, 403);
  assert.match(withSession.challenge ?? '', /scope="agent:mcp agent:read mcp:read"/);
  // Under 'owner' the queue is the caller's own sessions': no approve scope either.
  const owner = setup(undefined);
  await paused(owner.handler, 'carol-2', carol);
  const own = listed(await read(owner.handler, carol));
  assert.deepEqual(
    (own.approvals as { sessionId: string }[]).map((a) => a.sessionId),
    ['carol-2'],
  );
});

test("by 'approvers': read pages the queue across sessions exactly as GET <base>/approvals does, then decide acts on it", async () => {
  const { handler, deployed } = setup({ by: 'approvers' });
  const approvalIds: string[] = [];
  for (let i = 0; i < 5; i++) {
    approvalIds.push(await paused(handler, `q-${i}`, i % 2 === 0 ? alice : carol));
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  const viaMcp: Record<string, unknown>[] = [];
  const viaHttp: unknown[] = [];
  let cursor: string | null = null;
  let httpCursor: string | null = null;
  do {
    const page = listed(await read(handler, bob, { limit: 2, ...(cursor !== null && { cursor }) }));
    viaMcp.push(page);
    cursor = page.nextCursor as string | null;
    const path: string = `/approvals?limit=2${httpCursor === null ? '' : `&cursor=${encodeURIComponent(httpCursor)}`}`;
    const httpPage = (await (await handler(get(path, bob))).json()) as { nextCursor: string | null };
    viaHttp.push(httpPage);
    httpCursor = httpPage.nextCursor;
  } while (cursor !== null);
  assert.deepEqual(viaMcp, viaHttp);
  assert.equal(viaMcp.length, 3);
  assert.deepEqual(
    viaMcp.flatMap((page) => (page.approvals as { id: string }[]).map((a) => a.id)),
    approvalIds,
  );
  const [first] = viaMcp[0]!.approvals as Record<string, unknown>[];
  assert.deepEqual(
    { ...first, createdAt: typeof first!.createdAt },
    {
      id: approvalIds[0],
      sessionId: 'q-0',
      tool: 'deploy',
      arguments: { env: 'prod' },
      requester: { id: 'alice', authenticator: 'custom' },
      createdAt: 'string',
    },
  );
  // What read listed is what decide takes.
  const decided = await mcpCall(handler, bob, 'decide', { approvalId: approvalIds[1], approved: true });
  assert.equal(decided.body.result?.isError, false, JSON.stringify(decided.body));
  assert.deepEqual(deployed, [{ env: 'prod' }]);
  assert.equal((listed(await read(handler, bob)).approvals as unknown[]).length, 4);
});

test("by 'others' and per-tool scopes: read lists only what the caller may decide, never its own runs", async () => {
  const { handler } = setup({ by: 'others', scopes: { deploy: ['ops:approve'] } });
  const approvalId = await paused(handler, 'alice-9', alice);
  const ids = async (who: Principal) =>
    (listed(await read(handler, who)).approvals as { id: string }[]).map((approval) => approval.id);
  assert.deepEqual(await ids(alice), [], "the run's starter is never its own second pair of eyes");
  assert.deepEqual(await ids(user('dave', ALL)), [], 'lacks ops:approve');
  assert.deepEqual(await ids(user('dora', `${ALL} ops:approve`)), [approvalId]);
});

test("with sessionId: that session's pending approvals as the HTTP route lists them; another's session under 'owned' is not found", async () => {
  const { handler } = setup(undefined);
  const approvalId = await paused(handler, 'alice-1', alice);
  const own = listed(await read(handler, alice, { sessionId: 'alice-1' }));
  const http = await (await handler(get('/approvals?sessionId=alice-1', alice))).json();
  assert.deepEqual(own, http);
  assert.deepEqual(own, {
    approvals: [{ id: approvalId, tool: 'deploy', arguments: { env: 'prod' }, toolCallId: 'call_1_0' }],
  });
  // Bob holds every scope, but 'owner' keeps Alice's session hers: the answer an unknown session gets.
  const stranger = await read(handler, bob, { sessionId: 'alice-1' });
  const unknown = await read(handler, bob, { sessionId: 'nobody-has-this' });
  assert.equal(stranger.body.result?.isError, true);
  assert.deepEqual(stranger.body.result, unknown.body.result);
  assert.deepEqual(stranger.body.result?.content, [{ type: 'text', text: 'Session not found' }]);
  assert.equal((await handler(get('/approvals?sessionId=alice-1', bob))).status, 404);
  // Bob's own queue under 'owner' does not hold Alice's approval either.
  assert.deepEqual(listed(await read(handler, bob)), { approvals: [], nextCursor: null });
  // Under 'approvers' an approver reads it, as over HTTP.
  const approvers = setup({ by: 'approvers' });
  await paused(approvers.handler, 'alice-2', alice);
  assert.equal((listed(await read(approvers.handler, bob, { sessionId: 'alice-2' })).approvals as unknown[]).length, 1);
});

test('approvals.ttlSec: read shows an old approval expired, in the queue and in its session, and decides nothing', async () => {
  const { handler, data, deployed, agent } = setup({ by: 'approvers', ttlSec: 60 });
  const old = await paused(handler, 'alice-3', alice);
  await paused(handler, 'alice-4', alice);
  age(data, old);
  for (let i = 0; i < 2; i++) {
    const queue = listed(await read(handler, bob));
    assert.deepEqual(
      (queue.approvals as { status: string }[]).map((a) => a.status),
      ['expired', 'pending'],
    );
    assert.deepEqual(queue, await (await handler(get('/approvals', bob))).json());
    const session = listed(await read(handler, bob, { sessionId: 'alice-3' }));
    assert.deepEqual(
      (session.approvals as { status: string }[]).map((a) => a.status),
      ['expired'],
    );
  }
  assert.deepEqual(deployed, []);
  assert.deepEqual((await agent.transcript('alice-3')).audit, [], 'a read decides nothing');
});

test("read's arguments are checked: a fault is a tool error naming it", async () => {
  const { handler } = setup({ by: 'approvers' });
  const faults: [Record<string, unknown>, RegExp][] = [
    [{ limit: 0 }, /^limit must be an integer from 1 to 100$/],
    [{ limit: 101 }, /^limit must be an integer from 1 to 100$/],
    [{ limit: 1.5 }, /^limit must be an integer from 1 to 100$/],
    [{ limit: '2' }, /^limit must be an integer from 1 to 100$/],
    [{ cursor: 'nope' }, /^cursor must be the nextCursor of a previous page$/],
    [{ cursor: '' }, /^cursor must be a non-empty string$/],
    [{ sessionId: 7 }, /^sessionId must be a non-empty string$/],
    [{ approvalId: 'x' }, /^unknown argument "approvalId"; the arguments are sessionId, limit, cursor$/],
    [{ sessionId: 's', limit: 2 }, /^limit and cursor page the queue/],
  ];
  for (const [args, message] of faults) {
    const answer = await read(handler, bob, args);
    assert.equal(answer.body.result?.isError, true, JSON.stringify(args));
    assert.match(answer.body.result!.content[0]!.text, message, JSON.stringify(args));
  }
});

test('an agent tool named read collides with the built-in: an error at creation; mcp.scopes takes read', () => {
  const readTool: Tool = {
    name: 'read',
    description: 'Reads a file',
    parameters: { type: 'object' },
    execute: () => 'x',
  };
  const lookup: Tool = { ...readTool, name: 'lookup' };
  const make = (mcp: unknown) => () =>
    agentHandler(createAgent({ name: 'ops', model: echoModel(), tools: [readTool, lookup] }), {
      mcp: mcp as never,
      auth: () => ({ type: 'user', id: 'x', authenticator: 'test' }),
    });
  assertConfigError(make({ tools: ['read'] }), 'agentHandler()', 'mcp.tools');
  assertConfigError(make({ tools: 'agent' }), 'agentHandler()', 'mcp.tools');
  assert.throws(make({ tools: 'agent' }), /the agent's tool "read" takes the name of the MCP route's own tool/);
  make({ tools: ['lookup'], scopes: { read: ['agent:read'] } })();
  make({ scopes: { read: ['agent:read'] } })();
});

test('a tools function returning a tool named read: the built-in keeps the name, that one is not offered', async () => {
  const readTool: Tool = {
    name: 'read',
    description: 'Reads a file',
    parameters: { type: 'object' },
    execute: () => 'x',
  };
  const agent = createAgent({ name: 'ops', model: echoModel(), tools: () => [readTool] });
  const handler = agentHandler(agent, { mcp: { tools: 'agent' } });
  const reply = await handler(
    new Request('http://localhost/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    }),
  );
  const { tools } = ((await reply.json()) as { result: { tools: { name: string; description: string }[] } }).result;
  assert.deepEqual(
    tools.map((tool) => tool.name),
    ['ask', 'decide', 'read'],
  );
  assert.match(tools[2]!.description, /^Lists pending approvals/);
});

test('read writes its record like every MCP call (audit.required: 503 before it), and is an execute_tool span', async () => {
  const log = memoryAuditLog();
  const tracer = memoryTracer();
  const { handler } = setup(
    { by: 'approvers' },
    { audit: { log, required: true }, telemetry: { tracer: tracer.tracer } },
  );
  await paused(handler, 'alice-5', alice);
  listed(await read(handler, bob));
  const stranger = setup(undefined, { audit: { log, required: true } });
  await paused(stranger.handler, 'alice-6', alice);
  assert.equal((await read(stranger.handler, bob, { sessionId: 'alice-6' })).body.result?.isError, true);
  let records: ChainedRecord[] = [];
  for (let i = 0; i < 50 && records.filter((r) => r.tool === 'read').length < 3; i++) {
    records = [];
    for await (const record of log.read()) records.push(record);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const reads = records.filter((r) => r.tool === 'read');
  assert.deepEqual(
    reads.map((r) => [r.surface, r.operations, r.outcome, (r.caller as { id?: string } | undefined)?.id, r.sessionId]),
    [
      ['mcp', ['read'], 'allowed', 'bob', undefined],
      ['mcp', ['read'], 'allowed', 'bob', 'alice-6'],
      ['mcp', ['read'], 'refused', 'bob', 'alice-6'],
    ],
  );
  assert.equal(reads[2]!.reason, 'not-found');
  const span = tracer.spans().find((each) => each.name === 'tools/call read');
  assert.equal(span?.attributes['gen_ai.tool.name'], 'read');
  assert.equal(span?.attributes['gen_ai.operation.name'], 'execute_tool');
  // A record that cannot be written: 503 answering the request's id, and no approval shown.
  const failing = {
    append: () => Promise.reject(new Error('disk full')),
    read: log.read,
    head: log.head,
  };
  const errors: unknown[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void errors.push(args);
  try {
    const unwritten = setup({ by: 'approvers' }, { audit: { log: failing, required: true } });
    const answer = await read(unwritten.handler, bob);
    assert.equal(answer.status, 503);
    assert.deepEqual(answer.body.error, { code: -32001, message: 'Service Unavailable', data: { retryAfter: 5 } });
    assert.equal(answer.body.result, undefined);
  } finally {
    console.error = original;
  }
});

test('a read never runs the model: limits.tokens, once spent, refuses an MCP ask but not a read', async () => {
  // A model that reports spending more than the window holds: after one turn the window is spent.
  const spender: Model = { generate: async () => ({ text: 'ok', usage: { inputTokens: 5000, outputTokens: 0 } }) };
  const agent = createAgent({ name: 'web', model: spender, tools: () => [], sessions: 'owned' });
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: asHeader,
    mcp: true,
    limits: { tokens: { limit: 1000, windowSec: 60 } },
  });
  assert.equal((await mcpCall(handler, alice, 'ask', { message: 'hi' })).body.result?.isError, false);
  const ask = await mcpCall(handler, alice, 'ask', { message: 'again' });
  assert.equal(ask.status, 429, JSON.stringify(ask.body));
  assert.deepEqual(listed(await read(handler, alice)), { approvals: [], nextCursor: null });
});
