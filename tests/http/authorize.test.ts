// One decision (design §32): authorize() on every surface with the accepting entry's grant as
// data. An entry's scopeImplies holds wherever its scopes are checked; the entry's own 403 on MCP
// `decide` and a `/ui` approval waits for the operation and names the whole union; the audit
// record, onRefused and the span agree, from one source.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiToken, jwt } from '../../src/auth/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import type { AgentHandlerOptions } from '../../src/http/handler.ts';
import type { AuditRecord } from '../../src/index.ts';
import { authorize } from '../../src/http/authorize.ts';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import { DEPLOY_MESSAGE, pausedSession, principalAgent } from '../helpers/http-agent.ts';
import { AUDIENCE, SECRET, hmacSigner, signToken } from '../helpers/jwt.ts';
import { memoryTracer } from '../helpers/memory-tracer.ts';

const BASE = 'https://agent.example/agent';
const API_TOKEN = 'an-audit-api-token-0123456789';

async function token(scope: string, sub = 'ada'): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub, aud: AUDIENCE, iss: 'https://id.example', iat: now, exp: now + 600, scope };
  return `Bearer ${await signToken({ alg: 'HS256', typ: 'JWT' }, claims, await hmacSigner(SECRET))}`;
}

const post = (handler: (request: Request) => Promise<Response>, path: string, authorization: string, body: unknown) =>
  handler(
    new Request(`${BASE}${path}`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );

const scopeOf = (response: Response) => /scope="([^"]*)"/.exec(response.headers.get('www-authenticate') ?? '')?.[1];

function handlerWith(
  options: AgentHandlerOptions,
  entry: Parameters<typeof jwt>[0] extends infer O ? Partial<O> : never,
) {
  const made = principalAgent();
  const auth = jwt({ secret: SECRET, audience: AUDIENCE, ...entry });
  return { ...made, handler: agentHandler(made.agent, { basePath: '/agent', auth, ...options }) };
}

test("an entry's scopeImplies holds where the handler checks that entry's scopes again", async () => {
  const { handler } = handlerWith(
    { scopes: { send: ['agent:admin'] } },
    { scopes: ['agent:chat'], scopeImplies: { 'agent:admin': ['agent:chat'] } },
  );
  // agent:admin implies the entry's agent:chat, and is the send group's own.
  const sent = await post(handler, '', await token('agent:admin'), { message: 'hi' });
  assert.equal(sent.status, 200, await sent.clone().text());
  const refused = await post(handler, '', await token('agent:other'), { message: 'hi' });
  assert.equal(refused.status, 403);
  assert.equal(scopeOf(refused), 'agent:chat agent:admin');
});

test("the entry's own 403 waits for the operation: MCP decide and a /ui approval name the whole union in one challenge", async () => {
  const { agent, handler, deployed } = handlerWith(
    { scopes: { approve: ['agent:approve'] }, mcp: true },
    { scopes: ['agent:chat'] },
  );
  const { approvals } = await pausedSession(agent, 'union');
  const approvalId = approvals[0]!.id;
  const approver = await token('agent:approve');
  const decide = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'decide', arguments: { approvalId, approved: true } },
  };
  const mcp = await post(handler, '/mcp', approver, decide);
  assert.equal(mcp.status, 403);
  assert.equal(scopeOf(mcp), 'agent:chat agent:approve');
  const ui = await post(handler, '/ui', approver, {
    id: 'union',
    trigger: 'submit-message',
    messages: [
      { id: 'm0', role: 'user', parts: [{ type: 'text', text: DEPLOY_MESSAGE }] },
      {
        id: 'm1',
        role: 'assistant',
        parts: [
          {
            type: 'tool-deploy',
            toolCallId: 'call-1',
            state: 'approval-responded',
            input: { env: 'prod' },
            approval: { id: approvalId, approved: true },
          },
        ],
      },
    ],
  });
  assert.equal(ui.status, 403);
  assert.equal(scopeOf(ui), 'agent:chat agent:approve');
  const http = await post(handler, `/approvals/${approvalId}`, approver, { approved: true });
  assert.equal(scopeOf(http), 'agent:chat agent:approve');
  assert.deepEqual(deployed, []);
});

test('authorize(): 405 for no operation, 403 with the union, 404 for a session not the caller’s, else allow', () => {
  const principal = { id: 'ada', type: 'user', authenticator: 'jwt', claims: { scope: 'a' } } as const;
  const grant = { entry: 'jwt', scopes: ['a'] };
  const config = { groups: { approve: ['b'] }, tools: {} };
  const base = { surface: 'http', principal, grant, config } as const;
  assert.deepEqual(authorize({ ...base, operations: undefined, methods: ['POST'] }), {
    allow: false,
    status: 405,
    reason: 'method',
    allowed: ['POST'],
  });
  assert.deepEqual(authorize({ ...base, operations: ['decide'] }), {
    allow: false,
    status: 403,
    reason: 'scope',
    scopes: ['a', 'b'],
  });
  assert.equal(authorize({ ...base, operations: ['send'] }).allow, true);
  const session = { mode: 'owned', owner: ['jwt', null, 'bob'] } as const;
  assert.deepEqual(authorize({ ...base, operations: ['send'], session }), {
    allow: false,
    status: 404,
    reason: 'not-found',
    missing: 'session',
  });
  assert.equal(
    authorize({ ...base, operations: ['send'], session: { ...session, owner: ['jwt', null, 'ada'] } }).allow,
    true,
  );
});

test('audit: one record per request past the guards, allowed or refused, never a token; it agrees with onRefused and the span', async () => {
  const records: AuditRecord[] = [];
  const heard: unknown[] = [];
  const otel = memoryTracer();
  const agent = createAgent({ name: 'audited', model: echoModel(), sessions: 'owned' });
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: apiToken(API_TOKEN, { id: 'ci' }),
    onRefused: (refusal) => heard.push(refusal),
    telemetry: { tracer: otel.tracer },
    audit: (record) => void records.push(record),
  });
  const bad = `Bearer ${API_TOKEN.replace('audit', 'other')}`;
  const refused = await post(handler, '', bad, { message: 'hi' });
  assert.equal(refused.status, 401);
  const allowed = await post(handler, '', `Bearer ${API_TOKEN}`, { message: 'hi', sessionId: 'kept' });
  assert.equal(allowed.status, 200);
  const wrongMethod = await handler(
    new Request(`${BASE}/sessions`, { method: 'PUT', headers: { authorization: `Bearer ${API_TOKEN}` } }),
  );
  assert.equal(wrongMethod.status, 405);
  await handler(new Request(`${BASE}/health`));
  assert.equal(records.length, 3, 'health is before the guards: no record');
  const [first, second, third] = records;
  assert.equal(first!.outcome, 'refused');
  assert.equal(first!.status, 401);
  assert.equal(first!.reason, 'mismatch');
  assert.equal(first!.entry, 'apiToken');
  assert.equal(first!.caller, undefined);
  assert.equal(first!.surface, 'http');
  assert.deepEqual(heard, [{ entry: first!.entry, reason: first!.reason }]);
  assert.equal(second!.outcome, 'allowed');
  assert.equal(second!.status, 200);
  assert.deepEqual(second!.operations, ['send']);
  assert.equal(second!.sessionId, 'kept');
  assert.deepEqual(second!.caller, { tenant: '', issuer: '', authenticator: 'api-token', id: 'ci', type: 'service' });
  assert.equal(third!.reason, 'method');
  assert.equal(third!.status, 405);
  assert.match(first!.requestId, /^[0-9a-f-]{36}$/);
  assert.notEqual(first!.requestId, second!.requestId);
  assert.ok(Object.isFrozen(first));
  const spans = otel.spans();
  const refusedSpan = spans.find((span) => span.attributes['http.response.status_code'] === 401)!;
  assert.equal(refusedSpan.attributes['agentward.auth.entry'], first!.entry);
  assert.equal(refusedSpan.attributes['agentward.auth.refusal_reason'], first!.reason);
  const allowedSpan = spans.find((span) => span.attributes['http.response.status_code'] === 200)!;
  assert.equal(allowedSpan.attributes['agentward.auth.authenticator'], second!.caller!.authenticator);
  assert.equal(allowedSpan.attributes['enduser.id'], second!.caller!.id);
  const text = JSON.stringify(records);
  assert.ok(!text.includes(API_TOKEN) && !text.includes(bad.slice(7)), 'no token in any record');
});

test('audit: a throwing or rejecting function never changes the answer, and is reported at most once a minute', async () => {
  const errors: unknown[][] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void errors.push(args);
  try {
    for (const audit of [
      () => {
        throw new Error('audit store down');
      },
      () => Promise.reject(new Error('audit store down')),
    ]) {
      errors.length = 0;
      const agent = createAgent({ name: 'a', model: echoModel() });
      const handler = agentHandler(agent, { basePath: '/agent', auth: apiToken(API_TOKEN), audit });
      for (let i = 0; i < 3; i++) {
        const response = await post(handler, '', `Bearer ${API_TOKEN}`, { message: 'hi' });
        assert.equal(response.status, 200);
        assert.equal((await post(handler, '', 'Bearer wrong-token-0123456789', { message: 'hi' })).status, 401);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(errors.length, 1, 'one report for six failures');
      assert.match(String(errors[0]![0]), /audit log failed/);
    }
  } finally {
    console.error = original;
  }
});

test('audit: the option is closed; required and recordArguments are booleans', () => {
  const agent = createAgent({ name: 'a', model: echoModel() });
  const auth = apiToken(API_TOKEN);
  assert.throws(() => agentHandler(agent, { auth, audit: 'yes' as never }), /audit must be a function/);
  assert.throws(() => agentHandler(agent, { auth, audit: { log: () => {}, requird: true } as never }), /requird/);
  assert.throws(() => agentHandler(agent, { auth, audit: { log: () => {}, required: 'yes' as never } }), /required/);
  assert.throws(() => agentHandler(agent, { auth, audit: { log: {} as never } }), /audit must be a function/);
  agentHandler(agent, { auth, audit: { log: () => {}, required: true, recordArguments: true } });
  agentHandler(agent, { auth, audit: { log: () => {} } });
});

test('audit: a 403 names the scopes needed, the approval and the caller’s key', async () => {
  const records: AuditRecord[] = [];
  const { agent, handler } = (() => {
    const made = principalAgent();
    return {
      ...made,
      handler: agentHandler(made.agent, {
        basePath: '/agent',
        auth: jwt({ secret: SECRET, audience: AUDIENCE, scopes: ['agent:chat'] }),
        scopes: { approve: ['agent:approve'] },
        audit: (record) => void records.push(record),
      }),
    };
  })();
  const { approvals } = await pausedSession(agent, 'audited');
  const refused = await post(handler, `/approvals/${approvals[0]!.id}`, await token('agent:chat'), { approved: true });
  assert.equal(refused.status, 403);
  const [record] = records;
  assert.equal(record!.reason, 'scope');
  assert.equal(record!.approvalId, approvals[0]!.id);
  assert.deepEqual(record!.scopes, ['agent:chat', 'agent:approve']);
  assert.deepEqual(record!.operations, ['decide']);
  assert.deepEqual(record!.caller, {
    tenant: '',
    issuer: 'https://id.example',
    authenticator: 'jwt',
    id: 'ada',
    type: 'user',
  });
});

test('audit: an MCP tools/call record names its surface, tool and approval', async () => {
  const records: AuditRecord[] = [];
  const made = principalAgent();
  const handler = agentHandler(made.agent, {
    basePath: '/agent',
    auth: jwt({ secret: SECRET, audience: AUDIENCE }),
    scopes: { approve: ['agent:approve'] },
    mcp: true,
    audit: (record) => void records.push(record),
  });
  const { approvals } = await pausedSession(made.agent, 'mcp-audited');
  const approvalId = approvals[0]!.id;
  const call = {
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'decide', arguments: { approvalId, approved: true } },
  };
  const refused = await post(handler, '/mcp', await token('agent:chat'), call);
  assert.equal(refused.status, 403);
  assert.deepEqual(
    { ...records[0], time: undefined, requestId: undefined },
    {
      time: undefined,
      requestId: undefined,
      surface: 'mcp',
      operations: ['decide'],
      outcome: 'refused',
      status: 403,
      reason: 'scope',
      entry: 'jwt',
      caller: { tenant: '', issuer: 'https://id.example', authenticator: 'jwt', id: 'ada', type: 'user' },
      approvalId,
      tool: 'decide',
      scopes: ['agent:approve'],
    },
  );
});
