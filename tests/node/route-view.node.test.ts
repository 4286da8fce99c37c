// Issue 19: serve() and toNodeListener(agentHandler(…)) answer the agent routes from node's own
// request (RouteRequest), without building a Web Request or Response for a JSON answer. They must
// answer byte for byte what the route handler answers through a Web Request, header values must
// read as `Headers.get` reads them (two Authorization lines are one joined value, not the first),
// and an auth entry of your own still gets a real Request with its body.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { apiToken, basic } from '../../src/auth/index.ts';
import type { AuthFn } from '../../src/auth/types.ts';
import { agentHandler } from '../../src/http/handler.ts';
import { serve, toNodeListener } from '../../src/node.ts';
import { nodeBridge } from '../../src/node/listener.ts';
import { jsonReply } from '../../src/http/responses.ts';
import { basicAuth } from '../helpers/http-client.ts';

const TOKEN = 'route-view-token-0123456789';
const closers: (() => Promise<unknown>)[] = [];
after(() => Promise.all(closers.map((close) => close())));

async function listen(listener: Parameters<typeof createServer>[1]): Promise<number> {
  const server: Server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return (server.address() as AddressInfo).port;
}

/** Sends `head` (request line and headers, CRLF-separated, without the blank line) and `body` on a fresh socket; the whole answer as it came. */
function raw(port: number, head: string, body = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.end(
      `${head}\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}

/** Writes `text` on a fresh socket and destroys it `ms` later, a client gone mid-exchange; resolves once `heard` does, or after 5 s. */
async function sendThenCut(port: number, text: string, ms: number, heard: Promise<unknown>): Promise<void> {
  const socket = connect(port, '127.0.0.1', () => {
    socket.write(text);
    setTimeout(() => socket.destroy(), ms);
  });
  socket.on('error', () => undefined);
  await Promise.race([heard, new Promise((resolve) => setTimeout(resolve, 5000))]);
}

/**
 * The answer without what differs between two servers of the same agent: the Date line, the
 * order of header lines (a Response's headers come out sorted), and timestamps in bodies.
 */
function comparable(answer: string): string {
  const end = answer.indexOf('\r\n\r\n');
  const [status, ...lines] = answer.slice(0, end).split('\r\n');
  const head = lines.filter((line) => !/^date:/i.test(line)).sort();
  return [status, ...head].join('\r\n') + answer.slice(end).replace(/"\d{4}-\d\d-\d\dT[\d:.]+Z"/g, '"<time>"');
}

// A custom entry: not header-only, so the node server builds the Request it is given.
const custom: AuthFn = async (request) => {
  if (!(request instanceof Request)) throw new Error('a custom entry must get a Request');
  const user = request.headers.get('x-test-user');
  return user === null ? null : { id: user, type: 'user' };
};

const REQUESTS: readonly (readonly [head: string, body?: string])[] = [
  ['POST /agent HTTP/1.1'],
  [`POST /agent HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`, '{"message":"hello","sessionId":"s-1"}'],
  [
    `POST /agent/chat HTTP/1.1\r\nauthorization: ${basicAuth('ada', 'pw-0123456789')}`,
    '{"message":"again","sessionId":"s-1"}',
  ],
  [`GET /agent/chat/s-1 HTTP/1.1\r\nauthorization: ${basicAuth('ada', 'pw-0123456789')}`],
  [`GET /agent/chat/s-1 HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`],
  [`GET /agent/sessions?limit=5 HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`],
  [`GET /agent/sessions?limit=x HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`],
  [`DELETE /agent/chat/nobody HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`],
  [`GET /agent/approvals HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`],
  [`GET /agent/approvals?sessionId=s-1 HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`],
  [`POST /agent/approvals/nope HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`, '{"approved":true}'],
  [`POST /agent HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`, '{"message":'],
  [`POST /agent HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`, '[1]'],
  [`POST /agent HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`, '{"message":7}'],
  [`POST /agent HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`, '\xff\xfe'],
  [`GET /agent HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`],
  [`PUT /agent/health HTTP/1.1`],
  [`GET /agent/health HTTP/1.1`],
  [`GET /agent/nowhere/at/all HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`],
  [`GET /agent/chat/%E0%A4%A HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`],
  [`GET /elsewhere HTTP/1.1`],
  [`POST /agent HTTP/1.1\r\nauthorization: Bearer wrong-token-0123456789`, '{"message":"x"}'],
  [`POST /agent HTTP/1.1\r\nauthorization: Bearer ${TOKEN}\r\nauthorization: Bearer ${TOKEN}`, '{"message":"x"}'],
  [
    `POST /agent HTTP/1.1\r\nAuthorization: Bearer ${TOKEN}\r\naccept: text/event-stream`,
    '{"message":"plain json: / is not /chat","sessionId":"s-2"}',
  ],
  [`POST /agent/ui HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`, '{"messages":"no"}'],
  // Paths the WHATWG parser changes or keeps encoded: serve() reads plain paths off the string.
  [`GET /agent/./health HTTP/1.1`],
  [`GET /agent/x/../health/ HTTP/1.1`],
  [`GET /agent/%2E%2E/agent/health HTTP/1.1`],
  [`GET /agent/h%65alth HTTP/1.1`],
  [`GET /agent//health HTTP/1.1`],
  [`GET /agent/health?x=1#frag HTTP/1.1`],
  [`GET /agent/chat/s-1/ HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`],
  [`GET /agent/chat/.s-1 HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`],
  [`GET /agent/chat/a%20b|c HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`],
];

for (const withCustom of [false, true]) {
  test(`serve() and toNodeListener(agentHandler()) answer byte for byte as the Web route handler (auth: built-in entries${withCustom ? ' and one of your own' : ''})`, async () => {
    const auth = () => [basic({ users: { ada: 'pw-0123456789' } }), apiToken(TOKEN), ...(withCustom ? [custom] : [])];
    const agent = () => createAgent({ name: 'view', model: echoModel(), store: memoryStore(), sessions: 'owned' });
    const served = await serve({ agent: agent(), auth: auth(), port: 0, log: 'off' });
    closers.push(() => served.close());
    const ports = {
      serve: Number(new URL(served.url).port),
      routes: await listen(toNodeListener(agentHandler(agent(), { basePath: '/agent', auth: auth() }))),
      // Wrapped, so the bridge cannot see the routes: a Web Request in, a Response out.
      web: await listen(
        toNodeListener(
          (
            (handler) => (request: Request) =>
              handler(request)
          )(agentHandler(agent(), { basePath: '/agent', auth: auth() })),
        ),
      ),
    };
    for (const [head, body] of REQUESTS) {
      const [viaServe, viaRoutes, viaWeb] = await Promise.all([
        raw(ports.serve, head, body),
        raw(ports.routes, head, body),
        raw(ports.web, head, body),
      ]);
      assert.match(viaWeb, /^HTTP\/1\.1 \d{3} /, head);
      assert.equal(comparable(viaServe), comparable(viaWeb), `serve(), ${head}`);
      assert.equal(comparable(viaRoutes), comparable(viaWeb), `toNodeListener(agentHandler()), ${head}`);
    }
  });
}

test('serve(): two Authorization lines are one joined value, as Headers.get reads them: refused, never the first line alone', async () => {
  const served = await serve({
    agent: createAgent({ name: 'view', model: echoModel(), store: memoryStore() }),
    auth: [apiToken(TOKEN)],
    port: 0,
    log: 'off',
  });
  closers.push(() => served.close());
  const port = Number(new URL(served.url).port);
  const one = await raw(port, `POST /agent HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`, '{"message":"x"}');
  assert.match(one, /^HTTP\/1\.1 200 /);
  for (const second of [`Bearer ${TOKEN}`, 'Bearer other-token', 'Basic eDp5']) {
    const two = await raw(
      port,
      `POST /agent HTTP/1.1\r\nauthorization: Bearer ${TOKEN}\r\nAuthorization: ${second}`,
      '{"message":"x"}',
    );
    assert.match(two, /^HTTP\/1\.1 401 /, second);
  }
});

test('serve(): an auth entry of your own gets a real Request (URL, method, every header, its body); the route reads the body after it', async () => {
  const seen: { url: string; method: string; header: string | null; body?: string }[] = [];
  const reading: AuthFn = async (request) => {
    assert.ok(request instanceof Request);
    const entry: (typeof seen)[number] = {
      url: request.url,
      method: request.method,
      header: request.headers.get('x-twice'),
    };
    // Reads a copy, as an entry that checks a body signature would: the route still reads the body.
    if (request.headers.get('x-read') !== null) entry.body = await request.clone().text();
    seen.push(entry);
    return { id: 'me', type: 'user' };
  };
  const served = await serve({
    agent: createAgent({ name: 'view', model: echoModel(), store: memoryStore() }),
    auth: [reading],
    port: 0,
    log: 'off',
  });
  closers.push(() => served.close());
  const port = Number(new URL(served.url).port);
  const plain = await raw(port, 'POST /agent?x=1 HTTP/1.1\r\nx-twice: a\r\nX-Twice: b', '{"message":"first"}');
  const read = await raw(port, 'POST /agent HTTP/1.1\r\nx-read: 1', '{"message":"second"}');
  assert.match(plain, /^HTTP\/1\.1 200 [^]*"text":"first"/);
  assert.match(read, /^HTTP\/1\.1 200 [^]*"text":"second"/);
  assert.deepEqual(seen, [
    { url: `${served.url}/agent?x=1`, method: 'POST', header: 'a, b' },
    { url: `${served.url}/agent`, method: 'POST', header: null, body: '{"message":"second"}' },
  ]);
});

test('serve(): a declared Content-Length over 1 MiB is refused 413 before any of the body is read', async () => {
  const served = await serve({
    agent: createAgent({ name: 'view', model: echoModel(), store: memoryStore() }),
    auth: [apiToken(TOKEN)],
    port: 0,
    log: 'off',
  });
  closers.push(() => served.close());
  const port = Number(new URL(served.url).port);
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(text));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    // Only the head: the server must answer without waiting for the 2 MiB it announces.
    socket.write(
      `POST /agent HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\ncontent-length: ${2 * 1024 * 1024}\r\n\r\n`,
    );
    setTimeout(() => socket.destroy(), 3000);
  });
  assert.match(answer, /^HTTP\/1\.1 413 [^]*\{"error":"Request body too large \(limit 1 MiB\)"\}/);
});

test('serve(): a client that goes away mid-body fails the read without a run, and the server serves on', async () => {
  let runs = 0;
  const agent = createAgent({
    name: 'view',
    model: { generate: async () => (runs++, { text: 'x' }) },
    store: memoryStore(),
  });
  const served = await serve({ agent, auth: [apiToken(TOKEN)], port: 0, log: 'off' });
  closers.push(() => served.close());
  const port = Number(new URL(served.url).port);
  await new Promise<void>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `POST /agent HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\ncontent-length: 1000\r\n\r\n{"message":"par`,
      );
      setTimeout(() => socket.destroy(), 50);
    });
    socket.on('close', () => resolve());
    socket.on('error', () => undefined);
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(runs, 0);
  const next = await raw(port, `POST /agent HTTP/1.1\r\nauthorization: Bearer ${TOKEN}`, '{"message":"whole"}');
  assert.match(next, /^HTTP\/1\.1 200 /);
  assert.equal(runs, 1);
});

test("the node bridge's body read: the whole body, null past the limit (the connection closes after the answer), an AbortError when the client goes first", async () => {
  const outcomes: string[] = [];
  let heard: () => void = () => undefined;
  const port = await listen(
    nodeBridge(async (request) => {
      try {
        const bytes = await request.readBody(16);
        outcomes.push(bytes === null ? 'null' : `bytes:${new TextDecoder().decode(bytes)}`);
        return jsonReply({ read: bytes === null ? null : bytes.byteLength });
      } catch (error) {
        outcomes.push(`error:${(error as Error).name}`);
        return jsonReply({ error: 'gone' }, 503);
      } finally {
        heard();
      }
    }),
  );
  const whole = await raw(port, 'POST /x HTTP/1.1', '{"a":1}');
  assert.match(whole, /^HTTP\/1\.1 200 [^]*\r\nconnection: close\r\n[^]*\{"read":7\}$/i);
  // 40 bytes in chunks, no Content-Length: cut off after 16, answered, and the connection closed.
  const chunked = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.write('POST /x HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n14\r\n01234567890123456789\r\n');
    setTimeout(() => socket.write('14\r\n01234567890123456789\r\n'), 20);
  });
  assert.match(chunked, /^HTTP\/1\.1 200 [^]*\r\nconnection: close\r\n[^]*\{"read":null\}$/i);
  const gone = new Promise<void>((resolve) => (heard = resolve));
  await sendThenCut(port, 'POST /x HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\n{"a"', 30, gone);
  assert.deepEqual(outcomes, ['bytes:{"a":1}', 'null', 'error:AbortError']);
});

test("the node bridge's body read: a pipelined request whose connection goes mid-body fails its read (node sends its waiting response no 'close')", async () => {
  const outcomes: string[] = [];
  let heard: () => void = () => undefined;
  const gone = new Promise<void>((resolve) => (heard = resolve));
  const port = await listen(
    nodeBridge(async (request) => {
      if (request.url.endsWith('/first')) {
        await new Promise((resolve) => setTimeout(resolve, 300));
        return jsonReply({ first: true });
      }
      try {
        await request.readBody(1024);
        outcomes.push('read');
      } catch (error) {
        outcomes.push(`error:${(error as Error).name}`);
      }
      heard();
      return jsonReply({ second: true });
    }),
  );
  const pipelined =
    'POST /first HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}' +
    'POST /second HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\n{"a"';
  await sendThenCut(port, pipelined, 50, gone);
  assert.deepEqual(outcomes, ['error:AbortError']);
});

test("the node bridge: a pipelined request waiting its turn when the connection goes has its signal aborted and its close heard (node sends its response no 'close')", async () => {
  const outcomes: string[] = [];
  const closedUrls: string[] = [];
  let heard: () => void = () => undefined;
  const gone = new Promise<void>((resolve) => (heard = resolve));
  const port = await listen(
    nodeBridge(
      async (request) => {
        await request.readBody(1024);
        if (request.url.endsWith('/first')) await new Promise((resolve) => setTimeout(resolve, 300));
        else {
          const aborted = await new Promise<boolean>((resolve) => {
            if (request.signal.aborted) return resolve(true);
            request.signal.addEventListener('abort', () => resolve(true));
            setTimeout(() => resolve(false), 3000);
          });
          outcomes.push(aborted ? 'aborted' : 'not aborted');
          heard();
        }
        return jsonReply({});
      },
      { onClose: (request) => closedUrls.push(new URL(request.url).pathname) },
    ),
  );
  const pipelined =
    'POST /first HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}' +
    'POST /second HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}';
  await sendThenCut(port, pipelined, 50, gone);
  assert.deepEqual(outcomes, ['aborted']);
  assert.deepEqual(closedUrls.sort(), ['/first', '/second']);
});
