// Design §17: introspection() against a real authorization server (oidc-provider, opaque access
// tokens, its RFC 7662 introspection and RFC 7009 revocation endpoints) over real HTTP, on Node,
// on Bun and Deno in child processes, and inside workerd; a proxy in front of the introspection
// endpoint takes it down, slows it, and counts the calls in flight. Then what a proxy can see of
// each call: the form body, client_secret_basic with RFC 6749 §2.3.1 encoding, the timeout, the
// answer bound, no redirect followed; the DPoP binding through the answer's cnf.jkt; the options.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { AuthConfigError, introspection, routeAuth, wwwAuthenticateLines } from '../../src/auth/index.ts';
import type { Refusal } from '../../src/auth/refusals.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../helpers/authorization-server.ts';
import { clientFor, secretFor } from '../helpers/idp-scenario.ts';
import {
  EXPECTED_OUTCOMES,
  INTROSPECTOR,
  OPAQUE_RESOURCE,
  OPAQUE_SCOPE,
  opaqueToken,
  runIntrospectionScenario,
  type IntrospectionInput,
  type IntrospectionResult,
} from '../helpers/introspection-scenario.ts';
import { startWorker } from '../helpers/workerd.ts';
import { testKey } from '../helpers/jwt.ts';
import { dpopProof, thumbprint } from '../helpers/dpop.ts';
import { bearerRequest as bearer } from '../helpers/requests.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
let server: AuthorizationServer;
let proxy: Server;
let input: IntrospectionInput;
const mode = { down: false, delayMs: 0, inFlight: 0, maxConcurrent: 0, calls: 0 };

/** In front of the provider's introspection endpoint: `/__mode` takes it down, slows it, counts calls in flight. */
function proxyRequest(request: IncomingMessage, response: ServerResponse): void {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', async () => {
    const body = Buffer.concat(chunks).toString();
    if (request.url === '/__mode') {
      const settings = JSON.parse(body) as { down?: boolean; delayMs?: number; reset?: boolean };
      if (settings.reset) Object.assign(mode, { inFlight: 0, maxConcurrent: 0, calls: 0 });
      if (settings.down !== undefined) mode.down = settings.down;
      if (settings.delayMs !== undefined) mode.delayMs = settings.delayMs;
      return void response.end(JSON.stringify({ maxConcurrent: mode.maxConcurrent, calls: mode.calls }));
    }
    if (mode.down) return void request.socket.destroy();
    mode.calls++;
    mode.maxConcurrent = Math.max(mode.maxConcurrent, ++mode.inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, mode.delayMs));
      const answer = await fetch(`${server.issuer}/token/introspection`, {
        method: 'POST',
        body,
        headers: { authorization: request.headers.authorization!, 'content-type': request.headers['content-type']! },
      });
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    } finally {
      mode.inFlight--;
    }
  });
}

before(async () => {
  server = await startAuthorizationServer();
  proxy = createServer(proxyRequest);
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
  const otherResourceToken = (await server.authorizationCode(clientFor('ES256'), 'alice')).accessToken;
  input = {
    issuer: server.issuer,
    proxy: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    otherResourceToken,
  };
});
after(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await server?.close();
});

function check(runtime: string, result: IntrospectionResult): void {
  assert.deepEqual(result.outcomes, EXPECTED_OUTCOMES, runtime);
  assert.ok(result.maxConcurrent <= 16, `${runtime}: ${result.maxConcurrent} calls in flight at once`);
  assert.ok(result.calls >= 16, `${runtime}: the flood reached the endpoint (${result.calls} calls)`);
  console.log(
    `${runtime}: introspection scenario held; the slow endpoint saw at most ${result.maxConcurrent} calls at once, ${result.calls} in all`,
  );
}

test('node: introspection() against oidc-provider: opaque tokens, revocation and the cache, another resource, the endpoint down, a flood', async () => {
  check('node', await runIntrospectionScenario(input));
});

for (const runtime of ['bun', 'deno'] as const) {
  test(`${runtime}: the introspection scenario in a child process`, async () => {
    const args =
      runtime === 'bun'
        ? ['tests/helpers/children/introspection-scenario.ts']
        : ['run', '-A', '--no-check', 'tests/helpers/children/introspection-scenario.ts'];
    const child = spawn(`${root}node_modules/.bin/${runtime}`, args, {
      cwd: root,
      env: { ...process.env, INTROSPECTION_SCENARIO: JSON.stringify(input), NO_COLOR: '1' },
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    const line = output.split('\n').find((text) => text.startsWith('INTROSPECTION_RESULT '));
    assert.ok(line !== undefined, `${runtime} exited ${code}: ${output}`);
    check(runtime, JSON.parse(line.slice('INTROSPECTION_RESULT '.length)));
  });
}

test('workerd: the introspection scenario inside workerd (each request makes its own call)', async () => {
  const worker = await startWorker({
    entry: 'tests/helpers/workerd/introspection-worker.ts',
    bindings: { INTROSPECTION_SCENARIO: input },
  });
  try {
    const response = await worker.fetch('http://worker/');
    const text = await response.text();
    assert.equal(response.status, 200, text);
    check('workerd', JSON.parse(text));
  } finally {
    await worker.dispose();
  }
});

/** An endpoint that answers after 200 ms: tokens starting `valid` are active. Counts calls in flight. */
async function slowEndpoint(t: { after(fn: () => Promise<void>): void }) {
  const stats = { inFlight: 0, maxInFlight: 0, calls: 0 };
  const endpoint = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      stats.calls++;
      stats.maxInFlight = Math.max(stats.maxInFlight, ++stats.inFlight);
      setTimeout(() => {
        stats.inFlight--;
        const token = new URLSearchParams(body).get('token') ?? '';
        json(
          response,
          token.startsWith('valid')
            ? { active: true, sub: token, aud: 'https://agent.example/opaque' }
            : { active: false },
        );
      }, 200);
    });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', () => resolve()));
  t.after(async () => {
    endpoint.closeAllConnections();
    await new Promise((resolve) => endpoint.close(resolve));
  });
  return { url: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/introspect`, stats };
}

/** 32 loops resending garbage tokens while 10, then 5 more, valid ones are sent: the statuses of the valid ones. */
async function flood(send: (token: string) => Promise<number>): Promise<{ valid: number[]; garbage: number }> {
  let running = true;
  let garbage = 0;
  const loops = Array.from({ length: 32 }, async (_, loop) => {
    while (running) assert.equal(await send(`garbage-${loop}-${garbage++}`), 401);
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const valid = await Promise.all(Array.from({ length: 10 }, (_, i) => send(`valid-${i}`)));
  valid.push(...(await Promise.all(Array.from({ length: 5 }, (_, i) => send(`valid-late-${i}`)))));
  running = false;
  await Promise.all(loops);
  return { valid, garbage };
}

test('a flood over real HTTP: 32 garbage requests kept in flight against an endpoint answering in 200 ms; every valid token sent meanwhile is accepted', async (t) => {
  const { url, stats } = await slowEndpoint(t);
  const authenticate = routeAuth(
    introspection({
      endpoint: url,
      clientId: 'rs',
      clientSecret: 'rs-secret',
      audience: 'https://agent.example/opaque',
      cache: false,
    }),
  );
  const { valid, garbage } = await flood(async (token) => {
    const result = await authenticate(bearer(token));
    return result.ok ? 200 : result.response.status;
  });
  assert.deepEqual(valid, Array(15).fill(200));
  assert.equal(stats.maxInFlight, 16, 'the garbage filled every call slot, and never more');
  assert.ok(garbage >= 48, `${garbage} garbage requests`);
});

test("workerd: the flood in requests of their own (each its own call, none waiting on another's I/O): every valid token accepted, at most 16 calls at once", async (t) => {
  const { url, stats } = await slowEndpoint(t);
  const worker = await startWorker({
    entry: 'tests/helpers/workerd/introspection-flood-worker.ts',
    bindings: { INTROSPECTION_ENDPOINT: url },
  });
  try {
    const { valid, garbage } = await flood(async (token) => {
      const response = await worker.fetch('http://worker/', { headers: { authorization: `Bearer ${token}` } });
      await response.arrayBuffer();
      return response.status;
    });
    assert.deepEqual(valid, Array(15).fill(200));
    assert.equal(stats.maxInFlight, 16, 'the garbage filled every call slot of the isolate, and never more');
    assert.ok(garbage >= 48, `${garbage} garbage requests`);
    assert.deepEqual(
      worker.logs.filter((line) => /different request context|hang|cancel/i.test(line.message)),
      [],
      "no request waited on another's I/O",
    );
  } finally {
    await worker.dispose();
  }
});

test('a DPoP-bound opaque token (cnf.jkt in the introspection answer): accepted over DPoP with its proof, refused as Bearer', async () => {
  const key = await testKey('ES256');
  const now = () => Math.floor(Date.now() / 1000);
  const response = await fetch(`${server.issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${btoa(`svc-es256:${secretFor('svc-es256')}`)}`,
      'content-type': 'application/x-www-form-urlencoded',
      dpop: await dpopProof(key, { htm: 'POST', htu: `${server.issuer}/token`, iat: now() }),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: OPAQUE_SCOPE, resource: OPAQUE_RESOURCE }),
  });
  const { access_token: token, token_type: type } = (await response.json()) as {
    access_token: string;
    token_type: string;
  };
  assert.equal(type, 'DPoP');
  const entry = introspection({
    issuer: server.issuer,
    clientId: INTROSPECTOR,
    clientSecret: secretFor(INTROSPECTOR),
    audience: OPAQUE_RESOURCE,
    dpop: 'allowed',
  });
  const url = 'https://agent.example/opaque';
  const refusals: Refusal[] = [];
  const authenticate = routeAuth(entry, { onRefused: (refusal) => void refusals.push(refusal) });
  const withProof = await authenticate(
    new Request(url, {
      headers: { authorization: `DPoP ${token}`, dpop: await dpopProof(key, { token, iat: now(), htu: url }) },
    }),
  );
  assert.equal(withProof.ok, true);
  const asBearer = await authenticate(new Request(url, { headers: { authorization: `Bearer ${token}` } }));
  assert.equal(asBearer.ok, false);
  assert.equal(refusals.at(-1)?.reason, 'dpop-binding');
  const otherKey = await testKey('ES256');
  const stolen = await authenticate(
    new Request(url, {
      headers: { authorization: `DPoP ${token}`, dpop: await dpopProof(otherKey, { token, iat: now(), htu: url }) },
    }),
  );
  assert.ok(!stolen.ok);
  assert.match(wwwAuthenticateLines(stolen.response)!.join('\n'), /DPoP error="invalid_dpop_proof"/);
  assert.equal((await thumbprint(key.jwk)) !== (await thumbprint(otherKey.jwk)), true);
});

/** A local endpoint that records each call and answers `answer()` (or what `respond` does). */
async function recordingEndpoint(
  t: { after(fn: () => Promise<void>): void },
  respond: (request: IncomingMessage, body: string, response: ServerResponse) => void,
) {
  const calls: { authorization?: string; body: string; contentType?: string; accept?: string }[] = [];
  const endpoint = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      calls.push({
        authorization: request.headers.authorization,
        body,
        contentType: request.headers['content-type'],
        accept: request.headers.accept,
      });
      respond(request, body, response);
    });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', () => resolve()));
  t.after(async () => {
    endpoint.closeAllConnections();
    await new Promise((resolve) => endpoint.close(resolve));
  });
  return { url: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/introspect`, calls };
}

const json = (response: ServerResponse, value: unknown) =>
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));

test('the call: POST, form body with token_type_hint, client_secret_basic with RFC 6749 §2.3.1 encoding, Accept JSON; the principal of the answer', async (t) => {
  const now = Math.floor(Date.now() / 1000);
  const { url, calls } = await recordingEndpoint(t, (_request, body, response) => {
    const token = new URLSearchParams(body).get('token');
    if (token === 'user-token')
      return json(response, {
        active: true,
        sub: 'ada',
        client_id: 'app',
        iss: 'https://id.example',
        aud: ['https://agent.example/opaque'],
        exp: now + 600,
        scope: 'a b',
      });
    if (token === 'client-token')
      return json(response, { active: true, client_id: 'robot', aud: 'https://agent.example/opaque' });
    if (token === 'nobody') return json(response, { active: true, aud: 'https://agent.example/opaque' });
    return json(response, { active: false });
  });
  const entry = introspection({
    endpoint: url,
    clientId: 'rs id:é',
    clientSecret: 'p@ss w%rd+:é',
    audience: 'https://agent.example/opaque',
    cache: false,
  });
  const user = await routeAuth(entry)(bearer('user-token'));
  assert.deepEqual(user.ok && user.principal, {
    id: 'ada',
    type: 'user',
    authenticator: 'introspection',
    issuer: 'https://id.example',
    claims: {
      sub: 'ada',
      client_id: 'app',
      iss: 'https://id.example',
      aud: ['https://agent.example/opaque'],
      exp: now + 600,
      scope: 'a b',
    },
  });
  const robot = await routeAuth(entry)(bearer('client-token'));
  assert.deepEqual(robot.ok && [robot.principal.id, robot.principal.type], ['robot', 'service']);
  assert.equal((await routeAuth(entry)(bearer('nobody'))).ok, false, 'neither sub nor client_id: skip');
  assert.equal(calls[0]!.body, 'token=user-token&token_type_hint=access_token');
  assert.equal(calls[0]!.contentType, 'application/x-www-form-urlencoded');
  assert.equal(calls[0]!.accept, 'application/json');
  // RFC 6749 §2.3.1: each form-encoded, then user:password in Basic.
  assert.equal(
    Buffer.from(calls[0]!.authorization!.slice('Basic '.length), 'base64').toString(),
    'rs+id%3A%C3%A9:p%40ss+w%25rd%2B%3A%C3%A9',
  );
  assert.ok(Object.isFrozen(user.ok && user.principal.claims));
});

test("the answer's checks: active true, exp and nbf with the tolerance, iss when issuer is set, aud (URL-normalized), scopes with the 403 step-up", async (t) => {
  const now = Math.floor(Date.now() / 1000);
  const answers: Record<string, unknown> = {
    inactive: { active: false, sub: 'x' },
    'active-string': { active: 'true', sub: 'x', aud: 'https://agent.example/opaque' },
    expired: { active: true, sub: 'x', aud: 'https://agent.example/opaque', exp: now - 3600 },
    'not-yet': { active: true, sub: 'x', aud: 'https://agent.example/opaque', nbf: now + 3600 },
    'bad-exp': { active: true, sub: 'x', aud: 'https://agent.example/opaque', exp: 'soon' },
    'other-iss': { active: true, sub: 'x', aud: 'https://agent.example/opaque', iss: 'https://evil.example' },
    'other-aud': { active: true, sub: 'x', aud: 'https://other.example/api', iss: 'https://id.example' },
    'no-aud': { active: true, sub: 'x', iss: 'https://id.example' },
    'normalized-aud': {
      active: true,
      sub: 'x',
      aud: 'https://AGENT.example:443/opaque',
      iss: 'https://id.example',
      scope: 'agent:read',
    },
    'no-scope': {
      active: true,
      sub: 'x',
      aud: 'https://agent.example/opaque',
      iss: 'https://id.example',
      scope: 'agent:other',
    },
  };
  const { url } = await recordingEndpoint(t, (_request, body, response) =>
    json(response, answers[new URLSearchParams(body).get('token')!] ?? { active: false }),
  );
  const refusals: Refusal[] = [];
  const authenticate = routeAuth(
    introspection({
      endpoint: url,
      issuer: 'https://id.example',
      clientId: 'rs',
      clientSecret: 's',
      audience: 'https://agent.example/opaque',
      scopes: ['agent:read'],
      cache: false,
    }),
    {
      onRefused: (refusal) => void refusals.push(refusal),
    },
  );
  const expected: Record<string, [number, string | undefined]> = {
    inactive: [401, 'inactive'],
    'active-string': [401, 'inactive'],
    expired: [401, 'expired'],
    'not-yet': [401, 'not-yet-valid'],
    'bad-exp': [401, 'malformed'],
    'other-iss': [401, 'issuer'],
    'other-aud': [401, 'audience'],
    'no-aud': [401, 'audience'],
    'normalized-aud': [200, undefined],
    'no-scope': [403, 'scope'],
  };
  for (const [token, [status, reason]] of Object.entries(expected)) {
    refusals.length = 0;
    const result = await authenticate(bearer(token));
    assert.equal(result.ok ? 200 : result.response.status, status, token);
    assert.equal(refusals[0]?.reason, reason, token);
    if (status === 403)
      assert.deepEqual(wwwAuthenticateLines((result as { response: Response }).response), [
        'Bearer error="insufficient_scope", scope="agent:read"',
      ]);
  }
});

test("failures skip and are not kept: 5xx, not JSON, over 64 KiB, a redirect, a timeout; the answer is kept by the token's digest only", async (t) => {
  let behaviour = 'ok';
  const { url, calls } = await recordingEndpoint(t, (_request, _body, response) => {
    if (behaviour === '500') return void response.writeHead(500).end('{"active":true,"sub":"x"}');
    if (behaviour === 'html') return void response.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
    if (behaviour === 'huge') return json(response, { active: true, sub: 'x', aud: 'a', pad: 'p'.repeat(70 * 1024) });
    if (behaviour === 'redirect') return void response.writeHead(302, { location: 'https://evil.example/' }).end();
    if (behaviour === 'slow') return void setTimeout(() => json(response, { active: true, sub: 'x', aud: 'a' }), 2000);
    return json(response, { active: true, sub: 'x', aud: 'a' });
  });
  const warnings: unknown[] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => void warnings.push(args.join(' '));
  t.after(() => {
    console.warn = original;
  });
  const entry = introspection({
    endpoint: url,
    clientId: 'rs',
    clientSecret: 'the-client-secret',
    audience: 'a',
    timeoutMs: 300,
  });
  const token = 'opaque-token-value-0123456789';
  for (const failing of ['500', 'html', 'huge', 'redirect', 'slow']) {
    behaviour = failing;
    const result = await routeAuth(entry)(bearer(token));
    assert.equal(result.ok ? 200 : result.response.status, 401, failing);
  }
  assert.equal(calls.length, 5, 'no failure was kept: each request called again');
  behaviour = 'ok';
  assert.equal((await routeAuth(entry)(bearer(token))).ok, true, 'served once the endpoint answers');
  assert.equal((await routeAuth(entry)(bearer(token))).ok, true);
  assert.equal(calls.length, 6, 'the good answer is kept: no seventh call');
  assert.ok(warnings.length >= 5);
  assert.ok(
    !warnings.some((line) => String(line).includes(token) || String(line).includes('the-client-secret')),
    'no token or secret in a warning',
  );
});

test('introspection() options are checked at creation (closed, AuthConfigError)', () => {
  const base = { endpoint: 'https://id.example/introspect', clientId: 'rs', clientSecret: 's', audience: 'a' };
  const config = (options: unknown) =>
    assert.throws(
      () => introspection(options as never),
      (error) =>
        error instanceof AuthConfigError &&
        error.code === 'AGENT_AUTH_CONFIG_INVALID' &&
        error.message.startsWith('introspection(): '),
    );
  config({ ...base, endpoint: undefined });
  config({ ...base, endpoint: 'http://id.example/introspect' });
  config({ ...base, clientId: '' });
  config({ ...base, clientSecret: undefined });
  config({ ...base, audience: undefined });
  config({ ...base, timeoutMs: 0 });
  config({ ...base, cache: { maxAgeSec: 0 } });
  config({ ...base, cache: { maxEntrys: 5 } });
  config({ ...base, cache: true });
  config({ ...base, dpopAlgorithms: ['HS256'] });
  assert.throws(() => introspection({ ...base, clientSecrett: 'x' } as never), /did you mean "clientSecret"/);
  assert.deepEqual(introspection({ ...base, scopes: ['a:b'] }).challenges, [
    { scheme: 'Bearer', params: { scope: 'a:b' } },
  ]);
  assert.equal(typeof opaqueToken, 'function');
});
