// A store that cannot reach its database (`StoreError` code STORE_UNAVAILABLE, from
// agentward/postgres or a store of one's own) answers 503 {"error":"Service Unavailable"} on
// every route that touches it, streaming ones included; the error's text never goes out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Store } from '../../src/agent/types.ts';
import { agentHandler } from '../../src/http/index.ts';
import { StoreError } from '../../src/postgres/index.ts';
import { captureConsoleError } from '../helpers/console.ts';

function flakyStore(error: () => Error): { store: Store; down: (value: boolean) => void } {
  const inner = memoryStore();
  let isDown = false;
  const guard =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      isDown ? Promise.reject(error()) : call(...args);
  const store: Store = {
    loadSession: guard(inner.loadSession),
    saveSession: guard(inner.saveSession),
    loadCheckpoint: guard(inner.loadCheckpoint),
    saveCheckpoint: guard(inner.saveCheckpoint),
    deleteCheckpoint: guard(inner.deleteCheckpoint),
    listCheckpoints: guard(inner.listCheckpoints),
    loadMemory: guard(inner.loadMemory),
    appendMemory: guard(inner.appendMemory),
  };
  return { store, down: (value) => void (isDown = value) };
}

const SECRET_DETAIL = 'connect ECONNREFUSED 10.0.0.7:5432 password=hunter2';

for (const [name, make] of [
  [
    'StoreError',
    () => new StoreError('STORE_UNAVAILABLE', 'the database is unavailable', { cause: new Error(SECRET_DETAIL) }),
  ],
  ['a store of its own', () => Object.assign(new Error(SECRET_DETAIL), { code: 'STORE_UNAVAILABLE' })],
] as const) {
  test(`route handler: STORE_UNAVAILABLE (${name}) answers 503 {"error":"Service Unavailable"} on every route; the next request works once the store is back`, async () => {
    const { store, down } = flakyStore(make);
    const handler = agentHandler(createAgent({ name: 'flaky', model: echoModel(), store }), { basePath: '/agent' });
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      handler(
        new Request(`http://localhost/agent${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        }),
      );
    const ok = await post('', { message: 'hello', sessionId: 's' });
    assert.equal(ok.status, 200);

    down(true);
    const { result: responses, calls } = await captureConsoleError(async () => [
      await post('', { message: 'again', sessionId: 's' }),
      await post('/chat', { message: 'again', sessionId: 's' }, { accept: 'text/event-stream' }),
      await handler(new Request('http://localhost/agent/chat/s')),
      await handler(new Request('http://localhost/agent/approvals?sessionId=s')),
      await post('/approvals/some-id', { approved: true }),
    ]);
    for (const response of responses) {
      assert.equal(response.status, 503);
      assert.equal(response.headers.get('content-type'), 'application/json');
      const text = await response.text();
      assert.equal(text, '{"error":"Service Unavailable"}');
    }
    assert.ok(calls.length > 0, 'the failure is logged for the operator');

    down(false);
    const back = await post('', { message: 'back', sessionId: 's' });
    assert.equal(back.status, 200);
    assert.equal(((await back.json()) as { text: string }).text, 'back');
  });
}

test('route handler: an error that only looks like an agent error by its code (not STORE_UNAVAILABLE) stays a 500', async () => {
  const { store, down } = flakyStore(() => Object.assign(new Error('boom'), { code: 'SESSION_NOT_FOUND' }));
  const handler = agentHandler(createAgent({ name: 'flaky', model: echoModel(), store }));
  down(true);
  const { result } = await captureConsoleError(() => handler(new Request('http://localhost/chat/s')));
  assert.equal(result.status, 500);
});
