// Session ownership in the agent (design §9): createAgent({ sessions: 'owned' }), call by call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentError, createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Agent, Principal, RunEvent, Store, Tool } from '../../src/agent/index.ts';
import { titleOf } from '../../src/agent/sessions.ts';

const alice: Principal = Object.freeze({
  id: 'alice',
  type: 'user',
  authenticator: 'jwt',
  issuer: 'https://a.example',
});
const aliceElsewhere: Principal = Object.freeze({
  id: 'alice',
  type: 'user',
  authenticator: 'jwt',
  issuer: 'https://b.example',
});
const aliceNoIssuer: Principal = Object.freeze({ id: 'alice', type: 'user', authenticator: 'jwt' });
const aliceByBasic: Principal = Object.freeze({ id: 'alice', type: 'user', authenticator: 'basic' });
const bob: Principal = Object.freeze({ id: 'bob', type: 'user', authenticator: 'jwt', issuer: 'https://a.example' });
const guest: Principal = Object.freeze({ id: 'anonymous', type: 'user', authenticator: 'anonymous' });
const slackUser: Principal = Object.freeze({ id: 'U1', type: 'user', authenticator: 'slack', issuer: 'T1' });
const STRANGERS = [bob, aliceElsewhere, aliceNoIssuer, aliceByBasic, guest];

const DEPLOY = '/tool deploy {"env":"prod"}';

function ownedAgent(store: Store = memoryStore(), sessions: 'owned' | 'shared' = 'owned') {
  const deployed: unknown[] = [];
  const deploy: Tool = {
    name: 'deploy',
    description: 'Deploys',
    parameters: { type: 'object' },
    needsApproval: true,
    execute: (args) => (deployed.push(args), 'deployed'),
  };
  const agent = createAgent({ name: 'owned', model: echoModel(), tools: [deploy], store, sessions });
  return { agent, deployed };
}

/** What a call throws, as `{ code, message }`; fails when it does not throw. */
async function refusal(call: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof AgentError, `expected an AgentError, got ${String(error)}`);
    return { code: error.code, message: error.message };
  }
  assert.fail('expected the call to be refused');
}

/** Every principal-taking call on `sessionId` (and its approval), as a stranger makes it. */
function calls(
  agent: Agent,
  sessionId: string,
  approvalId: string,
  principal: Principal,
): Record<string, () => Promise<unknown>> {
  return {
    send: () => agent.send('hello', { principal, sessionId }),
    'session(id).send': () => agent.session(sessionId).send('hello', { principal }),
    transcript: () => agent.transcript(sessionId, { principal }),
    pendingApprovals: () => agent.pendingApprovals(sessionId, { principal }),
    decide: () => agent.decide(approvalId, { approved: true, principal }),
    deleteSession: () => agent.deleteSession(sessionId, { principal }),
  };
}

test('owned: for a principal who is not the owner, every call answers exactly as for an unknown id, and the session is untouched', async () => {
  const { agent, deployed } = ownedAgent();
  const paused = await agent.send(DEPLOY, { principal: alice, sessionId: 'alice-chat' });
  const approvalId = paused.approvals[0]!.id;
  const before = await agent.transcript('alice-chat', { principal: alice });
  for (const stranger of STRANGERS) {
    const mine = calls(agent, 'alice-chat', approvalId, stranger);
    const unknown = calls(agent, 'never-existed-id', 'never-existed-approval', stranger);
    for (const name of ['transcript', 'pendingApprovals', 'decide', 'deleteSession']) {
      assert.deepEqual(
        await refusal(mine[name]!()),
        await refusal(unknown[name]!()),
        `${name} as ${stranger.authenticator}/${stranger.issuer}/${stranger.id}`,
      );
    }
    // Continuing: an unknown id would be created, someone else's is refused as unknown (404).
    const unknownSession = await refusal(agent.transcript('never-existed-id', { principal: stranger }));
    const expected = stranger === guest ? await refusal(unknown.send!()) : unknownSession;
    for (const name of ['send', 'session(id).send'])
      assert.deepEqual(await refusal(mine[name]!()), expected, `${name} as ${stranger.id}`);
  }
  assert.deepEqual(await refusal(agent.transcript('x', { principal: bob })), {
    code: 'SESSION_NOT_FOUND',
    message: 'no session has this id',
  });
  assert.equal((await refusal(agent.decide('x', { approved: true, principal: bob }))).code, 'APPROVAL_NOT_FOUND');
  assert.deepEqual(await agent.transcript('alice-chat', { principal: alice }), before);
  assert.deepEqual(deployed, []);
  assert.deepEqual(
    (await agent.pendingApprovals('alice-chat', { principal: alice })).map((a) => a.id),
    [approvalId],
  );
  const resumed = await agent.decide(approvalId, { approved: true, principal: alice });
  assert.equal(resumed.status, 'completed');
  assert.deepEqual(deployed, [{ env: 'prod' }]);
});

test("owned: a refused call emits no event (the session id of someone else's approval never reaches the caller)", async () => {
  const { agent } = ownedAgent();
  const paused = await agent.send(DEPLOY, { principal: alice });
  const events: RunEvent[] = [];
  await assert.rejects(
    agent.decide(paused.approvals[0]!.id, { approved: true, principal: bob, onEvent: (e) => events.push(e) }),
  );
  await assert.rejects(
    agent.send('hi', { principal: bob, sessionId: paused.sessionId, onEvent: (e) => events.push(e) }),
  );
  assert.deepEqual(events, []);
});

test('owned: the owner uses the session; a caller-chosen unknown id is created for its caller, then belongs to it', async () => {
  const { agent } = ownedAgent();
  await agent.send('one', { principal: bob, sessionId: 'bob-chosen' });
  await agent.session('bob-chosen').send('two', { principal: bob });
  assert.deepEqual(
    (await agent.transcript('bob-chosen', { principal: bob })).messages.map((m) => m.content),
    ['one', 'one', 'two', 'two'],
  );
  await assert.rejects(agent.send('take over', { principal: alice, sessionId: 'bob-chosen' }), {
    code: 'SESSION_NOT_FOUND',
  });
  assert.equal((await agent.transcript('bob-chosen', { principal: bob })).messages.length, 4);
});

test('owned: the owner key is [authenticator, issuer ?? null, id]: an equal principal object from another request is the same owner', async () => {
  const { agent } = ownedAgent();
  const first = await agent.send('hello', { principal: alice });
  const sameAlice = {
    id: 'alice',
    type: 'user' as const,
    authenticator: 'jwt',
    issuer: 'https://a.example',
    claims: { other: 'claims' },
  };
  assert.equal((await agent.transcript(first.sessionId, { principal: sameAlice })).messages.length, 2);
  const noIssuer = await agent.send('hello', { principal: aliceNoIssuer });
  assert.equal((await agent.transcript(noIssuer.sessionId, { principal: { ...aliceNoIssuer } })).messages.length, 2);
  await assert.rejects(agent.transcript(noIssuer.sessionId, { principal: alice }), { code: 'SESSION_NOT_FOUND' });
});

test('owned: anonymous callers own nothing: server-made ids reachable by id, a chosen id for a new session is 400, listing is FORBIDDEN', async () => {
  const { agent } = ownedAgent();
  const made = await agent.send('hi', { principal: guest });
  assert.match(made.sessionId, /^[A-Za-z0-9_-]{22}$/);
  const otherGuest: Principal = { id: 'someone', type: 'user', authenticator: 'anonymous' };
  assert.equal((await agent.session(made.sessionId).send('again', { principal: otherGuest })).messages.length, 4);
  assert.equal((await agent.transcript(made.sessionId, { principal: guest })).messages.length, 4);
  const chosen = await refusal(agent.send('hi', { principal: guest, sessionId: 'my-own-choice' }));
  assert.equal(chosen.code, 'INVALID_INPUT');
  await assert.rejects(agent.transcript('my-own-choice'), { code: 'SESSION_NOT_FOUND' }, 'nothing was created');
  await agent.send('mine', { principal: alice, sessionId: 'alice-only' });
  assert.deepEqual(
    await refusal(agent.send('hi', { principal: guest, sessionId: 'alice-only' })),
    chosen,
    'same answer as an unknown id',
  );
  assert.equal((await refusal(agent.listSessions({ principal: guest }))).code, 'FORBIDDEN');
});

test('owned: trusted code (no principal) reaches every session; sessions made while shared, or by trusted code, answer unknown to every principal', async () => {
  const data = new Map<string, string>();
  const shared = ownedAgent(memoryStore(data), 'shared').agent;
  const legacy = await shared.send('from the shared days', { principal: alice });
  const { agent } = ownedAgent(memoryStore(data));
  const server = await agent.send('made by a cron job');
  for (const sessionId of [legacy.sessionId, server.sessionId]) {
    for (const principal of [alice, bob, guest])
      await assert.rejects(agent.transcript(sessionId, { principal }), { code: 'SESSION_NOT_FOUND' });
    assert.equal((await agent.transcript(sessionId)).messages.length, 2);
  }
  const alices = await agent.send('hi', { principal: alice });
  assert.equal((await agent.session(alices.sessionId).send('trusted continues')).messages.length, 4);
  assert.deepEqual(
    (await agent.listSessions({ principal: alice })).sessions.map((s) => s.sessionId),
    [alices.sessionId],
  );
});

test('owned: the owner survives a restart (a new store instance over the same data)', async () => {
  const data = new Map<string, string>();
  const before = ownedAgent(memoryStore(data)).agent;
  const paused = await before.send(DEPLOY, { principal: alice, sessionId: 'kept' });
  const after = ownedAgent(memoryStore(new Map(JSON.parse(JSON.stringify([...data]))))).agent;
  await assert.rejects(after.transcript('kept', { principal: bob }), { code: 'SESSION_NOT_FOUND' });
  await assert.rejects(after.decide(paused.approvals[0]!.id, { approved: true, principal: bob }), {
    code: 'APPROVAL_NOT_FOUND',
  });
  assert.equal((await after.decide(paused.approvals[0]!.id, { approved: true, principal: alice })).status, 'completed');
});

test('owned: deleteSession removes the transcript, checkpoints and pending approvals; a later decision is APPROVAL_NOT_FOUND; memory notes stay', async () => {
  const store = memoryStore();
  const agent = createAgent({
    name: 'd',
    model: echoModel(),
    sessions: 'owned',
    store,
    memory: { scope: ({ principal }) => principal?.id ?? 'none' },
    tools: [
      { name: 'deploy', description: '', parameters: { type: 'object' }, needsApproval: true, execute: () => 'ok' },
    ],
  });
  await agent.send('/tool remember {"note":"likes tea"}', { principal: alice, sessionId: 'gone' });
  const paused = await agent.send(DEPLOY, { principal: alice, sessionId: 'gone' });
  await agent.deleteSession('gone', { principal: alice });
  await assert.rejects(agent.transcript('gone', { principal: alice }), { code: 'SESSION_NOT_FOUND' });
  await assert.rejects(agent.pendingApprovals('gone', { principal: alice }), { code: 'SESSION_NOT_FOUND' });
  await assert.rejects(agent.decide(paused.approvals[0]!.id, { approved: true, principal: alice }), {
    code: 'APPROVAL_NOT_FOUND',
  });
  await assert.rejects(agent.deleteSession('gone', { principal: alice }), { code: 'SESSION_NOT_FOUND' });
  assert.deepEqual(await store.listCheckpoints('gone'), []);
  assert.deepEqual((await agent.listSessions({ principal: alice })).sessions, []);
  assert.deepEqual(await store.loadMemory('alice'), ['likes tea']);
  // The id is free again: a new send creates a new, empty session.
  assert.equal((await agent.send('fresh', { principal: alice, sessionId: 'gone' })).messages.length, 2);
});

test("owned: listSessions lists only the caller's sessions, most recently updated first, by pages of limit with nextCursor", async () => {
  const { agent } = ownedAgent();
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push((await agent.send(`message number ${i} ${'x'.repeat(100)}`, { principal: alice })).sessionId);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await agent.send('not alice', { principal: aliceElsewhere });
  await agent.send(DEPLOY, { principal: alice, sessionId: ids[1] }).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 2));
  await agent.send('bump', { principal: alice, sessionId: ids[3] });
  const expected = [ids[3], ids[1], ids[4], ids[2], ids[0]];

  const first = await agent.listSessions({ principal: alice, limit: 2 });
  assert.deepEqual(
    first.sessions.map((s) => s.sessionId),
    expected.slice(0, 2),
  );
  assert.equal(typeof first.nextCursor, 'string');
  const second = await agent.listSessions({ principal: alice, limit: 2, cursor: first.nextCursor! });
  assert.deepEqual(
    second.sessions.map((s) => s.sessionId),
    expected.slice(2, 4),
  );
  const third = await agent.listSessions({ principal: alice, limit: 2, cursor: second.nextCursor! });
  assert.deepEqual(
    third.sessions.map((s) => s.sessionId),
    expected.slice(4),
  );
  assert.equal(third.nextCursor, null);

  const all = await agent.listSessions({ principal: alice });
  assert.deepEqual(
    all.sessions.map((s) => s.sessionId),
    expected,
  );
  const row = all.sessions.find((s) => s.sessionId === ids[1])!;
  assert.deepEqual(Object.keys(row), ['sessionId', 'createdAt', 'updatedAt', 'title', 'pendingApprovals']);
  assert.equal(row.title, `message number 1 ${'x'.repeat(63)}`);
  assert.equal(row.title.length, 80);
  assert.equal(row.pendingApprovals, 1);
  assert.ok(row.updatedAt > row.createdAt);
  assert.deepEqual((await agent.listSessions({ principal: bob })).sessions, []);
  for (const limit of [0, 101, 1.5, Number.NaN])
    assert.equal((await refusal(agent.listSessions({ principal: alice, limit }))).code, 'INVALID_INPUT');
  for (const cursor of ['', 'not a cursor', '!!!', 'WzFd'])
    assert.equal((await refusal(agent.listSessions({ principal: alice, cursor }))).code, 'INVALID_INPUT');
});

test("shared (the default): the spec's rule stands: any principal with the id reads, continues and decides", async () => {
  const { agent, deployed } = ownedAgent(memoryStore(), 'shared');
  assert.equal(agent.sessions, 'shared');
  const paused = await agent.send(DEPLOY, { principal: alice, sessionId: 'open' });
  assert.equal((await agent.transcript('open', { principal: bob })).messages.length, 2);
  assert.equal((await agent.pendingApprovals('open', { principal: guest })).length, 1);
  await agent.decide(paused.approvals[0]!.id, { approved: true, principal: bob });
  assert.deepEqual(deployed, [{ env: 'prod' }]);
  assert.deepEqual(await agent.pendingApprovals('never-existed', { principal: bob }), []);
  assert.equal((await refusal(agent.listSessions({ principal: alice }))).code, 'INVALID_INPUT');
  await agent.deleteSession('open', { principal: slackUser });
  await assert.rejects(agent.transcript('open'), { code: 'SESSION_NOT_FOUND' });
});

test("createAgent: sessions must be 'shared' or 'owned', and 'owned' needs a store that can list and delete sessions", () => {
  assert.equal(ownedAgent().agent.sessions, 'owned');
  assert.throws(() => createAgent({ name: 'x', model: echoModel(), sessions: 'private' as never }), {
    code: 'AGENT_AUTH_CONFIG_INVALID',
  });
  const { listSessions: _l, deleteSession: _d, ...partial } = memoryStore();
  assert.throws(() => createAgent({ name: 'x', model: echoModel(), sessions: 'owned', store: partial }), {
    code: 'AGENT_AUTH_CONFIG_INVALID',
  });
  assert.equal(createAgent({ name: 'x', model: echoModel(), store: partial }).sessions, 'shared');
});

test('a session title is its first message cut to 80 code points, never splitting a surrogate pair', async () => {
  const emoji = '😀'; // two UTF-16 units, one code point
  const cases: [string, string][] = [
    ['hello', 'hello'],
    ['x'.repeat(80), 'x'.repeat(80)],
    ['x'.repeat(81), 'x'.repeat(80)],
    [`${'x'.repeat(79)}${emoji}`, `${'x'.repeat(79)}${emoji}`],
    [`${'x'.repeat(79)}${emoji}y`, `${'x'.repeat(79)}${emoji}`],
    [emoji.repeat(81), emoji.repeat(80)],
    [`\ud800${'x'.repeat(80)}`, `\ud800${'x'.repeat(79)}`],
    ['\udc00a\ud800', '\udc00a\ud800'],
  ];
  for (const [text, title] of cases) assert.equal(titleOf(text), title);
  const agent = createAgent({ name: 't', model: echoModel(), sessions: 'owned' });
  await agent.send(emoji.repeat(100), { principal: alice });
  assert.equal((await agent.listSessions({ principal: alice })).sessions[0]!.title, emoji.repeat(80));
});
