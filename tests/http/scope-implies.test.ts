// Scope hierarchies on the handler (design §29; MCP 2026-07-28: servers account for them):
// `scopeImplies` makes a scope held grant every scope it implies, transitively, for `scopes` and
// `mcp.scopes`; challenges still name the scopes as configured; a cycle or a malformed map is an
// error at creation. On Node, Bun and Deno.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { principalAgent } from '../helpers/http-agent.ts';
import { AUDIENCE, NOW, SECRET, claims, hmacSigner, signToken } from '../helpers/jwt.ts';

const auth = () => jwtAt({ secret: SECRET, audience: AUDIENCE }, () => NOW);
const token = async (scope: string) => signToken({ alg: 'HS256' }, claims({ scope }), await hmacSigner(SECRET));
const IMPLIES = { 'agent:owner': ['agent:admin'], 'agent:admin': ['agent:chat', 'agent:approve'] };
type Handler = (request: Request) => Promise<Response>;

const send = async (handler: Handler, scope: string) =>
  handler(
    new Request('https://agent.example.com/agent', {
      method: 'POST',
      headers: { authorization: `Bearer ${await token(scope)}`, 'content-type': 'application/json' },
      body: '{"message":"hi"}',
    }),
  );
const approvals = async (handler: Handler, scope: string) =>
  handler(
    new Request('https://agent.example.com/agent/approvals/nope', {
      method: 'POST',
      headers: { authorization: `Bearer ${await token(scope)}`, 'content-type': 'application/json' },
      body: '{"approved":true}',
    }),
  );

test('scopeImplies: a held scope grants what it implies, transitively; the challenge still names the configured scopes', async () => {
  const handler = agentHandler(createAgent({ name: 'a', model: echoModel() }), {
    basePath: '/agent',
    auth: auth(),
    scopes: { send: ['agent:chat'], approve: ['agent:approve'] },
    scopeImplies: IMPLIES,
  });
  for (const scope of ['agent:chat', 'agent:admin', 'agent:owner', 'other agent:owner'])
    assert.equal((await send(handler, scope)).status, 200, scope);
  // Past the scope check, an unknown approval is 404: the scope was granted.
  for (const scope of ['agent:admin', 'agent:owner'])
    assert.equal((await approvals(handler, scope)).status, 404, scope);
  const refused = await approvals(handler, 'agent:chat');
  assert.equal(refused.status, 403);
  assert.equal(refused.headers.get('www-authenticate'), 'Bearer error="insufficient_scope", scope="agent:approve"');
  assert.equal((await send(handler, 'agent:approve')).status, 403, 'nothing implies upwards');
  // Without scopeImplies, the same admin token lacks agent:chat.
  const plain = agentHandler(createAgent({ name: 'a', model: echoModel() }), {
    basePath: '/agent',
    auth: auth(),
    scopes: { send: ['agent:chat'] },
  });
  assert.equal((await send(plain, 'agent:admin')).status, 403);
});

test("scopeImplies applies to mcp.scopes: a tool's scopes are granted by a scope that implies them", async () => {
  const { agent } = principalAgent();
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: auth(),
    mcp: { scopes: { ask: ['agent:chat'], decide: ['agent:approve'] } },
    scopeImplies: IMPLIES,
  });
  const call = async (scope: string, name: string, args: Record<string, unknown>) =>
    handler(
      new Request('https://agent.example.com/agent/mcp', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await token(scope)}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      }),
    );
  assert.equal((await call('agent:owner', 'ask', { message: 'hi' })).status, 200);
  assert.equal((await call('agent:admin', 'decide', { approvalId: 'x', approved: true })).status, 200);
  const refused = await call('agent:chat', 'decide', { approvalId: 'x', approved: true });
  assert.equal(refused.status, 403);
  assert.match(refused.headers.get('www-authenticate')!, /scope="agent:approve"/);
});

test('scopeImplies is checked at creation: an object of scope tokens to non-empty lists, no cycle, and scopes to apply to', () => {
  const make =
    (scopeImplies: unknown, extra: Record<string, unknown> = { scopes: { send: ['agent:chat'] } }) =>
    () =>
      agentHandler(createAgent({ name: 'a', model: echoModel() }), {
        auth: auth(),
        ...extra,
        scopeImplies: scopeImplies as never,
      });
  assertConfigError(make({ a: ['b'], b: ['c'], c: ['a'] }), 'agentHandler()', 'cycle: a → b → c → a');
  assertConfigError(make({ 'agent:admin': ['agent:admin'] }), 'agentHandler()', 'cycle: agent:admin → agent:admin');
  assertConfigError(make({ x: ['a'], a: ['b'], b: ['a'] }), 'agentHandler()', 'cycle');
  for (const bad of [[], 'agent:admin', {}, { a: [] }, { a: 'b' }, { 'a b': ['c'] }, { a: ['b c'] }, { a: [1] }])
    assertConfigError(make(bad), 'agentHandler()', 'scopeImplies');
  assertConfigError(make({ a: ['b'] }, {}), 'agentHandler()', 'scopeImplies needs scopes or mcp.scopes');
  assertConfigError(make({ a: ['b'] }, { scopes: { send: ['a'] }, scopeImlies: {} }), 'agentHandler()', 'scopeImplies');
  // A diamond is no cycle.
  assert.doesNotThrow(make({ a: ['b', 'c'], b: ['d'], c: ['d'] }));
});
