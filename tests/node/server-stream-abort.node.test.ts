// A streamed answer's run stops when its client goes away, on the node server: midway through
// the stream, and before the answer was even sent (the run still setting up). The run hears it
// through the cancelled body, not the request's signal (which Deno.serve flags when read).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { createAgent, memoryStore } from '../../src/agent/index.ts';
import { serve } from '../../src/node.ts';
import { abortWaitingModel } from '../helpers/waiting-model.ts';

delete process.env.AGENT_API_TOKEN;

const STREAMED: [string, string, Record<string, string>, string][] = [
  [
    'POST /chat with Accept: text/event-stream',
    '/agent/chat',
    { accept: 'text/event-stream' },
    JSON.stringify({ message: 'wait' }),
  ],
  [
    'POST /ui',
    '/agent/ui',
    {},
    JSON.stringify({
      id: 'node-abort',
      trigger: 'submit-message',
      messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'wait' }] }],
    }),
  ],
];

/** An agent whose instructions wait for `gate` (the run still setting up), then whose model waits for the abort. */
function slowAgent(gate: Promise<void>) {
  let setUp!: () => void;
  const { model, started, aborted } = abortWaitingModel();
  const agent = createAgent({
    name: 'slow',
    model,
    store: memoryStore(),
    instructions: async () => (setUp(), await gate, 'be slow'),
  });
  return { agent, setUp: new Promise<void>((resolve) => (setUp = resolve)), started, aborted };
}

function post(url: string, headers: Record<string, string>, body: string, onResponse?: () => void): ClientRequest {
  const req = httpRequest(
    url,
    { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, agent: false },
    (res) => {
      res.resume();
      onResponse?.();
    },
  );
  req.on('error', () => undefined);
  req.end(body);
  return req;
}

for (const [name, path, headers, body] of STREAMED) {
  test(`node server, ${name}: a client that leaves midway through the stream stops its run`, {
    timeout: 20_000,
  }, async (t) => {
    const slow = slowAgent(Promise.resolve());
    const server = await serve({ agent: slow.agent, port: 0, log: 'off' });
    t.after(() => server.close());
    let answered!: () => void;
    const streaming = new Promise<void>((resolve) => (answered = resolve));
    const req = post(`${server.url}${path}`, headers, body, answered);
    await Promise.all([slow.started, streaming]);
    req.destroy();
    assert.equal(((await slow.aborted) as Error).name, 'AbortError');
  });

  test(`node server, ${name}: a client that leaves before the answer stops its run once it would begin`, {
    timeout: 20_000,
  }, async (t) => {
    let open!: () => void;
    const slow = slowAgent(new Promise<void>((resolve) => (open = resolve)));
    const server = await serve({ agent: slow.agent, port: 0, log: 'off' });
    t.after(() => server.close());
    let answered = false;
    const req = post(`${server.url}${path}`, headers, body, () => (answered = true));
    await slow.setUp;
    req.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    open();
    assert.equal(((await slow.aborted) as Error).name, 'AbortError');
    assert.equal(answered, false);
  });
}
