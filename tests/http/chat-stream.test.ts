// POST <base>/chat with `Accept: text/event-stream`: the run as server-sent events,
// `event: <RunEvent type>` + `data: <RunEvent JSON>`, ending with `finish`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentHandler } from '../../src/http/index.ts';
import { createAgent, memoryStore } from '../../src/agent/index.ts';
import type { Model, Principal } from '../../src/agent/types.ts';
import { captureConsoleError } from '../helpers/console.ts';
import { DEPLOY_MESSAGE, pausedSession, principalAgent, readEvents } from '../helpers/http-agent.ts';

const BASE = 'http://localhost/agent';
const TOKEN = 'stream-token-0123456789';
const streamRequest = (body: unknown, headers: HeadersInit = {}) =>
  new Request(`${BASE}/chat`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

test('POST <base>/chat streams the run as server-sent events when the request accepts text/event-stream', async () => {
  const { agent, modelSaw } = principalAgent();
  const handler = agentHandler(agent, { basePath: '/agent', auth: TOKEN });
  const response = await handler(
    streamRequest({ message: 'one two three', sessionId: 'sse-1' }, { authorization: `Bearer ${TOKEN}` }),
  );
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'text/event-stream');
  assert.equal(response.headers.get('cache-control'), 'no-cache');

  const events = await readEvents(response);
  const parsed = events.map(({ event, data }) => {
    const value = JSON.parse(data);
    assert.equal(event, value.type, 'the event name is the RunEvent type');
    return value;
  });
  assert.deepEqual(
    parsed.map((e) => e.type),
    ['start', 'step-start', 'text-delta', 'text-delta', 'text-delta', 'step-finish', 'finish'],
  );
  assert.deepEqual(parsed[0], { type: 'start', sessionId: 'sse-1' });
  assert.equal(
    parsed
      .filter((e) => e.type === 'text-delta')
      .map((e) => e.text)
      .join(''),
    'one two three',
  );
  const finish = parsed.at(-1);
  assert.equal(finish.result.status, 'completed');
  assert.equal(finish.result.text, 'one two three');
  assert.equal(finish.result.sessionId, 'sse-1');
  const principal: Principal = { id: 'api-token', type: 'service', authenticator: 'api-token' };
  assert.deepEqual(modelSaw, [principal]);
});

test('the event stream of a run that waits for approval carries the tool call and the approval request, then finish', async () => {
  const { agent } = principalAgent();
  const handler = agentHandler(agent, { basePath: '/agent' });
  const events = (await readEvents(await handler(streamRequest({ message: DEPLOY_MESSAGE, sessionId: 'sse-2' })))).map(
    (e) => JSON.parse(e.data),
  );
  assert.deepEqual(
    events.map((e) => e.type),
    ['start', 'step-start', 'tool-call', 'approval-request', 'step-finish', 'finish'],
  );
  const [pending] = await agent.pendingApprovals('sse-2');
  assert.deepEqual(events[3].approval, pending);
  assert.equal(events[2].call.id, pending!.toolCallId);
  assert.equal(events.at(-1).result.status, 'awaiting-approval');
});

test('an Accept header listing text/event-stream among other types streams; without it the answer is JSON', async () => {
  const { agent } = principalAgent();
  const handler = agentHandler(agent, { basePath: '/agent' });
  const listed = await handler(
    streamRequest({ message: 'hi' }, { accept: 'application/json, Text/Event-Stream;q=0.9' }),
  );
  assert.equal(listed.headers.get('content-type'), 'text/event-stream');
  await listed.body?.cancel();
  const plain = await handler(new Request(`${BASE}/chat`, { method: 'POST', body: '{"message":"hi"}' }));
  assert.equal(plain.headers.get('content-type'), 'application/json');
  assert.equal((await plain.json()).text, 'hi');
});

test('a streamed run that fails before it starts answers its error status, not a stream', async () => {
  const { agent } = principalAgent();
  const handler = agentHandler(agent, { basePath: '/agent' });
  await pausedSession(agent, 'sse-busy');
  const response = await handler(streamRequest({ message: 'hello', sessionId: 'sse-busy' }));
  assert.equal(response.status, 409);
  assert.equal(response.headers.get('content-type'), 'application/json');
});

test('a streamed run that fails midway ends with one error event that never carries the error text, and is logged', async () => {
  const secret = 'sk-provider-secret-0123';
  const failing: Model = {
    generate: async () => ({ text: 'unused' }),
    async *stream() {
      yield { type: 'text', text: 'partial ' };
      throw new Error(`provider rejected key ${secret}`);
    },
  };
  const agent = createAgent({ name: 'failing', model: failing, store: memoryStore() });
  const handler = agentHandler(agent, { basePath: '/agent' });
  const { result: text, calls } = await captureConsoleError(async () =>
    (await handler(streamRequest({ message: 'hi' }))).text(),
  );
  const types = [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
  assert.deepEqual(types, ['start', 'step-start', 'text-delta', 'error']);
  assert.ok(!text.includes(secret));
  assert.equal(calls.length, 1);
});
