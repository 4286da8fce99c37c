import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentHandler, createAgent, memoryStore } from '../../src/index.ts';
import type { Model } from '../../src/index.ts';
import { abortWaitingModel } from '../helpers/waiting-model.ts';

test('a client that disconnects aborts the run, and the handler logs no error for it', async () => {
  const agent = createAgent({ name: 'slow', model: abortWaitingModel().model, store: memoryStore() });
  const handler = agentHandler(agent, { basePath: '/agent' });
  const errors: unknown[][] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => {
    errors.push(args);
  };
  try {
    const controller = new AbortController();
    const pending = handler(
      new Request('http://localhost/agent', {
        method: 'POST',
        body: JSON.stringify({ message: 'hi' }),
        headers: { 'content-type': 'application/json' },
        signal: controller.signal,
      }),
    );
    setTimeout(() => controller.abort(), 20);
    const response = await pending;
    assert.equal(response.status, 503);
    assert.equal(errors.length, 0);
  } finally {
    console.error = original;
  }
});

/** A request whose `signal` counts its reads (Deno.serve, in its default mode, warns on the first response of a request whose signal was read). */
function countingRequest(url: string, init: RequestInit): { request: Request; reads: () => number } {
  const request = new Request(url, init);
  const signal = request.signal;
  let reads = 0;
  Object.defineProperty(request, 'signal', { get: () => (reads++, signal) });
  return { request, reads: () => reads };
}

const STREAMED: [string, string, Record<string, string>][] = [
  ['POST /chat with Accept: text/event-stream', '/agent/chat', { accept: 'text/event-stream' }],
  ['POST /ui', '/agent/ui', {}],
];
const streamedBody = (path: string) =>
  path.endsWith('/ui')
    ? JSON.stringify({
        id: 'chat-abort',
        trigger: 'submit-message',
        messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
      })
    : JSON.stringify({ message: 'hi' });

for (const [name, path, headers] of STREAMED) {
  test(`${name}: the streamed run never reads the request's signal, and stops when the client stops reading (the body is cancelled)`, async () => {
    const { model, started, aborted } = abortWaitingModel();
    const agent = createAgent({ name: 'slow', model, store: memoryStore() });
    const handler = agentHandler(agent, { basePath: '/agent', auth: 'stream-token-0123456789' });
    const { request, reads } = countingRequest(`http://localhost${path}`, {
      method: 'POST',
      body: streamedBody(path),
      headers: { 'content-type': 'application/json', authorization: 'Bearer stream-token-0123456789', ...headers },
    });
    const response = await handler(request);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    await started;
    await response.body!.cancel();
    assert.equal(((await aborted) as Error).name, 'AbortError');
    assert.equal(reads(), 0);
  });
}

test('a streamed run that completes is never aborted, and the signal of its request is never read', async () => {
  let signalOfRun: AbortSignal | undefined;
  const model: Model = { generate: async ({ signal }) => ((signalOfRun = signal), { text: 'done' }) };
  const handler = agentHandler(createAgent({ name: 'quick', model, store: memoryStore() }), { basePath: '/agent' });
  for (const [, path, headers] of STREAMED) {
    const { request, reads } = countingRequest(`http://localhost${path}`, {
      method: 'POST',
      body: streamedBody(path),
      headers: { 'content-type': 'application/json', ...headers },
    });
    const text = await (await handler(request)).text();
    assert.match(text, /done/);
    assert.equal(signalOfRun?.aborted, false);
    assert.equal(reads(), 0);
  }
});

test('routes that run no agent never read the request signal: health, a refusal, a transcript, approvals', async () => {
  const agent = createAgent({ name: 'reads', model: { generate: async () => ({ text: 'ok' }) }, store: memoryStore() });
  const handler = agentHandler(agent, { basePath: '/agent', auth: 'reads-token-0123456789' });
  const { sessionId } = await agent.send('hello');
  const authorization = 'Bearer reads-token-0123456789';
  const cases: [string, RequestInit, number][] = [
    ['/agent/health', {}, 200],
    ['/agent', { method: 'POST', body: '{"message":"hi"}' }, 401],
    [`/agent/chat/${sessionId}`, { headers: { authorization } }, 200],
    [`/agent/approvals?sessionId=${sessionId}`, { headers: { authorization } }, 200],
  ];
  for (const [path, init, status] of cases) {
    const { request, reads } = countingRequest(`http://localhost${path}`, init);
    assert.equal((await handler(request)).status, status, path);
    assert.equal(reads(), 0, path);
  }
});
