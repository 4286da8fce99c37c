// The route handler mounted as the README's recipes show: through toNodeListener() in
// node:http, Express and Fastify (real servers on loopback, header lines read off the wire),
// and as it is in Hono and in a Next.js-style route module (`export const GET/POST/DELETE = handler`).
// On each: a 401 with its challenges, auth reaching the run, a run, and server-sent events.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { wwwAuthenticateLines } from '../../src/auth/index.ts';
import { toNodeListener } from '../../src/node.ts';
import { basicAuth, headerLines, send } from '../helpers/http-client.ts';
import { captureConsoleError } from '../helpers/console.ts';
import { DELETE, GET, POST, ROUTE_PASSWORD, ROUTE_TOKEN } from '../helpers/next-route.ts';

const handler = POST;
const CHALLENGES = ['Basic realm="agent", charset="UTF-8"', 'Bearer'];
const json = { 'content-type': 'application/json' };

/** One HTTP exchange, whatever the mount: the status, each header line, and the body text. */
interface Answer {
  status: number;
  header(name: string): string | undefined;
  lines(name: string): readonly string[];
  text: string;
}
type Fetch = (
  path: string,
  init?: { method?: string; headers?: Record<string, string>; body?: string },
) => Promise<Answer>;

function parseEvents(text: string): { event: string; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>;
      return { event, data };
    });
}

/** The same checks on every mount. */
function checks(name: string, fetchFor: () => Promise<Fetch>) {
  describe(name, () => {
    test('a request without credentials: 401, each challenge its own WWW-Authenticate line, the JSON body', async () => {
      const fetch = await fetchFor();
      const answer = await fetch('/agent', { method: 'POST', headers: json, body: '{"message":"hi"}' });
      assert.equal(answer.status, 401);
      assert.deepEqual(answer.lines('www-authenticate'), CHALLENGES);
      assert.equal(answer.header('cache-control'), 'no-store');
      assert.deepEqual(JSON.parse(answer.text), { error: 'Unauthorized' });
      const wrong = await fetch('/agent/chat', {
        method: 'POST',
        headers: { ...json, authorization: 'Bearer not-the-token' },
        body: '{"message":"hi"}',
      });
      assert.equal(wrong.status, 401);
    });

    test('health is open; an unknown path behind auth answers 401 before 404', async () => {
      const fetch = await fetchFor();
      const health = await fetch('/agent/health');
      assert.equal(health.status, 200);
      assert.deepEqual(JSON.parse(health.text), { status: 'ok' });
      assert.equal((await fetch('/agent/nowhere')).status, 401);
      assert.equal(
        (await fetch('/agent/nowhere', { headers: { authorization: `Bearer ${ROUTE_TOKEN}` } })).status,
        404,
      );
    });

    test('a run: the accepted principal reaches it (Basic and a bearer token), the body streams through', async () => {
      const fetch = await fetchFor();
      const asAda = await fetch('/agent', {
        method: 'POST',
        headers: { ...json, authorization: basicAuth('ada', ROUTE_PASSWORD) },
        body: JSON.stringify({ message: 'hello' }),
      });
      assert.equal(asAda.status, 200, asAda.text);
      const result = JSON.parse(asAda.text) as { status: string; text: string; sessionId: string };
      assert.equal(result.status, 'completed');
      assert.equal(result.text, 'basic:ada heard hello');
      const transcript = await fetch(`/agent/chat/${result.sessionId}`, {
        headers: { authorization: basicAuth('ada', ROUTE_PASSWORD) },
      });
      assert.equal(transcript.status, 200);
      assert.equal((JSON.parse(transcript.text) as { messages: unknown[] }).messages.length, 2);
      const big = 'x'.repeat(200_000);
      const asToken = await fetch('/agent', {
        method: 'POST',
        headers: { ...json, authorization: `Bearer ${ROUTE_TOKEN}` },
        body: JSON.stringify({ message: big }),
      });
      assert.equal(asToken.status, 200);
      assert.equal((JSON.parse(asToken.text) as { text: string }).text, `api-token:api-token heard ${big}`);
    });

    test('server-sent events: POST <base>/chat with Accept: text/event-stream', async () => {
      const fetch = await fetchFor();
      const answer = await fetch('/agent/chat', {
        method: 'POST',
        headers: { ...json, accept: 'text/event-stream', authorization: `Bearer ${ROUTE_TOKEN}` },
        body: JSON.stringify({ message: 'streamed', sessionId: `sse-${name.replace(/\W+/g, '-')}` }),
      });
      assert.equal(answer.status, 200);
      assert.equal(answer.header('content-type'), 'text/event-stream');
      const events = parseEvents(answer.text);
      assert.equal(events[0]?.event, 'start');
      assert.equal(events.at(-1)?.event, 'finish');
      for (const { event, data } of events) assert.equal(event, data.type);
      const deltas = events
        .filter((e) => e.event === 'text-delta')
        .map((e) => e.data.text)
        .join('');
      assert.equal(deltas, 'api-token:api-token heard streamed');
      assert.equal((events.at(-1)?.data.result as { status: string }).status, 'completed');
    });
  });
}

/** A fetch over a real socket with node:http's client, which keeps each header line. */
function wireFetch(origin: string): Fetch {
  return async (path, init = {}) => {
    const { status, rawHeaders, text } = await send(origin + path, init);
    return {
      status,
      text,
      lines: (name) => headerLines(rawHeaders, name),
      header: (name) => headerLines(rawHeaders, name)[0],
    };
  };
}

/** A fetch straight into a Web handler (Hono's `app.fetch`, a route module's exports). */
function webFetch(call: (request: Request) => Promise<Response>): Fetch {
  return async (path, init = {}) => {
    const response = await call(new Request(`http://localhost${path}`, init));
    const text = await response.text();
    return {
      status: response.status,
      text,
      header: (name) => response.headers.get(name) ?? undefined,
      lines: (name) =>
        name === 'www-authenticate' ? (wwwAuthenticateLines(response) ?? []) : [response.headers.get(name) ?? ''],
    };
  };
}

const servers: { close(): Promise<void> }[] = [];
after(() => Promise.all(servers.map((server) => server.close())));

function listen(server: Server): Promise<string> {
  servers.push({ close: () => new Promise((resolve) => server.close(() => resolve())) });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

function once<T>(create: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= create());
}

checks(
  'node:http: createServer(toNodeListener(handler))',
  once(async () => {
    const server = createServer(toNodeListener(handler));
    return wireFetch(await listen(server));
  }),
);

checks(
  "Express: app.use('/agent', toNodeListener(handler))",
  once(async () => {
    const app = express();
    app.use('/agent', toNodeListener(handler));
    app.get('/', (_req, res) => void res.send('the rest of the app'));
    const server = createServer(app);
    const fetch = wireFetch(await listen(server));
    assert.equal((await fetch('/')).text, 'the rest of the app', 'the app around the mount still answers');
    return fetch;
  }),
);

checks(
  'Fastify: a scope without body parsers, reply.hijack(), then the listener on the raw request',
  once(async () => {
    const app = Fastify();
    const listener = toNodeListener(handler);
    await app.register(async (scope) => {
      // The handler reads the body itself: leave the stream unread.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
      for (const path of ['/agent', '/agent/*']) {
        scope.all(path, (request, reply) => {
          reply.hijack();
          listener(request.raw, reply.raw);
        });
      }
    });
    app.get('/', async () => 'the rest of the app');
    await app.listen({ port: 0, host: '127.0.0.1' });
    servers.push({ close: () => app.close() });
    const address = app.server.address() as AddressInfo;
    const fetch = wireFetch(`http://127.0.0.1:${address.port}`);
    assert.equal((await fetch('/')).text, 'the rest of the app');
    return fetch;
  }),
);

checks(
  "Hono: app.all('/agent/*', (c) => handler(c.req.raw))",
  once(async () => {
    const app = new Hono();
    app.all('/agent', (c) => handler(c.req.raw));
    app.all('/agent/*', (c) => handler(c.req.raw));
    app.get('/', (c) => c.text('the rest of the app'));
    const fetch = webFetch(async (request) => app.fetch(request));
    assert.equal((await fetch('/')).text, 'the rest of the app');
    return fetch;
  }),
);

checks(
  'Next.js-style route module: export const GET = handler, POST = handler, DELETE = handler',
  once(async () => {
    const routes: Record<string, (request: Request) => Promise<Response>> = { GET, POST, DELETE };
    return webFetch(async (request) => {
      const route = routes[request.method];
      return route ? route(request) : new Response(null, { status: 405 });
    });
  }),
);

test('toNodeListener refuses what cannot work: a handler that is not a function, an origin with a path', () => {
  assert.throws(() => toNodeListener('nope' as never), /toNodeListener\(\): handler must be a function/);
  assert.throws(
    () => toNodeListener(handler, { origin: 'https://agent.example.com/base' }),
    /origin must be a URL origin/,
  );
});

test('toNodeListener: a handler that throws is logged and answered 500 with the JSON error body, nothing of the error', async () => {
  const errors: unknown[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void errors.push(args);
  try {
    const origin = await listen(
      createServer(
        toNodeListener(() => {
          throw new Error('secret-detail-do-not-echo');
        }),
      ),
    );
    const answer = await send(`${origin}/agent`);
    assert.equal(answer.status, 500);
    assert.deepEqual(JSON.parse(answer.text), { error: 'Internal Server Error' });
    assert.doesNotMatch(answer.text, /secret-detail/);
    assert.equal(errors.length, 1);
  } finally {
    console.error = original;
  }
});

test('toNodeListener: the request URL has the origin given, else the local address, never the Host header', async () => {
  const seen: string[] = [];
  const record = toNodeListener((request) => {
    seen.push(request.url);
    return new Response('ok');
  });
  const origin = await listen(createServer(record));
  await send(`${origin}/agent/x?y=1`, { headers: { host: 'evil.example' } });
  const withOrigin = await listen(
    createServer(
      toNodeListener((request) => (seen.push(request.url), new Response('ok')), {
        origin: 'https://agent.example.com',
      }),
    ),
  );
  await send(`${withOrigin}/agent`, { headers: { host: 'evil.example' } });
  assert.deepEqual(seen, [`${origin}/agent/x?y=1`, 'https://agent.example.com/agent']);
});

test('Next.js-style route module: DELETE <base>/chat/:id reaches the handler (the recipe exports every method the routes use)', async () => {
  // Next.js answers its own 405 for a method the module does not export; the handler answers JSON.
  const response = await DELETE(
    new Request('http://localhost/agent/chat/some-session', {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ROUTE_TOKEN}` },
    }),
  );
  assert.equal(response.headers.get('content-type'), 'application/json');
  assert.equal(response.status, 404); // a 'shared' agent has no DELETE route: the handler's own answer
  await response.body?.cancel();
});

/** Sends a JSON POST that must be answered within 5 s: a bridge waiting for a body already read would hang. */
async function postWithin5s(url: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...json, authorization: `Bearer ${ROUTE_TOKEN}` },
    body: '{"message":"hi"}',
    signal: AbortSignal.timeout(5000),
  });
  return { status: response.status, text: await response.text() };
}

test('toNodeListener after express.json(): answers 500 at once and logs one line saying to mount it before the body parser', async () => {
  const app = express();
  app.use(express.json());
  app.use('/agent', toNodeListener(handler));
  const origin = await listen(createServer(app));
  const { result, calls } = await captureConsoleError(async () => [
    await postWithin5s(`${origin}/agent`),
    await postWithin5s(`${origin}/agent/chat`),
  ]);
  for (const answer of result) {
    assert.equal(answer.status, 500);
    assert.deepEqual(JSON.parse(answer.text), { error: 'Internal Server Error' });
  }
  assert.equal(calls.length, 1, 'one line, not one per request');
  assert.match(String(calls[0]?.[0]), /mount it before any body parser/);
  // A request without a body is still served: nothing was taken from it.
  assert.equal((await send(`${origin}/agent/health`)).status, 200);
});

test('toNodeListener under Fastify with its content-type parsers left in place: answers 500 at once and logs one line', async () => {
  const app = Fastify();
  const listener = toNodeListener(handler);
  for (const path of ['/agent', '/agent/*']) {
    app.all(path, (request, reply) => {
      reply.hijack();
      listener(request.raw, reply.raw);
    });
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  servers.push({ close: () => app.close() });
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const { result, calls } = await captureConsoleError(() => postWithin5s(`${origin}/agent`));
  assert.equal(result.status, 500);
  assert.equal(calls.length, 1);
  assert.match(String(calls[0]?.[0]), /mount it before any body parser/);
});
