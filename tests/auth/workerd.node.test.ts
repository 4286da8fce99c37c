import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startWorker, type RunningWorker } from '../helpers/workerd.ts';
import { basicAuthorization } from '../helpers/requests.ts';

const TOKEN = 'workerd-token_0123456789abcdef';
let worker: RunningWorker;

before(async () => {
  worker = await startWorker({ entry: 'tests/helpers/workerd/auth-worker.ts', bindings: { API_TOKEN: TOKEN } });
});
after(async () => {
  await worker?.dispose();
});

const send = (path: string, headers: Record<string, string> = {}) => worker.fetch(`http://worker${path}`, { headers });

async function accepted(response: Response): Promise<{ principal: Record<string, unknown>; frozen: boolean }> {
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as { principal: Record<string, unknown>; frozen: boolean };
}

async function assertAuthResponse(response: Response, status: number, body: string): Promise<void> {
  assert.equal(response.status, status);
  assert.equal(await response.text(), body);
  assert.equal(response.headers.get('content-type'), 'application/json');
  assert.equal(response.headers.get('cache-control'), 'no-store');
}

test('workerd: basic() accepts a configured user; principal { id: user name, authenticator: basic }, frozen', async () => {
  const body = await accepted(await send('/strict', { authorization: basicAuthorization('ada', 'lovelace') }));
  assert.deepEqual(body, { principal: { id: 'ada', type: 'user', authenticator: 'basic' }, frozen: true });
});

test('workerd: basic() NFC-normalizes user names and passwords (decomposed input matches composed configuration)', async () => {
  const body = await accepted(
    await send('/strict', { authorization: basicAuthorization('e\u0301lodie', 'cafe\u0301-cre\u0300me') }),
  );
  assert.deepEqual(body.principal, { id: '\u00e9lodie', type: 'user', authenticator: 'basic' });
});

test('workerd: apiToken() accepts the exact token with the id option; principal type service', async () => {
  const body = await accepted(await send('/strict', { authorization: `bearer   ${TOKEN}` }));
  assert.deepEqual(body, { principal: { id: 'ci-bot', type: 'service', authenticator: 'api-token' }, frozen: true });
});

test('workerd: a custom entry principal gets authenticator custom and deeply frozen claims', async () => {
  const body = await accepted(await send('/strict', { 'x-partner': 'acme' }));
  assert.deepEqual(body, {
    principal: { id: 'acme', type: 'service', authenticator: 'custom', claims: { tier: { level: 'gold' } } },
    frozen: true,
  });
});

test('workerd: anonymous() last in the list accepts everyone else', async () => {
  const body = await accepted(await send('/open', { authorization: 'Bearer wrong' }));
  assert.deepEqual(body, { principal: { id: 'anonymous', type: 'user', authenticator: 'anonymous' }, frozen: true });
});

test('workerd: when every entry skips, 401 with one WWW-Authenticate per distinct challenge in list order', async () => {
  for (const authorization of ['Bearer wrong', basicAuthorization('ada', 'wrong'), 'Basic %%%']) {
    const response = await send('/strict', { authorization });
    const challenges = response.headers.get('www-authenticate');
    await assertAuthResponse(response, 401, '{"error":"Unauthorized"}');
    const error = authorization.startsWith('Bearer') ? ' error="invalid_token"' : '';
    assert.equal(challenges, `Bearer${error}, Basic realm="agent", charset="UTF-8", Partner realm="partners \\"eu\\""`);
  }
});

test('workerd: AuthError(403) stops the list with 403 and no challenge', async () => {
  const response = await send('/open', { 'x-banned': '1', authorization: `Bearer ${TOKEN}` });
  assert.equal(response.headers.get('www-authenticate'), null);
  await assertAuthResponse(response, 403, '{"error":"Forbidden"}');
});

test('workerd: any other throw is a 500 with the generic body, logged with console.error, never sent', async () => {
  const response = await send('/open', { 'x-bug': '1' });
  const text = await response.clone().text();
  assert.doesNotMatch(text, /hunter2|database/);
  assert.equal(response.headers.get('www-authenticate'), null);
  assert.doesNotMatch([...response.headers].join('\n'), /hunter2/);
  await assertAuthResponse(response, 500, '{"error":"Internal Server Error"}');
  const log = await worker.waitForLog((line) => line.message.includes('hunter2'));
  assert.equal(log.level, 'error');
});
