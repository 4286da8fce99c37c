// Limits on node servers (design §22): the client address is the socket's, handed by serve() and
// toNodeListener() (also to a handler of your own that passes its Request on to agentHandler),
// never a header a caller can forge (X-Forwarded-For, CF-Connecting-IP); clientAddress reading a
// trusted proxy's header replaces it; a streamed answer holds its slot until it is out, and a
// client that goes away gives it back. serve() takes limits closed. Without auth, MCP tools/call
// is counted by the address clientAddress reads, read before the body (design §26). Wire facts
// with node:http.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import type { Model, ModelDelta } from '../../src/agent/types.ts';
import { anonymous, apiToken } from '../../src/auth/index.ts';
import { agentHandler } from '../../src/http/handler.ts';
import { serve, toNodeListener } from '../../src/node.ts';
import { headerLines } from '../helpers/http-client.ts';

const closers: (() => Promise<unknown>)[] = [];
after(() => Promise.all(closers.map((close) => close())));

async function listen(handler: (request: Request) => Response | Promise<Response>): Promise<string> {
  const server: Server = createServer(toNodeListener(handler));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  rawHeaders: string[];
  text: string;
}

/** A request from a chosen loopback address (Linux routes all of 127.0.0.0/8 to the loopback interface). */
function from(
  localAddress: string,
  url: string,
  {
    method = 'POST',
    headers = {},
    body = JSON.stringify({ message: 'hi' }),
  }: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method, localAddress, agent: false, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, text }),
        );
      },
    );
    req.on('error', reject);
    req.end(method === 'GET' ? undefined : body);
  });
}

const FORGED = {
  'x-forwarded-for': '192.0.2.99',
  'cf-connecting-ip': '192.0.2.98',
  'x-real-ip': '192.0.2.97',
  forwarded: 'for=192.0.2.96',
};
const echo = () => createAgent({ name: 'limits', model: echoModel() });

test("serve(): failures counts 401s by the socket's address; forged forwarding headers change nothing; another address has its own count", async () => {
  let verified = 0;
  const counting = apiToken('good-token-0123456789');
  const entry = Object.assign((request: Request) => (verified++, counting(request)), {
    challenges: counting.challenges,
  });
  const server = await serve({
    agent: echo(),
    auth: entry,
    limits: { failures: { limit: 2, windowSec: 600 } },
    port: 0,
    log: 'off',
  });
  closers.push(() => server.close());
  const url = `${server.url}/agent`;
  const bad = { authorization: 'Bearer wrong' };
  assert.equal((await from('127.0.0.1', url, { headers: bad })).status, 401);
  assert.equal((await from('127.0.0.1', url, { headers: { ...bad, ...FORGED } })).status, 401);
  const before = verified;
  const refused = await from('127.0.0.1', url, {
    headers: { authorization: 'Bearer good-token-0123456789', ...FORGED },
  });
  assert.equal(refused.status, 429);
  assert.equal(refused.text, '{"error":"Too Many Requests"}');
  assert.equal(refused.headers['ratelimit-policy'], '"failures";q=2;w=600');
  assert.match(String(refused.headers.ratelimit), /^"failures";r=0;t=\d+$/);
  assert.match(String(refused.headers['retry-after']), /^\d+$/);
  assert.deepEqual(headerLines(refused.rawHeaders, 'retry-after').length, 1);
  assert.equal(verified, before, 'no entry ran');
  assert.equal(
    (await from('127.0.0.2', url, { headers: { authorization: 'Bearer good-token-0123456789' } })).status,
    200,
    'another address',
  );
  assert.equal((await from('127.0.0.1', `${server.url}/agent/health`, { method: 'GET' })).status, 200);
});

test('serve(): anonymous() callers are counted per socket address; a forged X-Forwarded-For is no new budget', async () => {
  const server = await serve({
    agent: echo(),
    auth: anonymous(),
    limits: { requests: { limit: 2, windowSec: 600 } },
    port: 0,
    log: 'off',
  });
  closers.push(() => server.close());
  const url = `${server.url}/agent`;
  assert.equal((await from('127.0.0.1', url)).status, 200);
  assert.equal((await from('127.0.0.1', url, { headers: { 'x-forwarded-for': '192.0.2.1' } })).status, 200);
  assert.equal((await from('127.0.0.1', url, { headers: { 'x-forwarded-for': '192.0.2.2' } })).status, 429);
  const other = await from('127.0.0.3', url);
  assert.equal(other.status, 200);
  assert.equal(other.headers.ratelimit?.toString().startsWith('"requests";r=1;'), true);
});

test("toNodeListener(agentHandler(…)) and a handler of your own that hands its Request on: the socket's address reaches the limits", async () => {
  const limits = { failures: { limit: 1, windowSec: 600 } };
  const direct = await listen(
    agentHandler(echo(), { basePath: '/agent', auth: apiToken('tok-0123456789abcdef'), limits }),
  );
  const inner = agentHandler(echo(), { basePath: '/agent', auth: apiToken('tok-0123456789abcdef'), limits });
  const wrapped = await listen((request) => inner(request));
  for (const url of [direct, wrapped]) {
    assert.equal((await from('127.0.0.1', url, { headers: { authorization: 'Bearer bad' } })).status, 401);
    assert.equal(
      (await from('127.0.0.1', url, { headers: { authorization: 'Bearer tok-0123456789abcdef', ...FORGED } })).status,
      429,
      url,
    );
    assert.equal(
      (await from('127.0.0.4', url, { headers: { authorization: 'Bearer tok-0123456789abcdef' } })).status,
      200,
      url,
    );
  }
  // A handler that builds a Request of its own has no socket address to hand on: failures answers 500 and says why, once.
  const rebuilt = await listen((request) =>
    inner(
      new Request(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        duplex: 'half',
      } as RequestInit),
    ),
  );
  const errors: unknown[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void errors.push(args.join(' '));
  try {
    assert.equal(
      (await from('127.0.0.1', rebuilt, { headers: { authorization: 'Bearer tok-0123456789abcdef' } })).status,
      500,
    );
  } finally {
    console.error = original;
  }
  assert.deepEqual(errors, ['agentward: limits.failures needs the client address: give clientAddress']);
});

test("behind a proxy: clientAddress reading the proxy's X-Forwarded-For keys the callers; where it answers nothing, the socket's address is used", async () => {
  // The last address of X-Forwarded-For is the one the proxy in front of this server appended.
  const clientAddress = (request: Request) =>
    request.headers.get('x-forwarded-for')?.split(',').at(-1)?.trim() || undefined;
  const server = await serve({
    agent: echo(),
    auth: anonymous(),
    limits: { requests: { limit: 1, windowSec: 600 }, clientAddress },
    port: 0,
    log: 'off',
  });
  closers.push(() => server.close());
  const url = `${server.url}/agent`;
  assert.equal((await from('127.0.0.1', url, { headers: { 'x-forwarded-for': '198.51.100.1' } })).status, 200);
  assert.equal(
    (await from('127.0.0.1', url, { headers: { 'x-forwarded-for': '203.0.113.50, 198.51.100.1' } })).status,
    429,
    'the same client behind the proxy',
  );
  assert.equal((await from('127.0.0.1', url, { headers: { 'x-forwarded-for': '198.51.100.2' } })).status, 200);
  assert.equal((await from('127.0.0.1', url)).status, 200, "no header: the socket's address");
  assert.equal((await from('127.0.0.1', url)).status, 429);
});

/** A model whose streamed turns wait for `release()` after their first word. */
function heldStream() {
  const waiting: (() => void)[] = [];
  const model: Model = {
    async generate() {
      return { text: 'done' };
    },
    async *stream(request): AsyncIterable<ModelDelta> {
      yield { type: 'text', text: 'first ' };
      await new Promise<void>((resolve, reject) => {
        waiting.push(resolve);
        request.signal?.addEventListener('abort', () => reject(request.signal!.reason), { once: true });
      });
      yield { type: 'text', text: 'last' };
    },
  };
  return { model, waiting };
}

test('serve(): a streamed answer holds its concurrency slot until it is out; a client that goes away mid-stream gives it back', async () => {
  const { model, waiting } = heldStream();
  const server = await serve({
    agent: createAgent({ name: 'streams', model }),
    auth: apiToken('tok-0123456789abcdef'),
    limits: { concurrent: 1 },
    port: 0,
    log: 'off',
  });
  closers.push(() => server.close());
  const url = `${server.url}/agent`;
  const headers = { authorization: 'Bearer tok-0123456789abcdef', 'content-type': 'application/json' };
  const streamed = await fetch(`${url}/chat`, {
    method: 'POST',
    headers: { ...headers, accept: 'text/event-stream' },
    body: JSON.stringify({ message: 'hi' }),
  });
  assert.equal(streamed.status, 200);
  for (let i = 0; i < 200 && waiting.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  const refused = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ message: 'meanwhile' }) });
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), '1');
  waiting.shift()!();
  assert.match(await streamed.text(), /event: finish/);
  assert.equal((await fetch(url, { method: 'POST', headers, body: JSON.stringify({ message: 'after' }) })).status, 200);

  // The client goes away mid-stream: the run is aborted, the stream ends, the slot is free.
  const controller = new AbortController();
  const gone = await fetch(`${url}/chat`, {
    method: 'POST',
    headers: { ...headers, accept: 'text/event-stream' },
    body: JSON.stringify({ message: 'leaving' }),
    signal: controller.signal,
  });
  assert.equal(gone.status, 200);
  for (let i = 0; i < 200 && waiting.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  controller.abort();
  let status = 429;
  for (let i = 0; i < 200 && status === 429; i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    status = (await fetch(url, { method: 'POST', headers, body: JSON.stringify({ message: 'back' }) })).status;
  }
  assert.equal(status, 200);
});

test('serve() takes limits closed, as agentHandler does', async () => {
  await assert.rejects(
    serve({ agent: echo(), limit: { concurrent: 1 }, port: 0, log: 'off' } as never),
    /serve\(\): unknown option "limit" \(did you mean "limits"\?\)/,
  );
  await assert.rejects(
    serve({
      agent: echo(),
      auth: apiToken('tok-0123456789abcdef'),
      limits: { concurent: 1 } as never,
      port: 0,
      log: 'off',
    }),
    /limits: unknown option "concurent" \(did you mean "concurrent"\?\)/,
  );
  await assert.rejects(
    serve({
      agent: echo(),
      auth: apiToken('tok-0123456789abcdef'),
      limits: { requests: { limit: -1, windowSec: 60 } },
      port: 0,
      log: 'off',
    }),
    /limits\.requests\.limit must be a positive integer/,
  );
});

test('serve() without auth, with limits.clientAddress: MCP tools/call is served and counted by the address clientAddress reads (design §26: no 500)', async () => {
  const server = await serve({
    agent: echo(),
    port: 0,
    log: 'off',
    mcp: true,
    limits: {
      requests: { limit: 2, windowSec: 3600 },
      clientAddress: (request) => request.headers.get('x-client') ?? undefined,
    },
  });
  closers.push(() => server.close());
  const call = (client: string, id: number) =>
    from('127.0.0.1', `${server.url}/agent/mcp`, {
      headers: { accept: 'application/json, text/event-stream', 'x-client': client },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'ask', arguments: { message: `call ${id}` } },
      }),
    });
  const first = await call('198.51.100.1', 1);
  assert.equal(first.status, 200, first.text);
  assert.equal(JSON.parse(first.text).result.structuredContent.text, 'call 1');
  assert.match(String(first.headers.ratelimit), /^"requests";r=1;/);
  assert.equal((await call('198.51.100.1', 2)).status, 200);
  assert.equal((await call('198.51.100.1', 3)).status, 429);
  assert.equal((await call('198.51.100.2', 4)).status, 200, 'another address is another caller');
});
