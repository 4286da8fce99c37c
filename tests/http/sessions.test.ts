// Session ownership over HTTP (design §9): GET <base>/sessions, DELETE <base>/chat/:id, and every
// route answering a non-owner exactly as it answers an id that never existed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentHandler } from '../../src/http/index.ts';
import { AuthConfigError, anonymous, apiToken } from '../../src/auth/index.ts';
import type { AuthFn, Principal } from '../../src/auth/index.ts';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Tool } from '../../src/agent/index.ts';
import { decodeBase64url, encodeBase64url } from '../../src/auth/jws/base64url.ts';
import { seededRandom, withSeed, type Random } from '../helpers/prng.ts';

const BASE = 'http://localhost/agent';
const DEPLOY = '/tool deploy {"env":"prod"}';

/** A custom entry that accepts the principal a test names in `x-principal` (base64url of its JSON). */
const asHeader: AuthFn = Object.assign(
  (request: Request) => {
    const named = request.headers.get('x-principal');
    return named === null ? null : (JSON.parse(new TextDecoder().decode(decodeBase64url(named)!)) as Principal);
  },
  { challenges: [{ scheme: 'Test' }] },
);

function setup(sessions: 'owned' | 'shared' = 'owned') {
  const deployed: unknown[] = [];
  const deploy: Tool = {
    name: 'deploy',
    description: 'Deploys',
    parameters: { type: 'object' },
    needsApproval: true,
    execute: (a) => (deployed.push(a), 'ok'),
  };
  const agent = createAgent({ name: 'web', model: echoModel(), tools: [deploy], store: memoryStore(), sessions });
  return { agent, deployed, handler: agentHandler(agent, { basePath: '/agent', auth: asHeader }) };
}

const as = (principal: Principal) => ({
  'x-principal': encodeBase64url(new TextEncoder().encode(JSON.stringify(principal))),
});
const get = (path: string, principal: Principal) => new Request(BASE + path, { headers: as(principal) });
const del = (path: string, principal: Principal) =>
  new Request(BASE + path, { method: 'DELETE', headers: as(principal) });
const post = (path: string, body: unknown, principal: Principal, headers: Record<string, string> = {}) =>
  new Request(BASE + path, {
    method: 'POST',
    headers: { ...as(principal), 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const uiMessage = (id: string, text: string) => ({
  id,
  trigger: 'submit-message',
  messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text }] }],
});
const uiDecision = (id: string, approvalId: string) => ({
  id,
  trigger: 'submit-message',
  messages: [
    {
      id: 'a1',
      role: 'assistant',
      parts: [
        {
          type: 'tool-deploy',
          toolCallId: 'c',
          state: 'approval-responded',
          approval: { id: approvalId, approved: true },
        },
      ],
    },
  ],
});

/** What a response shows a caller: status, the headers that say anything, and the body bytes. */
async function seen(
  response: Response,
): Promise<{ status: number; headers: Record<string, string | null>; body: string }> {
  const headers: Record<string, string | null> = {};
  for (const name of [
    'content-type',
    'cache-control',
    'allow',
    'www-authenticate',
    'content-length',
    'x-vercel-ai-ui-message-stream',
  ])
    headers[name] = response.headers.get(name);
  const rest = [...response.headers.keys()].filter((name) => !(name in headers));
  assert.deepEqual(rest, [], 'no other header');
  return { status: response.status, headers, body: await response.text() };
}

/** Every route that names a session or an approval, as `principal` calls it on `sessionId` / `approvalId`. */
function routes(sessionId: string, approvalId: string, principal: Principal): Record<string, () => Request> {
  return {
    'GET <base>/chat/:id': () => get(`/chat/${encodeURIComponent(sessionId)}`, principal),
    'GET <base>/approvals?sessionId=': () => get(`/approvals?sessionId=${encodeURIComponent(sessionId)}`, principal),
    'POST <base>/approvals/:id': () =>
      post(`/approvals/${encodeURIComponent(approvalId)}`, { approved: true }, principal),
    'DELETE <base>/chat/:id': () => del(`/chat/${encodeURIComponent(sessionId)}`, principal),
    'POST <base>/ui (decisions)': () => post('/ui', uiDecision(sessionId, approvalId), principal),
  };
}

/** The routes that continue a session: an unknown id is created there, so someone else's answers as an unknown id is read. */
function continuing(sessionId: string, principal: Principal): Record<string, () => Request> {
  return {
    'POST <base>': () => post('', { message: 'take over', sessionId }, principal),
    'POST <base>/chat': () => post('/chat', { message: 'take over', sessionId }, principal),
    'POST <base>/chat (event stream)': () =>
      post('/chat', { message: 'take over', sessionId }, principal, { accept: 'text/event-stream' }),
    'POST <base>/ui': () => post('/ui', uiMessage(sessionId, 'take over'), principal),
  };
}

const alice: Principal = { id: 'alice', type: 'user', authenticator: 'jwt', issuer: 'https://a.example' };
const strangers: Principal[] = [
  { id: 'bob', type: 'user', authenticator: 'jwt', issuer: 'https://a.example' },
  { id: 'alice', type: 'user', authenticator: 'jwt', issuer: 'https://b.example' },
  { id: 'alice', type: 'user', authenticator: 'jwt' },
  { id: 'alice', type: 'service', authenticator: 'custom', issuer: 'https://a.example' },
];

async function alicesPausedSession(
  handler: (r: Request) => Promise<Response>,
  sessionId: string,
  owner: Principal = alice,
) {
  const response = await handler(post('', { message: DEPLOY, sessionId }, owner));
  assert.equal(response.status, 200);
  const result = (await response.json()) as { approvals: { id: string }[] };
  return result.approvals[0]!.id;
}

test('owned: route by route, a non-owner gets the bytes an unknown id gets; continuing routes answer as reading an unknown id (404)', async () => {
  const { handler, deployed } = setup();
  const approvalId = await alicesPausedSession(handler, 'alice-s1');
  for (const stranger of strangers) {
    const mine = routes('alice-s1', approvalId, stranger);
    const unknown = routes('no-such-session', 'no-such-approval', stranger);
    for (const name of Object.keys(mine)) {
      const answer = await seen(await handler(mine[name]!()));
      assert.deepEqual(answer, await seen(await handler(unknown[name]!())), `${name} as ${JSON.stringify(stranger)}`);
      assert.equal(answer.status, 404, name);
    }
    const unknownRead = await seen(await handler(get('/chat/no-such-session', stranger)));
    assert.deepEqual(unknownRead.body, '{"error":"Session not found"}');
    for (const [name, request] of Object.entries(continuing('alice-s1', stranger))) {
      assert.deepEqual(await seen(await handler(request())), unknownRead, `${name} as ${JSON.stringify(stranger)}`);
    }
  }
  assert.deepEqual(deployed, []);
  const transcript = await handler(get('/chat/alice-s1', alice));
  assert.equal(((await transcript.json()) as { messages: unknown[] }).messages.length, 2, 'nobody else wrote into it');
  assert.equal((await handler(post(`/approvals/${approvalId}`, { approved: true }, alice))).status, 200);
  assert.deepEqual(deployed, [{ env: 'prod' }]);
});

/** A random principal: sometimes alice's look-alike, sometimes anonymous, sometimes odd characters. */
function randomPrincipal(random: Random): Principal {
  const text = () =>
    Array.from({ length: 1 + random.int(12) }, () =>
      random.pick(['a', 'b', 'é', '0', ':', '"', '|', ' ', '\u2028', '😀']),
    ).join('');
  const authenticator = random.pick(['jwt', 'oidc', 'basic', 'api-token', 'custom', 'slack', 'anonymous', text()]);
  const principal: Principal = {
    id: random.pick(['alice', 'anonymous', text()]),
    type: random.pick(['user', 'service']),
    authenticator,
  };
  const issuer = random.pick([undefined, 'https://a.example', '', text()]);
  // A tenant (docs/tenants.md) is the caller key's first part: the same id in two tenants is two callers.
  const tenant = random.pick([undefined, undefined, 'org_a', 'org_b']);
  const withIssuer = issuer === undefined ? principal : { ...principal, issuer };
  return tenant === undefined ? withIssuer : { ...withIssuer, tenant };
}

/** One caller by the caller key (design §32): an absent issuer and an empty one are the same part, `''`. */
const sameOwner = (a: Principal, b: Principal) =>
  a.authenticator === b.authenticator &&
  (a.issuer ?? '') === (b.issuer ?? '') &&
  a.id === b.id &&
  a.tenant === b.tenant;
const randomId = (random: Random) =>
  Array.from({ length: 4 + random.int(30) }, () => random.pick([...'abcXYZ019-_.~:@é😀'])).join('');

test('existence does not leak (property): for random owners, strangers and ids, a stranger sees the bytes of an id that never existed', async () => {
  await withSeed(async (random) => {
    const { handler } = setup();
    for (let round = 0; round < 40; round++) {
      let owner = randomPrincipal(random);
      while (owner.authenticator === 'anonymous') owner = randomPrincipal(random);
      const sessionId = randomId(random);
      const approvalId = await alicesPausedSession(handler, sessionId, owner);
      let stranger = randomPrincipal(random);
      while (sameOwner(stranger, owner)) stranger = randomPrincipal(random);
      const never = randomId(random);
      const mine = routes(sessionId, approvalId, stranger);
      const unknown = routes(never, randomId(random), stranger);
      for (const name of Object.keys(mine)) {
        assert.deepEqual(
          await seen(await handler(mine[name]!())),
          await seen(await handler(unknown[name]!())),
          `${name}: ${JSON.stringify({ owner, stranger })}`,
        );
      }
      // Continuing: an anonymous stranger gets what choosing a never-existing id gets (400); others what reading one gets (404).
      const unknownRead = await seen(await handler(get(`/chat/${encodeURIComponent(never)}`, stranger)));
      for (const [name, request] of Object.entries(continuing(sessionId, stranger))) {
        const expected =
          stranger.authenticator === 'anonymous'
            ? await seen(await handler(continuing(never, stranger)[name]!()))
            : unknownRead;
        assert.deepEqual(
          await seen(await handler(request())),
          expected,
          `${name}: ${JSON.stringify({ owner, stranger })}`,
        );
      }
      const check = await handler(get(`/approvals?sessionId=${encodeURIComponent(sessionId)}`, owner));
      assert.deepEqual(
        ((await check.json()) as { approvals: { id: string }[] }).approvals.map((a) => a.id),
        [approvalId],
        'the owner still sees it pending',
      );
    }
  });
});

test("owned: GET <base>/sessions lists the caller's own sessions, newest first, with limit and cursor", async () => {
  const { handler } = setup();
  const bob = strangers[0]!;
  const made: string[] = [];
  for (let i = 0; i < 5; i++) {
    const response = await handler(post('/chat', { message: `chat ${i}` }, alice));
    made.push(((await response.json()) as { sessionId: string }).sessionId);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await handler(post('', { message: 'bob here' }, bob));
  const page = async (query: string, principal = alice) => {
    const response = await handler(get(`/sessions${query}`, principal));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    return (await response.json()) as {
      sessions: { sessionId: string; title: string; pendingApprovals: number; createdAt: string; updatedAt: string }[];
      nextCursor: string | null;
    };
  };
  const first = await page('?limit=2');
  assert.deepEqual(
    first.sessions.map((s) => s.sessionId),
    [made[4], made[3]],
  );
  assert.deepEqual(first.sessions[0], {
    sessionId: made[4],
    createdAt: first.sessions[0]!.createdAt,
    updatedAt: first.sessions[0]!.updatedAt,
    title: 'chat 4',
    pendingApprovals: 0,
  });
  const second = await page(`?limit=2&cursor=${encodeURIComponent(first.nextCursor!)}`);
  assert.deepEqual(
    second.sessions.map((s) => s.sessionId),
    [made[2], made[1]],
  );
  const third = await page(`?limit=2&cursor=${encodeURIComponent(second.nextCursor!)}`);
  assert.deepEqual(third, { sessions: [third.sessions[0]!], nextCursor: null });
  assert.equal((await page('')).sessions.length, 5, 'default limit 20');
  assert.deepEqual(
    (await page('', bob)).sessions.map((s) => s.title),
    ['bob here'],
  );
  for (const query of ['?limit=0', '?limit=101', '?limit=abc', '?limit=', '?limit=2.5', '?cursor=nope']) {
    const response = await handler(get(`/sessions${query}`, alice));
    assert.equal(response.status, 400, query);
    assert.match(((await response.json()) as { error: string }).error, /limit|cursor/);
  }
  const refused = await handler(get('/sessions', { id: 'anonymous', type: 'user', authenticator: 'anonymous' }));
  assert.equal(refused.status, 403);
  assert.deepEqual(await refused.json(), { error: 'Forbidden' });
  const wrongMethod = await handler(post('/sessions', {}, alice));
  assert.equal(wrongMethod.status, 405);
  assert.equal(wrongMethod.headers.get('allow'), 'GET');
});

test('owned: DELETE <base>/chat/:id answers 204 and takes the transcript, checkpoints and pending approvals with it', async () => {
  const { handler, agent } = setup();
  const approvalId = await alicesPausedSession(handler, 'to-delete');
  const response = await handler(del('/chat/to-delete', alice));
  assert.equal(response.status, 204);
  assert.equal(await response.text(), '');
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.equal((await handler(get('/chat/to-delete', alice))).status, 404);
  assert.equal((await handler(get('/approvals?sessionId=to-delete', alice))).status, 404);
  const decided = await handler(post(`/approvals/${approvalId}`, { approved: true }, alice));
  assert.equal(decided.status, 404);
  assert.deepEqual(await decided.json(), { error: 'Approval not found' });
  await assert.rejects(agent.decide(approvalId, { approved: true }), { code: 'APPROVAL_NOT_FOUND' });
  assert.equal((await handler(del('/chat/to-delete', alice))).status, 404);
  const wrongMethod = await handler(post('/chat/x', {}, alice));
  assert.equal(wrongMethod.headers.get('allow'), 'GET, DELETE');
});

test('shared: GET <base>/sessions and DELETE <base>/chat/:id do not exist (404), and any principal reads any session', async () => {
  const { handler } = setup('shared');
  await alicesPausedSession(handler, 'open-s');
  for (const request of [get('/sessions', alice), del('/chat/open-s', alice)]) {
    const response = await handler(request);
    assert.equal(response.status, 404);
    assert.deepEqual(await response.json(), { error: 'Not Found' });
  }
  assert.equal((await handler(get('/chat/open-s', strangers[0]!))).status, 200);
});

test("owned: the useChat endpoint continues the caller's own session by chat id and lists it", async () => {
  const { handler } = setup();
  const first = await handler(post('/ui', uiMessage('chat-1', 'hello'), alice));
  assert.equal(first.status, 200);
  await first.text();
  const again = await handler(post('/ui', uiMessage('chat-1', 'again'), alice));
  assert.equal(again.status, 200);
  assert.match(await again.text(), /again/);
  const transcript = (await (await handler(get('/chat/chat-1', alice))).json()) as { messages: unknown[] };
  assert.equal(transcript.messages.length, 4);
  const listed = (await (await handler(get('/sessions', alice))).json()) as {
    sessions: { sessionId: string; title: string }[];
  };
  assert.deepEqual(
    listed.sessions.map((s) => [s.sessionId, s.title]),
    [['chat-1', 'hello']],
  );
});

test('owned: anonymous callers: a server-made id works by id, a chosen id for a new session is 400 before anything else', async () => {
  const { agent } = setup();
  const handler = agentHandler(agent, { basePath: '/agent', auth: [anonymous()] });
  const made = (await (await handler(new Request(BASE, { method: 'POST', body: '{"message":"hi"}' }))).json()) as {
    sessionId: string;
  };
  const read = await handler(new Request(`${BASE}/chat/${made.sessionId}`));
  assert.equal(read.status, 200);
  const chosen = await handler(new Request(BASE, { method: 'POST', body: '{"message":"hi","sessionId":"my-choice"}' }));
  assert.equal(chosen.status, 400);
  assert.match(((await chosen.json()) as { error: string }).error, /sessionId/);
  assert.equal((await handler(new Request(`${BASE}/chat/my-choice`))).status, 404);
  assert.equal((await handler(new Request(`${BASE}/sessions`))).status, 403);
});

test("agentHandler refuses an 'owned' agent without auth at creation (AGENT_AUTH_CONFIG_INVALID)", () => {
  const { agent } = setup();
  assert.throws(
    () => agentHandler(agent),
    (error: unknown) =>
      error instanceof AuthConfigError && error.code === 'AGENT_AUTH_CONFIG_INVALID' && /owned/.test(error.message),
  );
  assert.throws(() => agentHandler(agent, { basePath: '/x' }), AuthConfigError);
  agentHandler(agent, { auth: apiToken('a-token-0123456789') });
  agentHandler(setup('shared').agent);
});

test('the property test can fail: a handler that answers a stranger differently is caught', async () => {
  const { handler } = setup();
  const leaky = async (request: Request) => {
    const response = await handler(request);
    return response.status === 404 && new URL(request.url).pathname.includes('leak')
      ? new Response(await response.text(), { status: 404, headers: { 'content-type': 'application/json' } })
      : response;
  };
  await alicesPausedSession(handler, 'leak-1');
  const stranger = strangers[0]!;
  const mine = await seen(await leaky(get('/chat/leak-1', stranger)));
  const unknown = await seen(await leaky(get('/chat/never', stranger)));
  assert.notDeepEqual(mine, unknown);
  assert.equal(seededRandom(1).int(10), seededRandom(1).int(10));
});

test("owned: authorize() decides a send to another's session before its run: the agent's turn is never entered", async () => {
  // A store whose turns are counted: a send refused by the agent's own check enters the turn first.
  const entered: string[] = [];
  const store = memoryStore();
  const counted = Object.assign(Object.create(null), store, {
    withSession: <T>(sessionId: string, turn: (s: typeof store) => Promise<T>): Promise<T> => {
      entered.push(sessionId);
      return turn(counted);
    },
  });
  const agent = createAgent({ name: 'web', model: echoModel(), store: counted, sessions: 'owned' });
  const handler = agentHandler(agent, { basePath: '/agent', auth: asHeader });
  assert.equal((await handler(post('', { message: 'mine', sessionId: 's-alice' }, alice))).status, 200);
  assert.deepEqual(entered, ['s-alice']);
  const bob = strangers[0]!;
  for (const request of [
    post('', { message: 'take over', sessionId: 's-alice' }, bob),
    post('/chat', { message: 'take over', sessionId: 's-alice' }, bob),
    post('/chat', { message: 'take over', sessionId: 's-alice' }, bob, { accept: 'text/event-stream' }),
    post('/ui', uiMessage('s-alice', 'take over'), bob),
  ]) {
    const response = await handler(request);
    assert.equal(response.status, 404);
    assert.deepEqual(await response.json(), { error: 'Session not found' });
  }
  assert.deepEqual(entered, ['s-alice'], 'a refused send never reaches the agent');
  // The owner still continues it, and a new id is still a new session.
  assert.equal((await handler(post('/chat', { message: 'again', sessionId: 's-alice' }, alice))).status, 200);
  assert.equal((await handler(post('', { message: 'new', sessionId: 's-bob' }, bob))).status, 200);
  assert.deepEqual(entered, ['s-alice', 's-alice', 's-bob']);
});
