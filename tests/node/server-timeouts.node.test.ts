// Issue 28, finding 7 (design §19): serve() limits slow clients. The head must arrive within
// timeouts.headersMs and the whole body within timeouts.bodyMs after it (30 s each by default);
// past either the client gets 408 and the connection closes. Raw sockets, so nothing but the
// server decides when the request ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { serve, SERVE_TIMEOUTS } from '../../src/node/server.ts';

const TOKEN = 'timeouts-token-0123456789';

async function start(t: { after(fn: () => Promise<void>): void }, timeouts?: { headersMs?: number; bodyMs?: number }) {
  const server = await serve({
    agent: createAgent({ name: 'slow', model: echoModel(), store: memoryStore() }),
    auth: TOKEN,
    port: 0,
    log: 'off',
    ...(timeouts && { timeouts }),
  });
  t.after(() => server.close());
  return server;
}

/** Writes `text` and resolves with what the server sent once it closed the connection (or after 15 s, with `closed: false`). */
function stall(url: string, text: string): Promise<{ answer: string; closed: boolean; ms: number }> {
  const { port } = new URL(url);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket: Socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ answer, closed: false, ms: Date.now() - started });
    }, 15_000);
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ answer, closed: true, ms: Date.now() - started });
    });
  });
}

test('serve(): the defaults are 30 s for the head and 30 s for the body', () => {
  assert.deepEqual(SERVE_TIMEOUTS, { headersMs: 30_000, bodyMs: 30_000 });
});

test('serve(): a head that stalls gets 408 and the connection closes (timeouts.headersMs)', async (t) => {
  const server = await start(t, { headersMs: 400, bodyMs: 60_000 });
  const { answer, closed } = await stall(
    server.url,
    `POST /agent HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\n`,
  );
  assert.equal(closed, true, 'the server closed the connection');
  assert.match(answer, /^HTTP\/1\.1 408 /);
});

test('serve(): half a body then a stall gets 408 {"error":"Request Timeout"} and the connection closes (timeouts.bodyMs)', async (t) => {
  const server = await start(t, { headersMs: 60_000, bodyMs: 400 });
  const body = '{"message":"hello, this body never ends"}';
  const head = `POST /agent HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const { answer, closed } = await stall(server.url, head + body.slice(0, 10));
  assert.equal(closed, true, 'the server closed the connection');
  assert.match(answer, /^HTTP\/1\.1 408 /);
  assert.match(answer, /connection: close/i);
  assert.ok(answer.endsWith('{"error":"Request Timeout"}'), answer);
  // The server goes on serving everyone else.
  const response = await fetch(`${server.url}/agent`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body,
  });
  assert.equal(response.status, 200);
});

test('serve(): a stalled body after the answer went out (401 before the body was read) still loses its connection', async (t) => {
  const server = await start(t, { headersMs: 60_000, bodyMs: 400 });
  const head = `POST /agent HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
  const { answer, closed, ms } = await stall(server.url, `${head}{"message"`);
  assert.equal(closed, true);
  assert.match(answer, /^HTTP\/1\.1 401 /);
  assert.ok(ms < 5_000, `closed by the body limit, not by node's keep-alive timeout (${ms} ms)`);
});

test('serve(): a body that arrives in time is served, however it is split', async (t) => {
  const server = await start(t, { headersMs: 2_000, bodyMs: 2_000 });
  const body = '{"message":"in time"}';
  const { port } = new URL(server.url);
  const answer = await new Promise<string>((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `POST /agent HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      );
      setTimeout(() => socket.write(body.slice(5)), 200);
    });
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('close', () => resolve(text));
  });
  assert.match(answer, /^HTTP\/1\.1 200 /);
  assert.match(answer, /"text":"in time"/);
});

test('serve(): timeouts is checked at start-up (closed, whole milliseconds)', async () => {
  const agent = createAgent({ name: 'slow', model: echoModel(), store: memoryStore() });
  await assert.rejects(
    serve({ agent, port: 0, timeouts: { headerMs: 5 } } as never),
    /serve\(\): timeouts: unknown option "headerMs" \(did you mean "headersMs"\?\)/,
  );
  await assert.rejects(serve({ agent, port: 0, timeouts: { bodyMs: 0 } }), /timeouts\.bodyMs must be a whole number/);
  await assert.rejects(
    serve({ agent, port: 0, timeouts: { bodyMs: Number.NaN } }),
    /timeouts\.bodyMs must be a whole number/,
  );
});
