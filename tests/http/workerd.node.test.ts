// The route handler, bundled, inside workerd (Miniflare) behind jwt(), basic() and apiToken() lists.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { startWorker, type RunningWorker } from '../helpers/workerd.ts';
import { basicAuthorization } from '../helpers/requests.ts';

const JWT_SECRET = 'workerd-hmac-secret-of-at-least-32-bytes';
const BASIC_PASSWORD = 'correct horse battery';
const API_TOKEN = 'workerd-route-token_0123456789';
let worker: RunningWorker;

before(async () => {
  worker = await startWorker({
    entry: 'tests/helpers/workerd/handler-worker.ts',
    bindings: { JWT_SECRET, BASIC_PASSWORD, API_TOKEN },
  });
});
after(async () => {
  await worker?.dispose();
});

async function bearerJwt(sub: string): Promise<{ authorization: string; claims: Record<string, unknown> }> {
  const iat = Math.floor(Date.now() / 1000);
  const claims = { sub, iss: 'https://id.example', aud: 'agent', iat, exp: iat + 600 };
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(JWT_SECRET));
  return { authorization: `Bearer ${token}`, claims };
}

const send = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  worker.fetch(`http://worker${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/** What the run saw: the model function's principal and the instructions built from the instructions function's. */
async function runSaw(response: Response): Promise<{ modelSaw: unknown; instructions: string }> {
  assert.equal(response.status, 200, await response.clone().text());
  return JSON.parse((await response.json()).text);
}

async function assertUnauthorized(response: Response, challenge: string): Promise<void> {
  assert.equal(response.status, 401);
  assert.equal(await response.text(), '{"error":"Unauthorized"}');
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.equal(response.headers.get('www-authenticate'), challenge);
}

test('workerd: jwt() (HS256 secret) in front of the handler: a valid token reaches the run as its principal, others get 401 Bearer', async () => {
  const { authorization, claims } = await bearerJwt('user-42');
  const saw = await runSaw(await send('/jwt', { message: 'hi' }, { authorization }));
  assert.deepEqual(saw.modelSaw, {
    id: 'user-42',
    type: 'user',
    authenticator: 'jwt',
    issuer: 'https://id.example',
    claims,
  });
  assert.equal(saw.instructions, 'caller jwt:user-42');
  await assertUnauthorized(await send('/jwt', { message: 'hi' }), 'Bearer');
  await assertUnauthorized(
    await send('/jwt', { message: 'hi' }, { authorization: `${authorization}x` }),
    'Bearer error="invalid_token"',
  );
});

test('workerd: basic() in front of the handler: the user reaches the run, a wrong password gets 401 Basic', async () => {
  const saw = await runSaw(
    await send('/basic/chat', { message: 'hi' }, { authorization: basicAuthorization('ada', BASIC_PASSWORD) }),
  );
  assert.deepEqual(saw.modelSaw, { id: 'ada', type: 'user', authenticator: 'basic' });
  assert.equal(saw.instructions, 'caller basic:ada');
  await assertUnauthorized(
    await send('/basic/chat', { message: 'hi' }, { authorization: basicAuthorization('ada', 'wrong') }),
    'Basic realm="agent", charset="UTF-8"',
  );
});

test('workerd: apiToken() in front of the handler: the token reaches the run as the api-token principal', async () => {
  const saw = await runSaw(await send('/token', { message: 'hi' }, { authorization: `Bearer ${API_TOKEN}` }));
  assert.deepEqual(saw.modelSaw, { id: 'api-token', type: 'service', authenticator: 'api-token' });
  await assertUnauthorized(
    await send('/token', { message: 'hi' }, { authorization: 'Bearer nope' }),
    'Bearer error="invalid_token"',
  );
});

test('workerd: a jwt, basic and apiToken list accepts each credential, and its 401 lists the distinct challenges in order', async () => {
  const { authorization } = await bearerJwt('user-1');
  const headers = [
    { authorization },
    { authorization: basicAuthorization('ada', BASIC_PASSWORD) },
    { authorization: `Bearer ${API_TOKEN}` },
  ];
  const authenticators = [];
  for (const h of headers)
    authenticators.push(
      ((await runSaw(await send('/all', { message: 'hi' }, h))).modelSaw as { authenticator: string }).authenticator,
    );
  assert.deepEqual(authenticators, ['jwt', 'basic', 'api-token']);
  await assertUnauthorized(await send('/all', { message: 'hi' }), 'Bearer, Basic realm="agent", charset="UTF-8"');
  await assertUnauthorized(await send('/all/nowhere', {}), 'Bearer, Basic realm="agent", charset="UTF-8"');
});

test('workerd: without auth the routes are open, and no warning is logged (no NODE_ENV on Workers)', async () => {
  const response = await send('/open', { message: 'hi' });
  assert.deepEqual((await runSaw(response)).modelSaw, null);
  await worker.waitForLog((log) => log.message.includes('handlers mounted'));
  assert.deepEqual(
    worker.logs.filter((log) => log.level === 'warn'),
    [],
  );
});

test('workerd: health is open behind every list', async () => {
  for (const base of ['/jwt', '/basic', '/token', '/all']) {
    const response = await worker.fetch(`http://worker${base}/health`);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), '{"status":"ok"}');
  }
});

test('workerd: the SSE chat and the useChat stream run to their end, and an approval is decided through the route', async () => {
  const auth = { authorization: `Bearer ${API_TOKEN}` };
  const chat = await send(
    '/token/chat',
    { message: 'hi', sessionId: 'wd-sse' },
    { ...auth, accept: 'text/event-stream' },
  );
  assert.equal(chat.headers.get('content-type'), 'text/event-stream');
  const events = [...(await chat.text()).matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
  assert.deepEqual(events, ['start', 'step-start', 'text-delta', 'step-finish', 'finish']);

  const ui = await send(
    '/token/ui',
    {
      id: 'wd-ui',
      trigger: 'submit-message',
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'deploy' }] }],
    },
    auth,
  );
  assert.equal(ui.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
  const wire = await ui.text();
  assert.match(wire, /"type":"tool-approval-request"/);
  assert.ok(wire.endsWith('data: {"type":"finish","finishReason":"tool-calls"}\n\ndata: [DONE]\n\n'));

  const listed = await worker.fetch('http://worker/token/approvals?sessionId=wd-ui', { headers: auth });
  const [approval] = (await listed.json()).approvals;
  const decided = await send(`/token/approvals/${approval.id}`, { approved: true }, auth);
  assert.equal(decided.status, 200);
  assert.equal((await decided.json()).status, 'completed');
  const transcript = await worker.fetch('http://worker/token/chat/wd-ui', { headers: auth });
  assert.deepEqual(
    (await transcript.json()).messages.map((m: { role: string }) => m.role),
    ['user', 'assistant', 'tool', 'assistant'],
  );
});
