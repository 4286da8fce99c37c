// Session ownership on the node server (design §9): serve refuses an 'owned' agent without auth,
// channel sessions belong to their channel principal, owners survive a restart on the file store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Principal, Tool } from '../../src/agent/types.ts';
import { anonymous, apiToken, AuthConfigError } from '../../src/auth/index.ts';
import { fileStore, serve, slackChannel } from '../../src/node.ts';
import { send } from '../helpers/http-client.ts';
import { platformApi } from '../helpers/channels.ts';

delete process.env.AGENT_API_TOKEN;

const SLACK_SECRET = 'slack-signing-secret-for-the-ownership-test';
const TOKEN = 'ownership-test-token-0123456789';
const deploy: Tool = {
  name: 'deploy',
  description: 'Deploys',
  parameters: { type: 'object' },
  needsApproval: true,
  execute: () => 'deployed',
};

function signedSlack(url: string, event: Record<string, unknown>) {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const body = JSON.stringify({
    type: 'event_callback',
    team_id: 'T1',
    event_id: `Ev${Math.random()}`,
    event: { type: 'message', user: 'U1', channel: 'C1', ts: '1.1', ...event },
  });
  const signature = `v0=${createHmac('sha256', SLACK_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return send(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': signature,
    },
    body,
  });
}

test("serve refuses an 'owned' agent without auth (nor AGENT_API_TOKEN) at creation", async (t) => {
  const agent = createAgent({ name: 'o', model: echoModel(), store: memoryStore(), sessions: 'owned' });
  await assert.rejects(
    serve({ agent, port: 0 }),
    (error: unknown) =>
      error instanceof AuthConfigError && error.code === 'AGENT_AUTH_CONFIG_INVALID' && /owned/.test(error.message),
  );
  await assert.rejects(
    serve({ agent: { name: 'o', model: echoModel(), sessions: 'owned' }, store: memoryStore(), port: 0 }),
    AuthConfigError,
  );
  process.env.AGENT_API_TOKEN = TOKEN;
  try {
    const server = await serve({ agent, port: 0 });
    t.after(() => server.close());
    const made = await send(`${server.url}/agent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
      body: '{"message":"hi"}',
    });
    assert.equal(made.status, 200);
  } finally {
    delete process.env.AGENT_API_TOKEN;
  }
});

test("owned: a Slack user's session (and its pending approval) cannot be read, continued or decided over HTTP by another principal", async (t) => {
  const api = await platformApi();
  t.after(() => api.close());
  const agent = createAgent({
    name: 'o',
    model: echoModel(),
    store: memoryStore(),
    tools: [deploy],
    sessions: 'owned',
  });
  const server = await serve({
    agent,
    port: 0,
    auth: [apiToken(TOKEN), anonymous()],
    channels: { slack: slackChannel({ signingSecret: SLACK_SECRET, botToken: 'xoxb-test', apiBaseUrl: api.baseUrl }) },
  });
  t.after(() => server.close());
  assert.equal(
    (await signedSlack(`${server.url}/channels/slack`, { text: '/tool deploy {"env":"prod"}' })).status,
    200,
  );
  const slackUser: Principal = { id: 'U1', type: 'user', authenticator: 'slack', issuer: 'T1' };
  let listed: { sessionId: string; pendingApprovals: number }[] = [];
  for (let i = 0; i < 100 && listed.length === 0; i++) {
    listed = (await agent.listSessions({ principal: slackUser })).sessions;
    if (listed.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(listed.length, 1);
  assert.equal(listed[0]!.pendingApprovals, 1);
  const { sessionId } = listed[0]!;
  const [approval] = await agent.pendingApprovals(sessionId);

  for (const authorization of [undefined, `Bearer ${TOKEN}`]) {
    const headers = { 'content-type': 'application/json', ...(authorization !== undefined && { authorization }) };
    const id = encodeURIComponent(sessionId);
    const read = await send(`${server.url}/agent/chat/${id}`, { headers });
    assert.equal(read.status, 404, `read as ${authorization ?? 'anonymous'}`);
    assert.equal(read.text, '{"error":"Session not found"}');
    assert.equal((await send(`${server.url}/agent/approvals?sessionId=${id}`, { headers })).status, 404);
    const decided = await send(`${server.url}/agent/approvals/${approval!.id}`, {
      method: 'POST',
      headers,
      body: '{"approved":true}',
    });
    assert.equal(decided.status, 404);
    assert.equal(decided.text, '{"error":"Approval not found"}');
    const continued = await send(`${server.url}/agent`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ message: 'hi', sessionId }),
    });
    assert.equal(continued.status, authorization === undefined ? 400 : 404);
    assert.equal((await send(`${server.url}/agent/chat/${id}`, { method: 'DELETE', headers })).status, 404);
  }
  assert.equal(
    (await agent.pendingApprovals(sessionId, { principal: slackUser })).length,
    1,
    'still waiting for the Slack user',
  );
  assert.equal((await agent.transcript(sessionId, { principal: slackUser })).messages.length, 2);
});

test('owned: the owner key survives a restart on the file store', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'agentward-owned-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const alice: Principal = { id: 'alice', type: 'user', authenticator: 'oidc', issuer: 'https://id.example' };
  const bob: Principal = { id: 'alice', type: 'user', authenticator: 'oidc', issuer: 'https://other.example' };
  const make = () =>
    createAgent({ name: 'o', model: echoModel(), store: fileStore(dir), tools: [deploy], sessions: 'owned' });
  const paused = await make().send('/tool deploy {}', { principal: alice, sessionId: 'kept' });
  const restarted = make();
  await assert.rejects(restarted.transcript('kept', { principal: bob }), { code: 'SESSION_NOT_FOUND' });
  await assert.rejects(restarted.decide(paused.approvals[0]!.id, { approved: true, principal: bob }), {
    code: 'APPROVAL_NOT_FOUND',
  });
  assert.deepEqual(
    (await restarted.listSessions({ principal: alice })).sessions.map((s) => [s.sessionId, s.pendingApprovals]),
    [['kept', 1]],
  );
  assert.equal(
    (await restarted.decide(paused.approvals[0]!.id, { approved: true, principal: alice })).status,
    'completed',
  );
  await restarted.deleteSession('kept', { principal: alice });
  assert.deepEqual((await make().listSessions({ principal: alice })).sessions, []);
});

for (const sessions of ['shared', 'owned'] as const) {
  test(`the review's scenario fails (${sessions}): an anonymous HTTP caller cannot read, continue or approve a Slack user's session`, async (t) => {
    const api = await platformApi();
    t.after(() => api.close());
    const executed: unknown[] = [];
    const tool: Tool = { ...deploy, execute: (args) => (executed.push(args), 'deployed') };
    const agent = createAgent({ name: 'o', model: echoModel(), store: memoryStore(), tools: [tool], sessions });
    const server = await serve({
      agent,
      port: 0,
      auth: [anonymous()],
      channels: {
        slack: slackChannel({ signingSecret: SLACK_SECRET, botToken: 'xoxb-test', apiBaseUrl: api.baseUrl }),
      },
    });
    t.after(() => server.close());
    assert.equal(
      (await signedSlack(`${server.url}/channels/slack`, { text: '/tool deploy {"env":"prod"}' })).status,
      200,
    );
    for (let i = 0; i < 100 && api.calls.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    // What the review did: the session id made of the public Slack ids.
    for (const guess of ['slack:T1:C1:U1', 'slack:T1:C1', 'discord:C1:U1']) {
      const id = encodeURIComponent(guess);
      assert.equal((await send(`${server.url}/agent/chat/${id}`)).status, 404);
      const approvals = await send(`${server.url}/agent/approvals?sessionId=${id}`);
      if (sessions === 'shared') assert.equal(approvals.text, '{"approvals":[]}');
      else assert.equal(approvals.status, 404);
      const continued = await send(`${server.url}/agent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'hi', sessionId: guess }),
      });
      assert.equal(
        continued.status,
        sessions === 'shared' ? 200 : 400,
        'shared: a new session of its own; owned: refused',
      );
    }
    const slackUser: Principal = { id: 'U1', type: 'user', authenticator: 'slack', issuer: 'T1' };
    const pending = await Promise.all(['slack:T1:C1:U1'].map((id) => agent.pendingApprovals(id).catch(() => [])));
    assert.deepEqual(pending, [[]], "nothing of the Slack user's lives under the guessable id");
    assert.deepEqual(executed, [], 'the tool never ran');
    if (sessions === 'owned')
      assert.equal((await agent.listSessions({ principal: slackUser })).sessions[0]?.pendingApprovals, 1);
  });
}
