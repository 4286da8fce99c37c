import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Agent, Model, Principal } from '../../src/agent/types.ts';
import { anonymous } from '../../src/auth/anonymous.ts';
import { apiToken } from '../../src/auth/api-token.ts';
import { basic } from '../../src/auth/basic.ts';
import { AuthError } from '../../src/auth/errors.ts';
import type { AuthFn, AuthOption } from '../../src/auth/types.ts';
import { fileStore, serve, slackChannel, type ServeOptions } from '../../src/node.ts';
import { basicAuth, headerLines, send } from '../helpers/http-client.ts';
import { platformApi } from '../helpers/channels.ts';

delete process.env.AGENT_API_TOKEN;

/** A dynamic agent whose reply is the principal of the run, as JSON. */
function principalEcho(): Agent {
  return createAgent({
    name: 'whoami',
    store: memoryStore(),
    model: ({ principal }) => ({ generate: async () => ({ text: JSON.stringify(principal ?? null) }) }),
  });
}

async function start(t: { after(fn: () => Promise<void>): void }, options: Partial<ServeOptions> & { env?: string }) {
  const { env, ...serveOptions } = options;
  if (env !== undefined) process.env.AGENT_API_TOKEN = env;
  try {
    const server = await serve({ agent: principalEcho(), port: 0, ...serveOptions });
    t.after(() => server.close());
    return server;
  } finally {
    delete process.env.AGENT_API_TOKEN;
  }
}

async function principalOf(url: string, authorization?: string): Promise<Principal | null | number> {
  const response = await send(`${url}/agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization !== undefined && { authorization }) },
    body: JSON.stringify({ message: 'who am I?' }),
  });
  if (response.status !== 200) return response.status;
  return JSON.parse((JSON.parse(response.text) as { text: string }).text) as Principal | null;
}

const custom = (id: string, token: string, challenges?: AuthFn['challenges']): AuthFn => {
  const entry: AuthFn = (request) =>
    request.headers.get('authorization') === `Bearer ${token}` ? { id, type: 'user', authenticator: 'custom' } : null;
  if (challenges !== undefined) entry.challenges = challenges;
  return entry;
};

test('node server: a 401 is written with one WWW-Authenticate header line per distinct challenge, in list order, and Cache-Control: no-store', async (t) => {
  const auth: AuthOption = [
    basic({ users: { ada: 'pw-0123456789' }, realm: 'agent, "inner"' }),
    apiToken('configured-token'),
    custom('c', 'x', [{ scheme: 'Custom', realm: 'a,b' }, { scheme: 'Bearer' }]),
  ];
  const server = await start(t, { auth });
  const response = await send(`${server.url}/agent`, { method: 'POST', body: '{"message":"hi"}' });
  assert.equal(response.status, 401);
  assert.deepEqual(headerLines(response.rawHeaders, 'www-authenticate'), [
    'Basic realm="agent, \\"inner\\"", charset="UTF-8"',
    'Bearer',
    'Custom realm="a,b"',
  ]);
  assert.deepEqual(headerLines(response.rawHeaders, 'cache-control'), ['no-store']);
  assert.equal(response.headers['content-type'], 'application/json');
  assert.equal(response.text, '{"error":"Unauthorized"}');
});

test('node server: 403 and 500 from the auth list carry Cache-Control: no-store and the generic bodies', async (t) => {
  const forbid: AuthFn = (request) => {
    if (request.headers.get('authorization') === 'Bearer banned') throw new AuthError(403);
    if (request.headers.get('authorization') === 'Bearer buggy') throw new Error('secret detail');
    return null;
  };
  const server = await start(t, { auth: [forbid] });
  const errors: unknown[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void errors.push(args);
  t.after(() => void (console.error = original));

  const forbidden = await send(`${server.url}/agent`, {
    method: 'POST',
    headers: { authorization: 'Bearer banned' },
    body: '{}',
  });
  assert.equal(forbidden.status, 403);
  assert.equal(forbidden.text, '{"error":"Forbidden"}');
  assert.deepEqual(headerLines(forbidden.rawHeaders, 'cache-control'), ['no-store']);
  assert.deepEqual(headerLines(forbidden.rawHeaders, 'www-authenticate'), []);

  const failed = await send(`${server.url}/agent`, {
    method: 'POST',
    headers: { authorization: 'Bearer buggy' },
    body: '{}',
  });
  assert.equal(failed.status, 500);
  assert.equal(failed.text, '{"error":"Internal Server Error"}');
  assert.deepEqual(headerLines(failed.rawHeaders, 'cache-control'), ['no-store']);
  assert.equal(errors.length, 1);
});

test('node server: GET <basePath>/health is open behind any auth list', async (t) => {
  const server = await start(t, { auth: [apiToken('configured-token')], env: 'env-token-0123456789' });
  const response = await send(`${server.url}/agent/health`);
  assert.equal(response.status, 200);
  assert.deepEqual(JSON.parse(response.text), { status: 'ok' });
});

test('node server: the accepted principal reaches the run', async (t) => {
  const server = await start(t, { auth: [basic({ users: { ada: 'pw-0123456789' } })] });
  assert.deepEqual(await principalOf(server.url, basicAuth('ada', 'pw-0123456789')), {
    id: 'ada',
    type: 'user',
    authenticator: 'basic',
  });
  assert.equal(await principalOf(server.url, basicAuth('ada', 'wrong')), 401);
});

test("node server: basic() refuses a browser's POST from another site; one from a page of this server, by the name it was addressed by, is accepted (design §20)", async (t) => {
  const server = await start(t, { auth: [basic({ users: { ada: 'pw-0123456789' } })] });
  const port = new URL(server.url).port;
  const post = (headers: Record<string, string>) =>
    send(`${server.url}/agent`, {
      method: 'POST',
      headers: { authorization: basicAuth('ada', 'pw-0123456789'), 'content-type': 'application/json', ...headers },
      body: '{"message":"hi"}',
    });
  // The request's URL is the socket's (127.0.0.1); a browser that sends no Sec-Fetch-Site is judged by its Origin against the Host it addressed.
  assert.equal((await post({ host: `localhost:${port}`, origin: `http://localhost:${port}` })).status, 200);
  assert.equal((await post({ origin: server.url })).status, 200);
  assert.equal((await post({ 'sec-fetch-site': 'same-origin', origin: `http://localhost:${port}` })).status, 200);
  assert.equal((await post({})).status, 200);
  const crossSite: Record<string, string>[] = [
    { origin: 'https://evil.example' },
    { host: `localhost:${port}`, origin: `http://evil.example:${port}` },
    { 'sec-fetch-site': 'cross-site' },
    { 'sec-fetch-site': 'same-site', origin: `http://other.localhost:${port}` },
  ];
  for (const headers of crossSite) {
    const refused = await post(headers);
    assert.equal(refused.status, 401, JSON.stringify(headers));
    assert.equal(refused.text, '{"error":"Unauthorized"}');
  }
});

test('node server: AGENT_API_TOKEN appends apiToken() after the configured entries', async (t) => {
  // A token only the appended entry accepts.
  const server = await start(t, { auth: [custom('configured', 'configured-token')], env: 'env-token-0123456789' });
  assert.deepEqual(await principalOf(server.url, 'Bearer env-token-0123456789'), {
    id: 'api-token',
    type: 'service',
    authenticator: 'api-token',
  });
  assert.deepEqual(await principalOf(server.url, 'Bearer configured-token'), {
    id: 'configured',
    type: 'user',
    authenticator: 'custom',
  });
  assert.equal(await principalOf(server.url), 401);

  // A token both accept: the configured entry comes first, so its principal wins.
  const both = await start(t, { auth: custom('configured', 'env-token-0123456789'), env: 'env-token-0123456789' });
  assert.deepEqual(await principalOf(both.url, 'Bearer env-token-0123456789'), {
    id: 'configured',
    type: 'user',
    authenticator: 'custom',
  });

  // After anonymous(), which accepts everyone, the appended entry is never reached.
  const open = await start(t, { auth: [anonymous()], env: 'env-token-0123456789' });
  assert.deepEqual(await principalOf(open.url, 'Bearer env-token-0123456789'), {
    id: 'anonymous',
    type: 'user',
    authenticator: 'anonymous',
  });
});

test('node server: AGENT_API_TOKEN alone is the whole list, and is read when serve() is called', async (t) => {
  const server = await start(t, { env: 'env-token-0123456789' });
  assert.equal(process.env.AGENT_API_TOKEN, undefined);
  assert.deepEqual(await principalOf(server.url, 'Bearer env-token-0123456789'), {
    id: 'api-token',
    type: 'service',
    authenticator: 'api-token',
  });
  const refused = await send(`${server.url}/agent`, { method: 'POST', body: '{"message":"hi"}' });
  assert.equal(refused.status, 401);
  assert.deepEqual(headerLines(refused.rawHeaders, 'www-authenticate'), ['Bearer']);

  const unprotected = await start(t, {});
  assert.equal(await principalOf(unprotected.url), null, 'no auth and no AGENT_API_TOKEN: open');
});

test('node server: an AGENT_API_TOKEN that can never match is a configuration error naming the variable, not its value', async () => {
  process.env.AGENT_API_TOKEN = 'has spaces in it';
  try {
    await assert.rejects(serve({ agent: principalEcho(), port: 0 }), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'AGENT_AUTH_CONFIG_INVALID');
      assert.match(error.message, /AGENT_API_TOKEN/);
      assert.doesNotMatch(error.message, /has spaces/);
      return true;
    });
  } finally {
    delete process.env.AGENT_API_TOKEN;
  }
});

test('node server: channels are outside the auth list (a request without Authorization reaches the Slack verifier)', async (t) => {
  const api = await platformApi();
  t.after(() => api.close());
  const secret = 'slack-signing-secret-for-the-test';
  const server = await start(t, {
    auth: [apiToken('configured-token')],
    env: 'env-token-0123456789',
    channels: { slack: slackChannel({ signingSecret: secret, botToken: 'xoxb-test', apiBaseUrl: api.baseUrl }) },
  });

  const unsigned = await send(`${server.url}/channels/slack`, {
    method: 'POST',
    body: '{"type":"url_verification","challenge":"c"}',
  });
  assert.equal(unsigned.status, 401);
  assert.deepEqual(
    headerLines(unsigned.rawHeaders, 'www-authenticate'),
    [],
    "the refusal is Slack's, not the auth list's",
  );

  const timestamp = String(Math.floor(Date.now() / 1000));
  const body = JSON.stringify({
    type: 'event_callback',
    team_id: 'T1',
    event: { type: 'message', user: 'U1', channel: 'C1', text: 'hi', ts: '1.1' },
  });
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  const signed = await send(`${server.url}/channels/slack`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': signature,
    },
    body,
  });
  assert.equal(signed.status, 200);
  await server.close(); // waits for the channel's run and reply
  assert.equal(api.calls.length, 1);
  assert.deepEqual(JSON.parse((api.calls[0]?.body as { text: string }).text), {
    id: 'U1',
    type: 'user',
    authenticator: 'slack',
    issuer: 'T1',
  });

  const unknown = await start(t, { auth: [apiToken('configured-token')] });
  assert.equal(
    (await send(`${unknown.url}/channels/slack`, { method: 'POST', body: '{}' })).status,
    401,
    'no such channel: the auth list answers',
  );
});

test('node server: a client that disconnects aborts the signal of its run', async (t) => {
  let started!: () => void;
  const modelStarted = new Promise<void>((resolve) => (started = resolve));
  let aborted!: (reason: unknown) => void;
  const runAborted = new Promise<unknown>((resolve) => (aborted = resolve));
  const waitsForAbort: Model = {
    generate: ({ signal }) =>
      new Promise((_, reject) => {
        signal?.addEventListener('abort', () => {
          aborted(signal.reason);
          reject(signal.reason);
        });
        started();
      }),
  };
  const server = await start(t, { agent: createAgent({ name: 'slow', model: waitsForAbort }) });
  const req = httpRequest(`${server.url}/agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    agent: false,
  });
  req.on('error', () => undefined);
  req.end('{"message":"wait"}');
  await modelStarted;
  req.destroy();
  const reason = await runAborted;
  assert.equal((reason as Error).name, 'AbortError');
});

test('node server: request and response bodies stream (chunked request body in, server-sent events out)', async (t) => {
  const server = await start(t, { agent: createAgent({ name: 'echo', model: echoModel() }) });
  const response = await new Promise<{ type: string | undefined; chunks: string[] }>((resolve, reject) => {
    const req = httpRequest(
      `${server.url}/agent/chat`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'transfer-encoding': 'chunked' },
        agent: false,
      },
      (res) => {
        const chunks: string[] = [];
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => chunks.push(chunk));
        res.on('end', () => resolve({ type: res.headers['content-type'], chunks }));
      },
    );
    req.on('error', reject);
    req.write('{"message":');
    setImmediate(() => req.end('"one two three"}'));
  });
  assert.match(String(response.type), /^text\/event-stream/);
  const text = response.chunks.join('');
  assert.match(text, /one /);
  assert.match(text, /three/);
});

test('node server: unknown paths behind auth answer 401 before 404', async (t) => {
  const server = await start(t, { auth: [apiToken('configured-token')] });
  assert.equal((await send(`${server.url}/nowhere`)).status, 401);
  assert.equal(
    (await send(`${server.url}/nowhere`, { headers: { authorization: 'Bearer configured-token' } })).status,
    404,
  );
});

test('node server: close() lets a request in flight finish', async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const modelStarted = new Promise<void>((resolve) => (started = resolve));
  const model: Model = {
    generate: async () => {
      started();
      await gate;
      return { text: 'finished' };
    },
  };
  const server = await serve({ agent: createAgent({ name: 'gate', model }), port: 0 });
  const pending = send(`${server.url}/agent`, { method: 'POST', body: '{"message":"go"}' });
  await modelStarted;
  const closed = server.close();
  release();
  const response = await pending;
  await closed;
  assert.equal(response.status, 200);
  assert.equal((JSON.parse(response.text) as { text: string }).text, 'finished');
  await assert.rejects(send(`${server.url}/agent/health`), /ECONNREFUSED/);
});

test('node server: close() aborts runs still in flight after the shutdown bound', async () => {
  let started!: () => void;
  const modelStarted = new Promise<void>((resolve) => (started = resolve));
  const waitsForAbort: Model = {
    generate: ({ signal }) =>
      new Promise((_, reject) => {
        signal?.addEventListener('abort', () => reject(signal.reason));
        started();
      }),
  };
  const errors: unknown[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void errors.push(args);
  try {
    const server = await serve({
      agent: createAgent({ name: 'stuck', model: waitsForAbort }),
      port: 0,
      shutdownTimeoutMs: 50,
    });
    const pending = send(`${server.url}/agent`, { method: 'POST', body: '{"message":"go"}' }).catch(
      (error: Error) => error,
    );
    await modelStarted;
    await server.close();
    assert.ok((await pending) instanceof Error, 'the connection was closed');
    assert.match(String((errors[0] as unknown[])[0]), /still running/);
  } finally {
    console.error = original;
  }
});

test('node server: an agent given as createAgent options is created with `store`, by default a file store in AGENT_DATA_DIR', async (t) => {
  const given = await mkdtemp(join(tmpdir(), 'agentward-serve-store-'));
  const fallback = await mkdtemp(join(tmpdir(), 'agentward-serve-default-'));
  t.after(() =>
    Promise.all([rm(given, { recursive: true, force: true }), rm(fallback, { recursive: true, force: true })]).then(
      () => undefined,
    ),
  );

  const withStore = await start(t, { agent: { name: 'opts', model: echoModel() }, store: fileStore(given) });
  assert.equal((await send(`${withStore.url}/agent`, { method: 'POST', body: '{"message":"hi"}' })).status, 200);
  assert.equal((await readdir(join(given, 'sessions'))).length, 1);

  process.env.AGENT_DATA_DIR = fallback;
  try {
    const byDefault = await start(t, { agent: { name: 'opts', model: echoModel() } });
    assert.equal((await send(`${byDefault.url}/agent`, { method: 'POST', body: '{"message":"hi"}' })).status, 200);
  } finally {
    delete process.env.AGENT_DATA_DIR;
  }
  assert.equal((await readdir(join(fallback, 'sessions'))).length, 1);
});

test('node server: a created agent keeps its own store; a `store` given beside it is reported, not silently dropped', async (t) => {
  const warnings: unknown[] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => void warnings.push(args.join(' '));
  try {
    await start(t, { agent: principalEcho(), store: memoryStore() });
  } finally {
    console.warn = original;
  }
  assert.match(String(warnings[0]), /keeps the store it was created with/);
});

test('node server: a server-sent event reaches the client before the run has finished', {
  timeout: 10_000,
}, async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const model: Model = {
    generate: async () => ({ text: 'unused' }),
    async *stream() {
      yield { type: 'text', text: 'first ' };
      await gate; // released only once the client has seen "first"
      yield { type: 'text', text: 'second' };
    },
  };
  const server = await start(t, { agent: createAgent({ name: 'stream', model }) });
  const text = await new Promise<string>((resolve, reject) => {
    const req = httpRequest(
      `${server.url}/agent/chat`,
      { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, agent: false },
      (res) => {
        let received = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          received += chunk;
          if (received.includes('first')) release();
        });
        res.on('end', () => resolve(received));
      },
    );
    req.on('error', reject);
    req.end('{"message":"go"}');
  });
  assert.match(text, /first[\s\S]*second/);
});

test('node server: a request target that is not a path (absolute-form, asterisk) is a 400, and the Host header never reaches routing', async (t) => {
  const server = await start(t, {});
  const { port } = new URL(server.url);
  const raw = (head: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.end(head));
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
  assert.match(
    await raw(
      'GET http://elsewhere.example/agent/health HTTP/1.1\r\nHost: elsewhere.example\r\nConnection: close\r\n\r\n',
    ),
    /^HTTP\/1\.1 400 /,
  );
  assert.match(await raw('OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 400 /);
  assert.match(
    await raw('GET /agent/health HTTP/1.1\r\nHost: elsewhere.example:1\r\nConnection: close\r\n\r\n'),
    /^HTTP\/1\.1 200 /,
  );
});
