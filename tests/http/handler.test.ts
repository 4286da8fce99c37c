// The route handler (spec "Endpoints", "Route handler auth option", "Errors"; design §5):
// every route, open and behind each form of the `auth` option, and the route errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { agentHandler, MAX_BODY_BYTES } from '../../src/http/index.ts';
import { apiToken, AuthConfigError, AuthError, basic, jwt, wwwAuthenticateLines } from '../../src/auth/index.ts';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { AuthFn, AuthOption, Principal } from '../../src/auth/index.ts';
import { captureConsoleError } from '../helpers/console.ts';
import { basicAuthorization } from '../helpers/requests.ts';
import {
  DEPLOY_MESSAGE,
  pausedSession,
  principalAgent,
  readEvents,
  type PrincipalAgent,
} from '../helpers/http-agent.ts';

const BASE = 'http://localhost/agent';
const TOKEN = 'route-token-0123456789';
const SECRET = 'a-test-hmac-secret-of-at-least-32-bytes';
const ISSUER = 'https://id.example';

function post(path: string, body: unknown, headers: HeadersInit = {}): Request {
  return new Request(BASE + path, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
function get(path: string, headers: HeadersInit = {}): Request {
  return new Request(BASE + path, { headers });
}

async function signedJwt(sub: string): Promise<{ token: string; principal: Principal }> {
  const iat = Math.floor(Date.now() / 1000);
  const claims = { sub, iss: ISSUER, aud: 'agent', iat, exp: iat + 600 };
  const token = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(SECRET));
  return { token, principal: { id: sub, type: 'user', authenticator: 'jwt', issuer: ISSUER, claims } };
}

/** Every route of design §5 but health: how to call it with the caller's headers, what it answers, and where the principal shows. */
interface RouteCase {
  name: string;
  /** Prepares what the route needs (a session, a paused run) and returns how to build its request. */
  prepare(fixture: PrincipalAgent): Promise<(headers: HeadersInit) => Request>;
  status: number;
  /** How the principal that auth accepted is seen by the agent; absent for routes that start no run. */
  principalSeen?(fixture: PrincipalAgent, response: Response): Promise<Principal | undefined>;
  /** What is seen is the decider as recorded: its id, authenticator and issuer (design §33). */
  decider?: boolean;
}

const deciderOf = ({ id, authenticator, issuer }: Principal) => ({
  id,
  authenticator,
  ...(issuer !== undefined && { issuer }),
});

const ranAs = async (fixture: PrincipalAgent) => {
  assert.deepEqual(
    fixture.instructionsSaw.at(-1),
    fixture.modelSaw.at(-1),
    'instructions and model see the same principal',
  );
  return fixture.modelSaw.at(-1);
};

const ROUTES: RouteCase[] = [
  {
    name: 'POST <base>',
    prepare: async () => (headers) => post('', { message: 'hello' }, headers),
    status: 200,
    principalSeen: ranAs,
  },
  {
    name: 'POST <base>/chat',
    prepare: async () => (headers) => post('/chat', { message: 'hello', sessionId: 'chat-json' }, headers),
    status: 200,
    principalSeen: ranAs,
  },
  {
    name: 'POST <base>/chat (event stream)',
    prepare: async () => (headers) => post('/chat', { message: 'hello' }, { ...headers, accept: 'text/event-stream' }),
    status: 200,
    principalSeen: async (fixture, response) => {
      assert.equal((await readEvents(response)).at(-1)?.event, 'finish');
      return ranAs(fixture);
    },
  },
  {
    name: 'GET <base>/chat/:id',
    prepare: async ({ agent }) => {
      await agent.send('kept', { sessionId: 'chat-read' });
      return (headers) => get('/chat/chat-read', headers);
    },
    status: 200,
  },
  {
    name: 'GET <base>/approvals',
    prepare: async ({ agent }) => {
      await pausedSession(agent, 'approvals-list');
      return (headers) => get('/approvals?sessionId=approvals-list', headers);
    },
    status: 200,
  },
  {
    name: 'POST <base>/approvals/:approvalId',
    prepare: async ({ agent }) => {
      const paused = await pausedSession(agent, 'approvals-decide');
      return (headers) => post(`/approvals/${paused.approvals[0]!.id}`, { approved: true }, headers);
    },
    status: 200,
    // The decider is recorded beside the transcript (the resumed run keeps its own principal).
    principalSeen: async ({ agent }) => (await agent.transcript('approvals-decide')).audit.at(-1)?.decidedBy as never,
    decider: true,
  },
  {
    name: 'POST <base>/ui',
    prepare: async () => (headers) =>
      post(
        '/ui',
        {
          id: 'ui-chat',
          trigger: 'submit-message',
          messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hello' }] }],
        },
        headers,
      ),
    status: 200,
    principalSeen: async (fixture, response) => {
      assert.equal((await readEvents(response)).at(-1)?.data, '[DONE]');
      return ranAs(fixture);
    },
  },
];

/** The forms of the `auth` option: how to build it, the credentials it accepts, the principal they give, and the challenges of its 401. */
interface AuthForm {
  name: string;
  auth(): AuthOption;
  accepted(): Promise<{ headers: HeadersInit; principal: Principal }>;
  rejected: HeadersInit;
  challenges: string[];
}

const LIST_CHALLENGES = ['Bearer', 'Basic realm="agent", charset="UTF-8"'];
const list = () => [
  jwt({ secret: SECRET, issuer: ISSUER, audience: 'agent' }),
  basic({ users: { ada: 'correct horse' } }),
  apiToken(TOKEN, { id: 'ci' }),
];
const customEntry: AuthFn = Object.assign(
  (request: Request) =>
    request.headers.get('x-team') === 'blue' ? { id: 'blue-team', type: 'service' as const } : null,
  { challenges: [{ scheme: 'Team', realm: 'agents' }] },
);

const AUTH_FORMS: AuthForm[] = [
  {
    name: 'a list of entries, accepted by jwt()',
    auth: list,
    accepted: async () => {
      const { token, principal } = await signedJwt('user-7');
      return { headers: { authorization: `Bearer ${token}` }, principal };
    },
    rejected: { authorization: basicAuthorization('ada', 'wrong') },
    challenges: LIST_CHALLENGES,
  },
  {
    name: 'a list of entries, accepted by basic()',
    auth: list,
    accepted: async () => ({
      headers: { authorization: basicAuthorization('ada', 'correct horse') },
      principal: { id: 'ada', type: 'user', authenticator: 'basic' },
    }),
    rejected: {},
    challenges: LIST_CHALLENGES,
  },
  {
    name: 'a list of entries, accepted by apiToken()',
    auth: list,
    accepted: async () => ({
      headers: { authorization: `Bearer ${TOKEN}` },
      principal: { id: 'ci', type: 'service', authenticator: 'api-token' },
    }),
    rejected: { authorization: `Bearer ${TOKEN}x` },
    // A bearer credential the list reads and refused: RFC 6750 §3.1 invalid_token on the Bearer challenge.
    challenges: ['Bearer error="invalid_token"', 'Basic realm="agent", charset="UTF-8"'],
  },
  {
    name: 'a single entry',
    auth: () => customEntry,
    accepted: async () => ({
      headers: { 'x-team': 'blue' },
      principal: { id: 'blue-team', type: 'service', authenticator: 'custom' },
    }),
    rejected: { 'x-team': 'red' },
    challenges: ['Team realm="agents"'],
  },
  {
    name: 'a token string (apiToken)',
    auth: () => TOKEN,
    accepted: async () => ({
      headers: { authorization: `Bearer ${TOKEN}` },
      principal: { id: 'api-token', type: 'service', authenticator: 'api-token' },
    }),
    rejected: { authorization: 'Bearer not-the-token' },
    challenges: ['Bearer error="invalid_token"'],
  },
  {
    name: 'a function returning a boolean',
    auth: () => (request: Request) => request.headers.get('x-allow') === 'yes',
    accepted: async () => ({
      headers: { 'x-allow': 'yes' },
      principal: { id: 'anonymous', type: 'user', authenticator: 'custom' },
    }),
    rejected: { 'x-allow': 'no' },
    challenges: ['Bearer'],
  },
];

async function assertUnauthorized(response: Response, challenges: string[]): Promise<void> {
  assert.equal(response.status, 401);
  assert.equal(await response.text(), '{"error":"Unauthorized"}');
  assert.equal(response.headers.get('content-type'), 'application/json');
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.deepEqual(wwwAuthenticateLines(response), challenges);
  assert.equal(response.headers.get('www-authenticate'), challenges.join(', '));
}

for (const route of ROUTES) {
  test(`without auth the route is open: ${route.name}`, async () => {
    const fixture = principalAgent();
    const request = await route.prepare(fixture);
    const response = await agentHandler(fixture.agent, { basePath: '/agent' })(request({}));
    assert.equal(response.status, route.status);
    if (route.principalSeen)
      assert.equal(await route.principalSeen(fixture, response), undefined, 'no principal without auth');
    else await response.body?.cancel();
  });

  for (const form of AUTH_FORMS) {
    test(`auth as ${form.name}: ${route.name} refuses a request no entry accepts with 401 and the list's challenges`, async () => {
      const fixture = principalAgent();
      const handler = agentHandler(fixture.agent, { basePath: '/agent', auth: form.auth() });
      const request = await route.prepare(fixture);
      const runsBefore = fixture.modelSaw.length;
      await assertUnauthorized(await handler(request(form.rejected)), form.challenges);
      assert.equal(fixture.modelSaw.length, runsBefore, 'the refused request started no run');
    });

    test(`auth as ${form.name}: ${route.name} accepts, and the accepted principal reaches it`, async () => {
      const fixture = principalAgent();
      const handler = agentHandler(fixture.agent, { basePath: '/agent', auth: form.auth() });
      const { headers, principal } = await form.accepted();
      const response = await handler((await route.prepare(fixture))(headers));
      assert.equal(response.status, route.status);
      if (route.principalSeen)
        assert.deepEqual(
          await route.principalSeen(fixture, response),
          route.decider && principal !== undefined ? deciderOf(principal) : principal,
        );
      else await response.body?.cancel();
    });
  }
}

test('an entry that throws AuthError(403) stops the list with 403 {"error":"Forbidden"}, no-store, no challenge', async () => {
  const { agent, modelSaw } = principalAgent();
  const banned: AuthFn = () => {
    throw new AuthError(403);
  };
  const handler = agentHandler(agent, { basePath: '/agent', auth: [banned, apiToken(TOKEN)] });
  const response = await handler(post('', { message: 'hi' }, { authorization: `Bearer ${TOKEN}` }));
  assert.equal(response.status, 403);
  assert.equal(await response.text(), '{"error":"Forbidden"}');
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.equal(response.headers.get('www-authenticate'), null);
  assert.equal(modelSaw.length, 0);
});

test('an entry that throws anything else answers 500 with a generic body and logs with console.error', async () => {
  const { agent } = principalAgent();
  const broken: AuthFn = () => {
    throw new Error(`database down while checking ${TOKEN}`);
  };
  const handler = agentHandler(agent, { basePath: '/agent', auth: broken });
  const { result: response, calls } = await captureConsoleError(() =>
    handler(post('', { message: 'hi' }, { authorization: `Bearer ${TOKEN}` })),
  );
  assert.equal(response.status, 500);
  assert.equal(await response.text(), '{"error":"Internal Server Error"}');
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.equal(calls.length, 1);
});

test('the principal comes from auth only: a principal in the body or in metadata is not the run principal', async () => {
  const { agent, modelSaw, metadataSaw } = principalAgent();
  const forged = { id: 'root', type: 'user', authenticator: 'jwt' };
  const open = agentHandler(agent, { basePath: '/agent' });
  assert.equal(
    (await open(post('', { message: 'hi', principal: forged, metadata: { principal: forged } }))).status,
    200,
  );
  assert.equal(modelSaw.at(-1), undefined);
  assert.deepEqual(metadataSaw.at(-1), { principal: forged }, 'metadata is what the caller sent, as data');

  const guarded = agentHandler(agent, { basePath: '/agent', auth: TOKEN });
  const response = await guarded(post('', { message: 'hi', principal: forged }, { authorization: `Bearer ${TOKEN}` }));
  assert.equal(response.status, 200);
  assert.deepEqual(modelSaw.at(-1), { id: 'api-token', type: 'service', authenticator: 'api-token' });
});

test('POST <base> passes metadata and sessionId to the run and answers the run result', async () => {
  const { agent, metadataSaw } = principalAgent();
  const handler = agentHandler(agent, { basePath: '/agent' });
  const response = await handler(
    post('', { message: 'hello there', sessionId: 'sess-1', metadata: { tenant: 'acme' } }),
  );
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'application/json');
  const result = await response.json();
  assert.equal(result.sessionId, 'sess-1');
  assert.equal(result.status, 'completed');
  assert.equal(result.text, 'hello there');
  assert.deepEqual(metadataSaw.at(-1), { tenant: 'acme' });
});

test('GET <base>/chat/:id answers { sessionId, messages }, 404 for an unknown session', async () => {
  const { agent } = principalAgent();
  const handler = agentHandler(agent, { basePath: '/agent' });
  await handler(post('/chat', { message: 'first', sessionId: 'team/42' }));
  const response = await handler(get('/chat/team%2F42'));
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), {
    sessionId: 'team/42',
    messages: [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'first' },
    ],
  });
  const missing = await handler(get('/chat/no-such-session'));
  assert.equal(missing.status, 404);
  assert.deepEqual(await missing.json(), { error: 'Session not found' });
});

test('approval routes: GET lists the pending approvals; POST decides one and answers the resumed run, as the principal the run started with', async () => {
  const { agent, modelSaw, deployed } = principalAgent();
  const starter: Principal = { id: 'ada', type: 'user', authenticator: 'basic' };
  const handler = agentHandler(agent, { basePath: '/agent', auth: list() });
  const started = await handler(
    post(
      '',
      { message: DEPLOY_MESSAGE, sessionId: 'deploy-1' },
      { authorization: basicAuthorization('ada', 'correct horse') },
    ),
  );
  const paused = await started.json();
  assert.equal(paused.status, 'awaiting-approval');

  const listed = await handler(get('/approvals?sessionId=deploy-1', { authorization: `Bearer ${TOKEN}` }));
  assert.equal(listed.status, 200);
  const { approvals } = await listed.json();
  assert.deepEqual(approvals, paused.approvals);
  assert.deepEqual(approvals[0].arguments, { env: 'prod' });

  const decided = await handler(
    post(`/approvals/${approvals[0].id}`, { approved: true, reason: 'ship it' }, { authorization: `Bearer ${TOKEN}` }),
  );
  assert.equal(decided.status, 200);
  const result = await decided.json();
  assert.equal(result.status, 'completed');
  assert.deepEqual(deployed, [{ env: 'prod' }]);
  assert.deepEqual(modelSaw.at(-1), starter, 'the resumed run keeps the principal it started with');
  const audit = (await agent.transcript('deploy-1')).audit.at(-1);
  assert.deepEqual(audit?.decidedBy, { id: 'ci', authenticator: 'api-token' });
  assert.equal(audit?.reason, 'ship it');

  const again = await handler(
    post(`/approvals/${approvals[0].id}`, { approved: true }, { authorization: `Bearer ${TOKEN}` }),
  );
  assert.equal(again.status, 404);
  assert.deepEqual(await again.json(), { error: 'Approval not found' });
});

test('a denied approval resumes the run without executing the tool', async () => {
  const { agent, deployed } = principalAgent();
  const handler = agentHandler(agent, { basePath: '/agent' });
  const paused = await pausedSession(agent, 'deny-1');
  const response = await handler(
    post(`/approvals/${paused.approvals[0]!.id}`, { approved: false, reason: 'not today' }),
  );
  assert.equal(response.status, 200);
  assert.equal((await response.json()).status, 'completed');
  assert.deepEqual(deployed, []);
});

test('GET <base>/health answers 200 {"status":"ok"} with any or no credentials', async () => {
  const { agent } = principalAgent();
  const { token } = await signedJwt('user-7');
  for (const auth of [undefined, ...AUTH_FORMS.map((form) => form.auth())]) {
    const handler = agentHandler(agent, { basePath: '/agent', ...(auth !== undefined && { auth }) });
    const credentials: HeadersInit[] = [
      {},
      { authorization: 'Bearer wrong' },
      { authorization: `Bearer ${token}` },
      { authorization: basicAuthorization('ada', 'nope') },
    ];
    for (const headers of credentials) {
      const response = await handler(get('/health', headers));
      assert.equal(response.status, 200);
      assert.equal(await response.text(), '{"status":"ok"}');
    }
  }
});

test('GET <base>/health answers 200 even when every entry would throw, and asks no entry', async () => {
  const { agent } = principalAgent();
  let asked = 0;
  const throwing: AuthFn = () => {
    asked++;
    throw new Error('entry bug');
  };
  const forbidding: AuthFn = () => {
    asked++;
    throw new AuthError(403);
  };
  const handler = agentHandler(agent, { basePath: '/agent', auth: [throwing, forbidding] });
  const { result: response, calls } = await captureConsoleError(() => handler(get('/health')));
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { status: 'ok' });
  assert.equal(asked, 0);
  assert.equal(calls.length, 0);
});

test('auth runs before routing: an unknown path answers 401 without credentials, 404 with them', async () => {
  const { agent } = principalAgent();
  const handler = agentHandler(agent, { basePath: '/agent', auth: TOKEN });
  await assertUnauthorized(await handler(get('/nowhere')), ['Bearer']);
  await assertUnauthorized(await handler(new Request('http://localhost/elsewhere')), ['Bearer']);
  const found = await handler(get('/nowhere', { authorization: `Bearer ${TOKEN}` }));
  assert.equal(found.status, 404);
  assert.deepEqual(await found.json(), { error: 'Not Found' });
  const open = agentHandler(agent, { basePath: '/agent' });
  for (const url of [`${BASE}/nowhere`, `${BASE}/chat/a/b`, `${BASE}/ui/x`, `${BASE}x`, 'http://localhost/health']) {
    const response = await open(new Request(url));
    assert.equal(response.status, 404, url);
    assert.deepEqual(await response.json(), { error: 'Not Found' });
  }
});

test('a wrong method answers 405 with Allow (behind auth: 401 first)', async () => {
  const { agent } = principalAgent();
  const open = agentHandler(agent, { basePath: '/agent' });
  const cases: [string, string, string][] = [
    ['GET', '', 'POST'],
    ['PUT', '/chat', 'POST'],
    ['PUT', '/chat/abc', 'GET'],
    ['POST', '/approvals', 'GET'],
    ['GET', '/approvals/abc', 'POST'],
    ['GET', '/ui', 'POST'],
    ['POST', '/health', 'GET'],
  ];
  for (const [method, path, allow] of cases) {
    const response = await open(new Request(BASE + path, { method }));
    assert.equal(response.status, 405, `${method} ${path}`);
    assert.equal(response.headers.get('allow'), allow);
    assert.deepEqual(await response.json(), { error: 'Method Not Allowed' });
  }
  const guarded = agentHandler(agent, { basePath: '/agent', auth: TOKEN });
  await assertUnauthorized(await guarded(get('')), ['Bearer']);
  assert.equal((await guarded(get('', { authorization: `Bearer ${TOKEN}` }))).status, 405);
});

test('a body that is not JSON, or not of the route\'s shape, answers 400 {"error": …}', async () => {
  const { agent, modelSaw } = principalAgent();
  const handler = agentHandler(agent, { basePath: '/agent' });
  const paused = await pausedSession(agent, 'bad-bodies');
  const runs = modelSaw.length;
  const cases: [string, string][] = [
    ['', '{"message":'],
    ['', ''],
    ['', '[1,2]'],
    ['', '{"message":42}'],
    ['', '{"message":"hi","metadata":[1]}'],
    ['', '{"message":"hi","sessionId":""}'],
    ['/chat', '"hello"'],
    ['/chat', '{"message":""}'],
    [`/approvals/${paused.approvals[0]!.id}`, '{"approved":"yes"}'],
    [`/approvals/${paused.approvals[0]!.id}`, '{"approved":true,"reason":7}'],
    ['/ui', '{"messages":[]}'],
    [
      '/ui',
      '{"id":"c","messages":[{"id":"a","role":"assistant","parts":[{"type":"text","text":"x"}]}],"trigger":"submit-message"}',
    ],
    [
      '/ui',
      '{"id":"c","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"x"}]}],"trigger":"regenerate-message"}',
    ],
  ];
  for (const [path, body] of cases) {
    const response = await handler(post(path, body));
    assert.equal(response.status, 400, `${path} ${body}`);
    const answer = await response.json();
    assert.deepEqual(Object.keys(answer), ['error']);
    assert.equal(typeof answer.error, 'string');
  }
  const invalidUtf8 = new Request(BASE, { method: 'POST', body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]) });
  assert.equal((await handler(invalidUtf8)).status, 400);
  assert.equal((await handler(get('/approvals'))).status, 400, 'the sessionId query parameter is required');
  assert.equal(modelSaw.length, runs, 'no bad body started a run');
});

test('a body over 1 MiB answers 413: refused by Content-Length before reading, and counted while reading a body without one', async () => {
  const { agent, modelSaw } = principalAgent();
  const handler = agentHandler(agent, { basePath: '/agent' });
  let pulled = false;
  const unread = new ReadableStream<Uint8Array>(
    {
      pull() {
        pulled = true;
      },
    },
    { highWaterMark: 0 },
  );
  const declared = new Request(BASE, {
    method: 'POST',
    headers: { 'content-length': String(MAX_BODY_BYTES + 1) },
    body: unread,
    duplex: 'half',
  } as RequestInit);
  const refused = await handler(declared);
  assert.equal(refused.status, 413);
  assert.deepEqual(Object.keys(await refused.json()), ['error']);
  assert.equal(pulled, false);

  // A valid JSON body of 4 MiB (a message padded with spaces), streamed in 64 KiB chunks without Content-Length.
  const chunk = 64 * 1024;
  let sent = 0;
  const oversized = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"message":"hi"}'));
        else if (sent < 4 * MAX_BODY_BYTES) controller.enqueue(new Uint8Array(chunk).fill(0x20));
        else controller.close();
        sent += chunk;
      },
    },
    { highWaterMark: 0 },
  );
  const streamed = await handler(new Request(BASE, { method: 'POST', body: oversized, duplex: 'half' } as RequestInit));
  assert.equal(streamed.status, 413);
  assert.ok(sent <= MAX_BODY_BYTES + 2 * chunk, 'reading stopped at the limit');

  const padded = (size: number) => {
    const prefix = '{"message":"';
    return `${prefix + 'x'.repeat(size - prefix.length - 2)}"}`;
  };
  assert.equal((await handler(post('', padded(MAX_BODY_BYTES + 1)))).status, 413);
  const atLimit = await handler(post('', padded(MAX_BODY_BYTES)));
  assert.equal(atLimit.status, 200, 'exactly 1 MiB is accepted');
  await atLimit.body?.cancel();
  assert.equal(modelSaw.length, 1);
});

test('a new message to a session waiting for an approval answers 409', async () => {
  const { agent } = principalAgent();
  const handler = agentHandler(agent, { basePath: '/agent' });
  await pausedSession(agent, 'busy');
  const response = await handler(post('/chat', { message: 'hello', sessionId: 'busy' }));
  assert.equal(response.status, 409);
  assert.deepEqual(Object.keys(await response.json()), ['error']);
});

test('a run that fails answers a generic 500 and logs, never the error text', async () => {
  const { agent } = principalAgent();
  const failing = {
    ...agent,
    send: async () => {
      throw new Error(`store password ${TOKEN}`);
    },
  };
  const handler = agentHandler(failing, { basePath: '/agent' });
  const { result: response, calls } = await captureConsoleError(() => handler(post('', { message: 'hi' })));
  assert.equal(response.status, 500);
  assert.equal(await response.text(), '{"error":"Internal Server Error"}');
  assert.equal(calls.length, 1);
});

test('a model that fails answers 502 {"error":"The model failed"}, logged, without the model error\'s text', async () => {
  const secret = 'sk-provider-key-0123';
  const agent = createAgent({
    name: 'down',
    model: {
      generate: async () => {
        throw new Error(`bad key ${secret}`);
      },
    },
    store: memoryStore(),
  });
  const handler = agentHandler(agent, { basePath: '/agent' });
  const { result: response, calls } = await captureConsoleError(() => handler(post('', { message: 'hi' })));
  assert.equal(response.status, 502);
  assert.equal(await response.text(), '{"error":"The model failed"}');
  assert.equal(calls.length, 1);
});

test('basePath defaults to "" (routes at the root) and is validated at creation', async () => {
  const { agent } = principalAgent();
  const handler = agentHandler(agent);
  assert.equal((await handler(new Request('http://localhost/health'))).status, 200);
  const sent = await handler(new Request('http://localhost/', { method: 'POST', body: '{"message":"root"}' }));
  assert.equal((await sent.json()).text, 'root');
  const trailing = agentHandler(agent, { basePath: '/agent/' });
  assert.equal((await trailing(get('/health'))).status, 200);
  for (const basePath of ['agent', '/agent?x=1', 7]) {
    assert.throws(() => agentHandler(agent, { basePath: basePath as string }), AuthConfigError);
  }
});

test('an auth option that cannot work fails at creation with AGENT_AUTH_CONFIG_INVALID', () => {
  const { agent } = principalAgent();
  for (const auth of ['', 'not a token', [() => null, 'x'] as unknown as AuthOption]) {
    assert.throws(() => agentHandler(agent, { auth }), { code: 'AGENT_AUTH_CONFIG_INVALID' });
  }
});

function withNodeEnv<T>(value: string | undefined, body: () => T): T {
  const env = (globalThis as unknown as { process: { env: Record<string, string | undefined> } }).process.env;
  const before = env.NODE_ENV;
  if (value === undefined) delete env.NODE_ENV;
  else env.NODE_ENV = value;
  try {
    return body();
  } finally {
    if (before === undefined) delete env.NODE_ENV;
    else env.NODE_ENV = before;
  }
}

async function captureWarnings(body: () => Promise<void>): Promise<unknown[][]> {
  const original = console.warn;
  const calls: unknown[][] = [];
  console.warn = (...args: unknown[]) => {
    calls.push(args);
  };
  try {
    await body();
  } finally {
    console.warn = original;
  }
  return calls;
}

test('without auth and NODE_ENV=production, one warning is logged per handler (none per request)', async () => {
  const { agent } = principalAgent();
  const warnings = await captureWarnings(async () => {
    const handler = withNodeEnv('production', () => agentHandler(agent, { basePath: '/agent' }));
    for (let i = 0; i < 3; i++) assert.equal((await handler(post('', { message: `hi ${i}` }))).status, 200);
  });
  assert.equal(warnings.length, 1);
  assert.match(String(warnings[0]![0]), /without auth/);
});

test('no warning with auth, or without auth outside production', async () => {
  const { agent } = principalAgent();
  const warnings = await captureWarnings(async () => {
    withNodeEnv('production', () => agentHandler(agent, { auth: TOKEN }));
    withNodeEnv('development', () => agentHandler(agent));
    withNodeEnv(undefined, () => agentHandler(agent));
  });
  assert.deepEqual(warnings, []);
});

test('a tool failure reaches the HTTP caller (JSON and event stream) only as tool "<name>" failed; the details go to the server log', async () => {
  const secretTool = {
    name: 'db',
    description: '',
    parameters: { type: 'object' },
    execute: () => {
      throw new Error('password=hunter2-secret');
    },
  };
  const agent = createAgent({ name: 't', model: echoModel(), tools: [secretTool], store: memoryStore() });
  const handler = agentHandler(agent, { basePath: '/agent' });
  const { result: bodies, calls } = await captureConsoleError(async () => [
    await (await handler(post('', { message: '/tool db {}' }))).text(),
    await (await handler(post('/chat', { message: '/tool db {}' }, { accept: 'text/event-stream' }))).text(),
  ]);
  for (const body of bodies) {
    assert.match(body, /tool \\"db\\" failed/);
    assert.ok(!body.includes('hunter2'), body);
  }
  assert.equal(calls.length, 2);
  assert.ok(calls.every((args) => String((args[1] as Error).message).includes('hunter2')));
});
