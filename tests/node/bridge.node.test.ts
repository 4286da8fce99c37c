// Issue 19: the lean node bridge (toNodeListener() and serve()). JSON answers go out in one piece
// with Content-Length; streamed answers stay streamed; request bodies stream in with
// back-pressure and their limits; the request's signal follows the client; 401 challenges are
// each their own header line. Wire facts read with node:http's client.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Model } from '../../src/agent/types.ts';
import { apiToken, AuthConfigError, basic } from '../../src/auth/index.ts';
import { agentHandler } from '../../src/http/handler.ts';
import { jsonResponse } from '../../src/http/responses.ts';
import { serve, toNodeListener } from '../../src/node.ts';
import { headerLines, send } from '../helpers/http-client.ts';

const closers: (() => Promise<unknown>)[] = [];
after(() => Promise.all(closers.map((close) => close())));

async function listen(handler: (request: Request) => Response | Promise<Response>): Promise<string> {
  const server: Server = createServer(toNodeListener(handler));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function serveAgent(model: Model = echoModel()): Promise<string> {
  const server = await serve({
    agent: createAgent({ name: 'bridge', model, store: memoryStore() }),
    auth: [basic({ users: { ada: 'pw-0123456789' } }), apiToken('bridge-token-0123456789')],
    port: 0,
    log: 'off',
  });
  closers.push(() => server.close());
  return server.url;
}

const TOKEN = { authorization: 'Bearer bridge-token-0123456789', 'content-type': 'application/json' };

test('serve(): JSON answers (200, 401, 404, health) carry Content-Length equal to their bytes, never chunked', async () => {
  const url = await serveAgent();
  const answers = [
    await send(`${url}/agent`, { method: 'POST', headers: TOKEN, body: JSON.stringify({ message: 'héllo ✓' }) }),
    await send(`${url}/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"message":"x"}',
    }),
    await send(`${url}/agent/nowhere`, { headers: TOKEN }),
    await send(`${url}/agent/health`),
  ];
  assert.deepEqual(
    answers.map((a) => a.status),
    [200, 401, 404, 200],
  );
  for (const answer of answers) {
    assert.equal(answer.headers['transfer-encoding'], undefined);
    assert.equal(Number(answer.headers['content-length']), Buffer.byteLength(answer.text));
    assert.equal(headerLines(answer.rawHeaders, 'content-length').length, 1);
    assert.equal(answer.headers['content-type'], 'application/json');
    assert.equal(answer.headers['cache-control'], 'no-store');
  }
  assert.equal((JSON.parse(answers[0]!.text) as { text: string }).text, 'héllo ✓');
  assert.deepEqual(headerLines(answers[1]!.rawHeaders, 'www-authenticate'), [
    'Basic realm="agent", charset="UTF-8"',
    'Bearer',
  ]);
  assert.equal(answers[1]!.text, '{"error":"Unauthorized"}');
});

test('serve(): server-sent events stay streamed: chunked, no Content-Length, the first event out before the run ends', async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const model: Model = {
    generate: async () => ({ text: 'done' }),
    async *stream() {
      yield { type: 'text', text: 'first ' };
      await held;
      yield { type: 'text', text: 'last' };
    },
  };
  const url = await serveAgent(model);
  const { headers, firstChunk, rest } = await new Promise<{
    headers: Record<string, unknown>;
    firstChunk: string;
    rest: Promise<string>;
  }>((resolve, reject) => {
    const req = httpRequest(
      `${url}/agent/chat`,
      { method: 'POST', headers: { ...TOKEN, accept: 'text/event-stream' }, agent: false },
      (res) => {
        res.setEncoding('utf8');
        let text = '';
        const rest = new Promise<string>((done) => res.on('end', () => done(text)));
        res.once('data', (chunk: string) => {
          text += chunk;
          res.on('data', (more: string) => (text += more));
          resolve({ headers: res.headers, firstChunk: chunk, rest });
        });
      },
    );
    req.on('error', reject);
    req.end('{"message":"stream me"}');
  });
  assert.equal(headers['transfer-encoding'], 'chunked');
  assert.equal(headers['content-length'], undefined);
  assert.match(firstChunk, /event: /, 'an event arrived while the model was still held');
  release();
  const text = await rest;
  assert.match(text, /event: finish/);
  assert.match(text, /last/);
});

test("toNodeListener(): a handler's own Response (string, stream, empty) is written as it is; a non-Response is a 500", async () => {
  const url = await listen(async (request) => {
    const path = new URL(request.url).pathname;
    if (path === '/text')
      return new Response('plain text', { status: 201, headers: { 'content-type': 'text/plain', 'x-one': 'a' } });
    if (path === '/stream') {
      const parts = ['a', 'b', 'c'];
      return new Response(
        new ReadableStream({
          pull: (c) => (parts.length > 0 ? c.enqueue(new TextEncoder().encode(parts.shift())) : c.close()),
        }),
      );
    }
    if (path === '/empty') return new Response(null, { status: 204 });
    if (path === '/json') {
      const response = jsonResponse({ ok: true });
      response.headers.set('x-added', 'later');
      return response;
    }
    return 'not a response' as unknown as Response;
  });
  const text = await send(`${url}/text`);
  assert.equal(text.status, 201);
  assert.equal(text.text, 'plain text');
  assert.equal(text.headers['x-one'], 'a');
  assert.equal((await send(`${url}/stream`)).text, 'abc');
  assert.equal((await send(`${url}/empty`)).status, 204);
  const json = await send(`${url}/json`);
  assert.equal(json.text, '{"ok":true}');
  assert.equal(json.headers['x-added'], 'later', 'headers set on the response after it was built still go out');
  assert.equal(json.headers['content-length'], '11');
  const logged: unknown[] = [];
  const log = console.error;
  console.error = (...args: unknown[]) => void logged.push(args[1]);
  let broken: Awaited<ReturnType<typeof send>>;
  try {
    broken = await send(`${url}/other`);
  } finally {
    console.error = log;
  }
  assert.equal(broken.status, 500);
  assert.equal(broken.text, '{"error":"Internal Server Error"}');
  // The server log says why, as an error with a class and a code (design §38), never to the client.
  const [error] = logged;
  assert.ok(error instanceof AuthConfigError, String(error));
  assert.equal(error.code, 'AGENT_AUTH_CONFIG_INVALID');
  assert.equal(
    error.message,
    'toNodeListener(): the handler must return a Response (or a promise of one); got a string',
  );
});

test('toNodeListener(): a read JSON response is not written from the recorded text (its body is gone)', async () => {
  const url = await listen(async () => {
    const response = jsonResponse({ secret: 'read already' });
    await response.text();
    return response;
  });
  await assert.rejects(
    send(`${url}/`),
    'a used body cannot be sent: the connection is dropped rather than the text replayed',
  );
});

test('toNodeListener(): request bodies stream in whole (2 MiB in small chunks, with back-pressure), text() and arrayBuffer() work', async () => {
  const url = await listen(async (request) => {
    const path = new URL(request.url).pathname;
    if (path === '/text') return new Response(String((await request.text()).length));
    const bytes = new Uint8Array(await request.arrayBuffer());
    let sum = 0;
    for (const byte of bytes) sum = (sum + byte) % 1_000_003;
    return new Response(`${bytes.length}:${sum}`);
  });
  const big = Buffer.alloc(2 * 1024 * 1024, 0).map((_, i) => i % 251);
  let expected = 0;
  for (const byte of big) expected = (expected + byte) % 1_000_003;
  const answer = await new Promise<string>((resolve, reject) => {
    const req = httpRequest(
      `${url}/bytes`,
      { method: 'POST', headers: { 'transfer-encoding': 'chunked' }, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve(text));
      },
    );
    req.on('error', reject);
    for (let offset = 0; offset < big.length; offset += 16_384) req.write(big.subarray(offset, offset + 16_384));
    req.end();
  });
  assert.equal(answer, `${big.length}:${expected}`);
  assert.equal((await send(`${url}/text`, { method: 'POST', body: 'x'.repeat(100_000) })).text, '100000');
});

test('serve(): a body over 1 MiB without Content-Length is refused 413 once the limit is passed', {
  timeout: 20_000,
}, async () => {
  const url = await serveAgent();
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      `${url}/agent`,
      { method: 'POST', headers: { ...TOKEN, 'transfer-encoding': 'chunked' }, agent: false },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', (error) =>
      (error as NodeJS.ErrnoException).code === 'EPIPE' || (error as NodeJS.ErrnoException).code === 'ECONNRESET'
        ? undefined
        : reject(error),
    );
    req.write('{"message":"');
    const chunk = 'x'.repeat(64 * 1024);
    let sent = 0;
    const pump = () => {
      while (sent < 3 * 1024 * 1024) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end('"}');
    };
    pump();
  });
  assert.equal(status, 413);
});

test('toNodeListener(): a client that goes away mid-body aborts the signal and fails the body read (no hang)', async () => {
  let outcome!: (value: { aborted: boolean; readFailed: boolean }) => void;
  const seen = new Promise<{ aborted: boolean; readFailed: boolean }>((resolve) => (outcome = resolve));
  let arrived!: () => void;
  const started = new Promise<void>((resolve) => (arrived = resolve));
  const url = await listen(async (request) => {
    arrived();
    let readFailed = false;
    try {
      await request.arrayBuffer();
    } catch {
      readFailed = true;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    outcome({ aborted: request.signal.aborted, readFailed });
    return new Response('late');
  });
  const req = httpRequest(`${url}/`, { method: 'POST', headers: { 'content-length': '1000000' }, agent: false });
  req.on('error', () => undefined);
  req.write('partial');
  await started;
  req.destroy();
  assert.deepEqual(await seen, { aborted: true, readFailed: true });
});

test('the route handler through toNodeListener(): each 401 challenge its own line; the principal reaches the run', async () => {
  const agent = createAgent({ name: 'bridge', model: echoModel(), store: memoryStore() });
  const url = await listen(
    agentHandler(agent, {
      basePath: '/agent',
      auth: [basic({ users: { ada: 'pw-0123456789' } }), apiToken('bridge-token-0123456789')],
    }),
  );
  const refused = await send(`${url}/agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"message":"x"}',
  });
  assert.equal(refused.status, 401);
  assert.deepEqual(headerLines(refused.rawHeaders, 'www-authenticate'), [
    'Basic realm="agent", charset="UTF-8"',
    'Bearer',
  ]);
  assert.equal(refused.headers['content-length'], String(refused.text.length));
  const accepted = await send(`${url}/agent`, { method: 'POST', headers: TOKEN, body: '{"message":"hi"}' });
  assert.equal(accepted.status, 200);
  assert.equal((JSON.parse(accepted.text) as { text: string }).text, 'hi');
});

test('toNodeListener(): a body the handler never reads is drained, so a kept-alive connection serves its next request', {
  timeout: 20_000,
}, async () => {
  const url = await listen(() => new Response('{"error":"Unauthorized"}', { status: 401 }));
  const { Agent } = await import('node:http');
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const post = (size: number) =>
    new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${url}/`, { method: 'POST', agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(Buffer.alloc(size));
    });
  try {
    const statuses = [await post(2 * 1024 * 1024), await post(10), await post(3 * 1024 * 1024), await post(10)];
    assert.deepEqual(statuses, [401, 401, 401, 401]);
  } finally {
    agent.destroy();
  }
});
