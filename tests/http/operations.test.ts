// The operations of design §25 on every surface: `/ui` answering an approval is `decide`, MCP
// `decide` needs `scopes.approve`, and a 403 names the whole union of the scopes the operation
// needs on its surface, so a client that takes the challenge's scopes converges in one step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthError, jwt } from '../../src/auth/index.ts';
import type { AuthFn } from '../../src/auth/types.ts';
import { agentHandler } from '../../src/http/index.ts';
import type { AgentHandlerOptions } from '../../src/http/handler.ts';
import { parseUiRequest } from '../../src/http/ui-stream.ts';
import { DEPLOY_MESSAGE, pausedSession, principalAgent } from '../helpers/http-agent.ts';
import { AUDIENCE, SECRET, hmacSigner, signToken } from '../helpers/jwt.ts';

const BASE = 'https://agent.example/agent';

/** A token of `sub` granting `scope`, valid now. */
async function token(scope: string, sub = 'ada'): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub, aud: AUDIENCE, iat: now, exp: now + 600, ...(scope !== '' && { scope }) };
  return `Bearer ${await signToken({ alg: 'HS256', typ: 'JWT' }, claims, await hmacSigner(SECRET))}`;
}

/** The agent with a tool that waits for approval, behind `jwt()` (with the entry's own `scopes` when given) and `options`. */
function handlerWith(options: AgentHandlerOptions, entryScopes?: readonly string[]) {
  const made = principalAgent();
  const auth = jwt({ secret: SECRET, audience: AUDIENCE, ...(entryScopes && { scopes: entryScopes }) });
  return { ...made, handler: agentHandler(made.agent, { basePath: '/agent', auth, ...options }) };
}

const post = (handler: (request: Request) => Promise<Response>, path: string, authorization: string, body: unknown) =>
  handler(
    new Request(`${BASE}${path}`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );

/** A useChat request body answering `approvalId` (the assistant message that asked it, as the client resends it), with a user message after it when `text` is given. */
function uiApproval(sessionId: string, approvalId: string, approved: boolean, text?: string) {
  const assistant = {
    id: 'msg-1',
    role: 'assistant',
    parts: [
      {
        type: 'tool-deploy',
        toolCallId: 'call-1',
        state: 'approval-responded',
        input: { env: 'prod' },
        approval: { id: approvalId, approved },
      },
    ],
  };
  const user = { id: 'msg-2', role: 'user', parts: [{ type: 'text', text }] };
  return {
    id: sessionId,
    trigger: 'submit-message',
    messages: [
      { id: 'msg-0', role: 'user', parts: [{ type: 'text', text: DEPLOY_MESSAGE }] },
      assistant,
      ...(text === undefined ? [] : [user]),
    ],
  };
}

const challenge = (response: Response) => response.headers.get('www-authenticate');

test('a /ui request that answers an approval is decide: without scopes.approve it is 403 naming the whole union, and the tool does not run', async () => {
  const { agent, deployed, handler } = handlerWith({
    scopes: { send: ['agent:chat'], approve: ['agent:approve'] },
  });
  const { approvals } = await pausedSession(agent, 'ui-1');
  const chatter = await token('agent:chat');
  const refused = await post(handler, '/ui', chatter, uiApproval('ui-1', approvals[0]!.id, true));
  assert.equal(refused.status, 403);
  assert.equal(challenge(refused), 'Bearer error="insufficient_scope", scope="agent:approve"');
  assert.deepEqual(await refused.json(), { error: 'Forbidden' });
  assert.deepEqual(deployed, [], 'the tool did not run');
  assert.equal((await agent.pendingApprovals('ui-1')).length, 1, 'the approval still waits');
  // The same caller through POST <base>/approvals/:id: the same answer, as it always was.
  const direct = await post(handler, `/approvals/${approvals[0]!.id}`, chatter, { approved: true });
  assert.equal(direct.status, 403);
  assert.equal(challenge(direct), challenge(refused));
  // With the approve scope the approval goes through /ui.
  const approved = await post(handler, '/ui', await token('agent:approve'), uiApproval('ui-1', approvals[0]!.id, true));
  assert.equal(approved.status, 200);
  await approved.text();
  assert.deepEqual(deployed, [{ env: 'prod' }]);
});

test('a /ui request that answers an approval and adds a user message needs send and approve; with both, the approval is decided, then the message sent', async () => {
  const { agent, deployed, handler } = handlerWith({
    scopes: { send: ['agent:chat'], approve: ['agent:approve'] },
  });
  const { approvals } = await pausedSession(agent, 'ui-2');
  const body = uiApproval('ui-2', approvals[0]!.id, true, 'and now this');
  for (const scope of ['agent:chat', 'agent:approve', '']) {
    const refused = await post(handler, '/ui', await token(scope), body);
    assert.equal(refused.status, 403, scope);
    assert.equal(challenge(refused), 'Bearer error="insufficient_scope", scope="agent:chat agent:approve"', scope);
  }
  assert.deepEqual(deployed, []);
  const both = await post(handler, '/ui', await token('agent:chat agent:approve'), body);
  assert.equal(both.status, 200);
  const stream = await both.text();
  assert.match(stream, /"delta":"and "/, 'the new message streams');
  assert.doesNotMatch(stream, /tool-output/, 'the decided call belongs to the message before: not in this stream');
  assert.deepEqual(deployed, [{ env: 'prod' }]);
  assert.deepEqual(
    (await agent.transcript('ui-2')).messages.filter((m) => m.role === 'user').map((m) => m.content),
    [DEPLOY_MESSAGE, 'and now this'],
  );
});

test('a useChat body: approval responses are read from the last assistant message only, and a user message after it carries them', () => {
  const answered = uiApproval('s', 'a-1', false);
  assert.deepEqual(parseUiRequest(answered), {
    sessionId: 's',
    messageId: 'msg-1',
    decisions: [{ approvalId: 'a-1', approved: false }],
  });
  assert.deepEqual(parseUiRequest(uiApproval('s', 'a-1', true, 'next')), {
    sessionId: 's',
    text: 'next',
    decisions: [{ approvalId: 'a-1', approved: true }],
  });
  // An answered part further back is history, not a request.
  const older = uiApproval('s', 'a-1', true, 'next');
  older.messages.push(
    { id: 'msg-3', role: 'assistant', parts: [] } as never,
    {
      id: 'msg-4',
      role: 'user',
      parts: [{ type: 'text', text: 'later' }],
    } as never,
  );
  assert.deepEqual(parseUiRequest(older), { sessionId: 's', text: 'later', decisions: [] });
});

test('MCP decide needs scopes.approve besides mcp.scopes.decide; the 403 names the union of the entry, scopes.mcp, the group and the tool', async () => {
  const { agent, deployed, handler } = handlerWith(
    {
      mcp: { scopes: { decide: ['mcp:decide'] } },
      scopes: { approve: ['agent:approve'], mcp: ['agent:mcp'] },
    },
    ['agent:use'],
  );
  const { approvals } = await pausedSession(agent, 'mcp-1');
  const decide = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'decide', arguments: { approvalId: approvals[0]!.id, approved: true } },
  };
  const union = 'agent:use agent:mcp agent:approve mcp:decide';
  for (const scope of ['agent:use agent:mcp mcp:decide', 'agent:use agent:mcp agent:approve']) {
    const refused = await post(handler, '/mcp', await token(scope), decide);
    assert.equal(refused.status, 403, scope);
    assert.equal(challenge(refused), `Bearer error="insufficient_scope", scope="${union}"`, scope);
  }
  assert.deepEqual(deployed, []);
  const decided = await post(handler, '/mcp', await token(union), decide);
  assert.equal(decided.status, 200);
  assert.equal(((await decided.json()) as { result: { isError: boolean } }).result.isError, false);
  assert.deepEqual(deployed, [{ env: 'prod' }]);
  // Listing needs the route's union only: the entry's and scopes.mcp.
  const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
  const listed = await post(handler, '/mcp', await token('agent:use'), list);
  assert.equal(listed.status, 403);
  assert.equal(challenge(listed), 'Bearer error="insufficient_scope", scope="agent:use agent:mcp"');
  assert.equal((await post(handler, '/mcp', await token('agent:use agent:mcp'), list)).status, 200);
});

test('the 403 of a route group names the accepting entry’s own scopes too: a client that takes its scopes converges in one step', async () => {
  // The README's setup: every call needs agent:chat (the entry's), deciding needs agent:approve too.
  const { agent, handler } = handlerWith({ scopes: { approve: ['agent:approve'] } }, ['agent:chat']);
  const { approvals } = await pausedSession(agent, 'step-up');
  const refused = await post(handler, `/approvals/${approvals[0]!.id}`, await token('agent:chat'), { approved: true });
  assert.equal(refused.status, 403);
  const scope = /scope="([^"]*)"/.exec(challenge(refused) ?? '')?.[1];
  assert.equal(scope, 'agent:chat agent:approve');
  // The client replaces its scopes with the challenge's: that token does everything.
  const stepped = await token(scope!);
  assert.equal((await post(handler, `/approvals/${approvals[0]!.id}`, stepped, { approved: true })).status, 200);
  assert.equal((await post(handler, '', stepped, { message: 'still allowed to chat' })).status, 200);
});

test('an entry that refuses for its own scopes names the route’s union too, known from the path before auth', async () => {
  const { agent, handler } = handlerWith({ scopes: { approve: ['agent:approve'], send: ['agent:send'] } }, [
    'agent:chat',
  ]);
  const { approvals } = await pausedSession(agent, 'entry-refuses');
  const refused = await post(handler, `/approvals/${approvals[0]!.id}`, await token('agent:approve'), {
    approved: true,
  });
  assert.equal(refused.status, 403);
  assert.equal(challenge(refused), 'Bearer error="insufficient_scope", scope="agent:chat agent:approve"');
  const sending = await post(handler, '', await token('agent:send'), { message: 'hi' });
  assert.equal(challenge(sending), 'Bearer error="insufficient_scope", scope="agent:chat agent:send"');
  // A custom entry's AuthError(403, { scope }) is widened the same way.
  const custom: AuthFn = () => {
    throw new AuthError(403, { scope: ['custom:x'] });
  };
  const customHandler = agentHandler(principalAgent().agent, {
    basePath: '/agent',
    auth: [custom],
    scopes: { read: ['agent:read'] },
  });
  const read = await customHandler(new Request(`${BASE}/chat/any`, { headers: { authorization: 'Bearer x' } }));
  assert.equal(challenge(read), 'Bearer error="insufficient_scope", scope="custom:x agent:read"');
});
