// Limits per principal on the route handler (design §22): the closed `limits` option; `requests`
// admitting `limit` and refusing the next with 429, Retry-After and the RateLimit fields (and
// accepted answers carrying them); the keys (the principal's ownership key, design §26, or the
// client address for anonymous and boolean auth, without its port, IPv4-mapped forms as IPv4);
// every route behind auth counted, MCP tools/call only, never health or the metadata document;
// an in-process send never limited. On Node, Bun and Deno.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anonymous, apiToken } from '../../src/auth/index.ts';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import type { Principal } from '../../src/agent/types.ts';
import type { AuthFn } from '../../src/auth/types.ts';
import { agentHandler } from '../../src/http/index.ts';
import { memoryLimitStore } from '../../src/http/limit-store.ts';
import { limitStoreAt } from '../helpers/test-hook.ts';
import { addressKey } from '../../src/http/limits.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { AUDIENCE, NOW, SECRET, claims, hmacSigner, signToken } from '../helpers/jwt.ts';
import { DEPLOY_MESSAGE } from '../helpers/http-agent.ts';

const BASE = 'https://agent.example/agent';
type Handler = (request: Request) => Promise<Response>;

function call(
  handler: Handler,
  path: string,
  {
    method = 'POST',
    token,
    body,
    headers = {},
  }: { method?: string; token?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  return handler(
    new Request(`${BASE}${path}`, {
      method,
      headers: {
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...(token !== undefined && { authorization: `Bearer ${token}` }),
        ...headers,
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    }),
  );
}
const send = (handler: Handler, token?: string, headers: Record<string, string> = {}) =>
  call(handler, '', { token, body: { message: 'hello' }, headers });
/** `r` of the item of `policy` in a RateLimit field. */
const remaining = (response: Response, policy = 'requests') =>
  Number(new RegExp(`"${policy}";r=(\\d+)`).exec(response.headers.get('ratelimit') ?? '')?.[1] ?? NaN);
const echo = () => createAgent({ name: 'limits', model: echoModel() });
/** The address a test gives a request (`clientAddress` reads it): the handler's own trust decision, made here for the test. */
const testAddress = (request: Request) => request.headers.get('x-test-address') ?? undefined;
const from = (address: string) => ({ 'x-test-address': address });

test('limits is closed like every option object: a typo, an unknown key, a number out of bounds is an error at creation', () => {
  const agent = echo();
  const auth = apiToken('tok-0123456789abcdef');
  const bad: [unknown, RegExp][] = [
    [{ request: { limit: 3, windowSec: 60 } }, /unknown option "request" \(did you mean "requests"\?\)/],
    [
      { requests: { limit: 3, windowSecs: 60 } },
      /limits\.requests: unknown option "windowSecs" \(did you mean "windowSec"\?\)/,
    ],
    [{ requests: { limit: 3, windowSec: 60 }, clientAdress: testAddress }, /did you mean "clientAddress"/],
    [{ requests: { limit: 0, windowSec: 60 } }, /limits\.requests\.limit must be a positive integer/],
    [{ tokens: { limit: 1.5, windowSec: 60 } }, /limits\.tokens\.limit must be a positive integer/],
    [{ requests: { limit: '3', windowSec: 60 } }, /limits\.requests\.limit must be a positive integer/],
    [
      { failures: { limit: 3, windowSec: 0 } },
      /limits\.failures\.windowSec must be a whole number of seconds from 1 to 31536000/,
    ],
    [{ requests: { limit: 3, windowSec: 31_536_001 } }, /windowSec must be a whole number/],
    [{ requests: { limit: 3, windowSec: 0.5 } }, /windowSec must be a whole number/],
    [{ requests: { limit: 3 } }, /windowSec must be a whole number/],
    [{ requests: 3 }, /limits\.requests must be \{ limit, windowSec \}/],
    [
      { tokens: { limit: 10, windowSec: 60, outputReserve: -1 } },
      /limits\.tokens\.outputReserve must be a whole number/,
    ],
    [
      { tokens: { limit: 10, windowSec: 60, outputReserve: 1.5 } },
      /limits\.tokens\.outputReserve must be a whole number/,
    ],
    [
      { tokens: { limit: 10, windowSec: 60, outputReserve: '1024' } },
      /limits\.tokens\.outputReserve must be a whole number/,
    ],
    [{ tokens: { limit: 10, windowSec: 60, outputReserv: 10 } }, /did you mean "outputReserve"/],
    [{ requests: { limit: 10, windowSec: 60, outputReserve: 10 } }, /limits\.requests: unknown option "outputReserve"/],
    [
      { tokens: { limit: 10, windowSec: 60 }, store: { ...memoryLimitStore(), reserve: 1 } },
      /limits\.store must be a limit store \(hit, settle, acquire, release, reserve\?\)/,
    ],
    [{ concurrent: 0 }, /limits\.concurrent must be a positive integer/],
    [{ concurrent: Number.POSITIVE_INFINITY }, /limits\.concurrent must be a positive integer/],
    [{}, /limits needs one of requests, concurrent, tokens, failures/],
    [{ store: { hit() {} }, concurrent: 1 }, /limits\.store must be a limit store/],
    [{ concurrent: 1, clientAddress: 'x-forwarded-for' }, /limits\.clientAddress must be a function/],
    [null, /limits must be \{/],
  ];
  for (const [limits, message] of bad) {
    assertConfigError(
      () => agentHandler(agent, { auth, limits: limits as never }),
      'agentHandler()',
      JSON.stringify(limits),
    );
    assert.throws(() => agentHandler(agent, { auth, limits: limits as never }), message);
  }
  assert.throws(
    () => agentHandler(agent, { auth, limit: { concurrent: 1 } } as never),
    /unknown option "limit" \(did you mean "limits"\?\)/,
  );
  // Without auth, nothing answers 401: a failure bound there would bound nothing.
  assert.throws(
    () => agentHandler(agent, { limits: { failures: { limit: 3, windowSec: 60 } } }),
    /limits\.failures needs auth/,
  );
  agentHandler(agent, {
    limits: { requests: { limit: 3, windowSec: 60 }, concurrent: 2, tokens: { limit: 1000, windowSec: 3600 } },
  });
});

test('requests { limit: 3 } admits three in the window and refuses the fourth: 429, Retry-After and the RateLimit fields of the window that refused; it frees when the window does', async () => {
  let now = 1_000_000.25;
  const handler = agentHandler(echo(), {
    basePath: '/agent',
    auth: apiToken('tok-0123456789abcdef'),
    limits: { requests: { limit: 3, windowSec: 60 }, store: limitStoreAt(100, () => now) },
  });
  // The window runs from 999,960 to 1,000,020: 19.75 seconds are left, 20 in whole seconds.
  for (const left of [2, 1, 0]) {
    const accepted = await send(handler, 'tok-0123456789abcdef');
    assert.equal(accepted.status, 200);
    assert.equal(accepted.headers.get('ratelimit-policy'), '"requests";q=3;w=60');
    assert.equal(accepted.headers.get('ratelimit'), `"requests";r=${left};t=20`);
    assert.equal(accepted.headers.get('retry-after'), null);
  }
  const refused = await send(handler, 'tok-0123456789abcdef');
  assert.equal(refused.status, 429);
  assert.deepEqual(await refused.json(), { error: 'Too Many Requests' });
  assert.equal(refused.headers.get('content-type'), 'application/json');
  assert.equal(refused.headers.get('cache-control'), 'no-store');
  assert.equal(refused.headers.get('retry-after'), '20');
  assert.equal(refused.headers.get('ratelimit-policy'), '"requests";q=3;w=60');
  assert.equal(refused.headers.get('ratelimit'), '"requests";r=0;t=20');
  now += 19.5;
  const late = await send(handler, 'tok-0123456789abcdef');
  assert.deepEqual(
    [late.status, late.headers.get('retry-after'), late.headers.get('ratelimit')],
    [429, '1', '"requests";r=0;t=1'],
    'never less than one second',
  );
  now += 0.25;
  const next = await send(handler, 'tok-0123456789abcdef');
  assert.equal(next.status, 200, 'the window freed when Retry-After said');
  assert.equal(next.headers.get('ratelimit'), '"requests";r=2;t=60');
});

test("requests, concurrent and tokens are per principal: its ownership key [issuer ?? '', authenticator, id]", async () => {
  const principals: Record<string, Principal> = {
    alice: { type: 'user', id: 'alice', authenticator: 'custom' },
    bob: { type: 'user', id: 'bob', authenticator: 'custom' },
    aliceAtA: { type: 'user', id: 'alice', authenticator: 'jwt', issuer: 'https://a.example' },
    aliceAtAByOidc: { type: 'user', id: 'alice', authenticator: 'oidc', issuer: 'https://a.example' },
    aliceAtB: { type: 'user', id: 'alice', authenticator: 'jwt', issuer: 'https://b.example' },
    aliceByBasic: { type: 'user', id: 'alice', authenticator: 'basic' },
  };
  const byToken: AuthFn = (request) => principals[request.headers.get('authorization')?.slice(7) ?? ''] ?? null;
  const handler = agentHandler(echo(), {
    basePath: '/agent',
    auth: byToken,
    limits: { requests: { limit: 5, windowSec: 3600 }, clientAddress: testAddress },
  });
  assert.equal(remaining(await send(handler, 'alice')), 4);
  assert.equal(
    remaining(await send(handler, 'alice', from('203.0.113.9'))),
    3,
    'a principal is one caller from any address',
  );
  assert.equal(remaining(await send(handler, 'bob')), 4);
  assert.equal(remaining(await send(handler, 'aliceAtA')), 4);
  assert.equal(
    remaining(await send(handler, 'aliceAtAByOidc')),
    4,
    'one issuer, one id, another entry: another caller, as it owns other sessions',
  );
  assert.equal(remaining(await send(handler, 'aliceAtB')), 4, 'the same id from another issuer is another caller');
  assert.equal(remaining(await send(handler, 'aliceByBasic')), 4);
  assert.equal(remaining(await send(handler, 'alice')), 2);
});

test('anonymous() callers are counted per client address, all of them as one where no address is known; an IPv6 address by its /64', async () => {
  const handler = agentHandler(echo(), {
    basePath: '/agent',
    auth: anonymous(),
    limits: { requests: { limit: 5, windowSec: 3600 }, clientAddress: testAddress },
  });
  assert.equal(remaining(await send(handler, undefined, from('198.51.100.1'))), 4);
  assert.equal(remaining(await send(handler, undefined, from('198.51.100.1'))), 3);
  assert.equal(remaining(await send(handler, undefined, from('198.51.100.2'))), 4);
  assert.equal(remaining(await send(handler, undefined)), 4);
  assert.equal(remaining(await send(handler, undefined)), 3, 'callers without an address share one budget');
  assert.equal(remaining(await send(handler, undefined, from('2001:db8:1:2::1'))), 4);
  assert.equal(
    remaining(await send(handler, undefined, from('2001:DB8:1:2:ffff:0:0:9'))),
    3,
    'another address of the same /64',
  );
  assert.equal(remaining(await send(handler, undefined, from('2001:db8:1:3::1'))), 4);
});

test('addressKey: IPv4 as it is, without its port; IPv4-mapped and IPv4-compatible IPv6 as the IPv4 address; other IPv6 by its /64, however it is written', () => {
  for (const written of [
    '203.0.113.7',
    '203.0.113.7:5678',
    '203.0.113.7:1',
    ' 203.0.113.7 ',
    '::ffff:203.0.113.7',
    '::FFFF:cb00:7107',
    '[::ffff:203.0.113.7]:443',
    '0:0:0:0:0:ffff:203.0.113.7',
    '0000:0000:0000:0000:0000:ffff:cb00:7107',
    '::203.0.113.7',
    '::cb00:7107',
    '[::cb00:7107]:8080',
  ])
    assert.equal(addressKey(written), '203.0.113.7', written);
  assert.equal(addressKey('::ffff:198.51.100.1'), '198.51.100.1', 'each IPv4-mapped address is its own key');
  assert.equal(addressKey('::ffff:c633:6402'), '198.51.100.2');
  for (const written of [
    '2001:db8:0:1::5',
    '2001:0DB8:0000:0001:0000:0000:0000:0006',
    '[2001:db8:0:1::7]',
    '[2001:db8:0:1::7]:443',
    '2001:db8:0:1::8%eth0',
    '2001:db8:0:1:0:0:1.2.3.4',
  ]) {
    assert.equal(addressKey(written), '2001:db8:0:1::/64', written);
  }
  assert.equal(addressKey('::1'), '0:0:0:0::/64', 'the loopback is no IPv4-compatible address');
  assert.equal(addressKey('::'), '0:0:0:0::/64');
  assert.equal(addressKey('2001:db8::'), '2001:db8:0:0::/64');
  assert.equal(addressKey('not an address'), 'not an address');
  assert.equal(addressKey('1.2.3.400'), '1.2.3.400');
  assert.equal(addressKey('x'.repeat(500)).length, 100, 'anything else is cut to 100 characters');
});

test('failures and anonymous callers key an address by its IPv4 whatever the form: ports and IPv4-mapped forms are one caller, each IPv4-mapped address its own', async () => {
  const handler = agentHandler(echo(), {
    basePath: '/agent',
    auth: anonymous(),
    limits: { requests: { limit: 5, windowSec: 3600 }, clientAddress: testAddress },
  });
  assert.equal(remaining(await send(handler, undefined, from('203.0.113.5:1111'))), 4);
  assert.equal(remaining(await send(handler, undefined, from('203.0.113.5:2222'))), 3, 'another port: the same caller');
  assert.equal(remaining(await send(handler, undefined, from('::ffff:203.0.113.5'))), 2);
  assert.equal(remaining(await send(handler, undefined, from('::ffff:203.0.113.6'))), 4, 'another IPv4-mapped address');
  assert.equal(remaining(await send(handler, undefined, from('::ffff:cb00:7107'))), 4);
});

test("the limits key is the ownership key: a JWT whose iss names an authenticator ('api-token') and whose sub is 'backend' cannot spend apiToken({ id: 'backend' })'s budget", async () => {
  const token = 'backend-token-0123456789';
  const forged = await signToken(
    { alg: 'HS256' },
    claims({ iss: 'api-token', sub: 'backend' }),
    await hmacSigner(SECRET),
  );
  const handler = agentHandler(echo(), {
    basePath: '/agent',
    auth: [apiToken(token, { id: 'backend' }), jwtAt({ secret: SECRET, audience: AUDIENCE }, () => NOW)],
    limits: { requests: { limit: 3, windowSec: 3600 } },
  });
  for (let n = 0; n < 3; n++) assert.equal(remaining(await send(handler, forged)), 2 - n);
  const backend = await send(handler, token);
  assert.equal(backend.status, 200, "the JWT spent a budget of its own, not apiToken's");
  assert.equal(remaining(backend), 2);
});

test('the boolean auth is counted per client address; an entry of your own returning the same fields is a principal', async () => {
  const boolean = agentHandler(echo(), {
    basePath: '/agent',
    auth: () => true,
    limits: { requests: { limit: 5, windowSec: 3600 }, clientAddress: testAddress },
  });
  assert.equal(remaining(await send(boolean, undefined, from('198.51.100.1'))), 4);
  assert.equal(remaining(await send(boolean, undefined, from('198.51.100.2'))), 4);
  const lookalike: AuthFn = () => ({ id: 'anonymous', type: 'user', authenticator: 'custom' });
  const custom = agentHandler(echo(), {
    basePath: '/agent',
    auth: lookalike,
    limits: { requests: { limit: 5, windowSec: 3600 }, clientAddress: testAddress },
  });
  assert.equal(remaining(await send(custom, undefined, from('198.51.100.1'))), 4);
  assert.equal(
    remaining(await send(custom, undefined, from('198.51.100.2'))),
    3,
    'one principal, whatever its address',
  );
  // Without auth at all every caller is anonymous: counted by address too.
  const open = agentHandler(echo(), {
    basePath: '/agent',
    limits: { requests: { limit: 5, windowSec: 3600 }, clientAddress: testAddress },
  });
  assert.equal(remaining(await send(open, undefined, from('198.51.100.1'))), 4);
  assert.equal(remaining(await send(open, undefined, from('198.51.100.2'))), 4);
});

test('every route behind auth is counted, each request once; GET <base>/health and the protected resource metadata document never are', async () => {
  const handler = agentHandler(ownedAgent(), {
    basePath: '/agent',
    auth: apiToken('tok-0123456789abcdef'),
    protectedResource: { resource: 'https://agent.example/agent', authorizationServers: ['https://issuer.example'] },
    limits: { requests: { limit: 100, windowSec: 3600 } },
  });
  const token = 'tok-0123456789abcdef';
  let expected = 100;
  const counted = async (what: string, response: Response | Promise<Response>) => {
    const answer = await response;
    assert.ok(answer.status < 300, `${what}: ${answer.status}`);
    assert.equal(remaining(answer), --expected, what);
    return answer;
  };
  const sent = await (await counted('POST <base>', call(handler, '', { token, body: { message: 'hi' } }))).json();
  await counted(
    'POST <base>/chat',
    call(handler, '/chat', { token, body: { message: 'again', sessionId: sent.sessionId } }),
  );
  await (
    await counted(
      'POST <base>/chat (stream)',
      call(handler, '/chat', { token, body: { message: 'stream' }, headers: { accept: 'text/event-stream' } }),
    )
  ).text();
  await counted('GET <base>/chat/:id', call(handler, `/chat/${sent.sessionId}`, { method: 'GET', token }));
  const paused = await (
    await counted('POST <base> (approval)', call(handler, '', { token, body: { message: DEPLOY_MESSAGE } }))
  ).json();
  await counted(
    'GET <base>/approvals',
    call(handler, `/approvals?sessionId=${paused.sessionId}`, { method: 'GET', token }),
  );
  await counted(
    'POST <base>/approvals/:id',
    call(handler, `/approvals/${paused.approvals[0].id}`, { token, body: { approved: true } }),
  );
  await (
    await counted(
      'POST <base>/ui',
      call(handler, '/ui', {
        token,
        body: {
          id: 'ui-chat',
          messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
          trigger: 'submit-message',
        },
      }),
    )
  ).text();
  await counted('GET <base>/sessions', call(handler, '/sessions', { method: 'GET', token }));
  await counted('DELETE <base>/chat/:id', call(handler, `/chat/${sent.sessionId}`, { method: 'DELETE', token }));
  for (let i = 0; i < 5; i++) {
    const health = await call(handler, '/health', { method: 'GET' });
    assert.equal(health.status, 200);
    assert.equal(health.headers.get('ratelimit'), null);
    const metadata = await handler(new Request('https://agent.example/.well-known/oauth-protected-resource/agent'));
    assert.equal(metadata.status, 200);
    assert.equal(metadata.headers.get('ratelimit'), null);
  }
  await counted('after health and metadata', call(handler, '', { token, body: { message: 'last' } }));
});

/** An agent with sessions: 'owned' (so GET /sessions and DELETE /chat/:id exist) and a tool that waits for approval. */
function ownedAgent() {
  const deploy = {
    name: 'deploy',
    description: 'Deploys',
    parameters: { type: 'object', properties: { env: { type: 'string' } } },
    needsApproval: true,
    execute: () => ({ ok: true }),
  };
  return createAgent({ name: 'owned', model: echoModel(), sessions: 'owned', tools: [deploy] });
}

const rpc = (id: number | undefined, method: string, params?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  ...(id !== undefined && { id }),
  method,
  ...(params && { params }),
});
const mcp = (handler: Handler, body: unknown) =>
  call(handler, '/mcp', {
    token: 'tok-0123456789abcdef',
    body,
    headers: { accept: 'application/json, text/event-stream' },
  });

test('the MCP route counts tools/call only (not initialize, ping, tools/list or notifications), and answers the same HTTP 429 with a JSON-RPC error', async () => {
  const handler = agentHandler(echo(), {
    basePath: '/agent',
    auth: apiToken('tok-0123456789abcdef'),
    mcp: true,
    limits: { requests: { limit: 2, windowSec: 3600 } },
  });
  for (let i = 0; i < 4; i++) {
    for (const body of [
      rpc(1, 'initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 't', version: '1' },
      }),
      rpc(undefined, 'notifications/initialized'),
      rpc(2, 'ping'),
      rpc(3, 'tools/list'),
    ]) {
      const answer = await mcp(handler, body);
      assert.ok(answer.status === 200 || answer.status === 202, `${JSON.stringify(body)}: ${answer.status}`);
      assert.equal(answer.headers.get('ratelimit'), null);
    }
  }
  const ask = rpc(4, 'tools/call', { name: 'ask', arguments: { message: 'hi' } });
  for (const left of [1, 0]) {
    const answer = await mcp(handler, ask);
    assert.equal(answer.status, 200);
    assert.equal((await answer.json()).result.isError, false);
    assert.equal(
      answer.headers.get('ratelimit'),
      `"requests";r=${left};t=${answer.headers.get('ratelimit')!.split('t=')[1]}`,
    );
  }
  const refused = await mcp(handler, ask);
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('ratelimit-policy'), '"requests";q=2;w=3600');
  assert.match(refused.headers.get('retry-after')!, /^\d+$/);
  // The body is a JSON-RPC error with the request's id (design §29).
  assert.deepEqual(await refused.json(), {
    jsonrpc: '2.0',
    id: 4,
    error: {
      code: -32000,
      message: 'Too Many Requests',
      data: { retryAfter: Number(refused.headers.get('retry-after')) },
    },
  });
  assert.equal((await mcp(handler, rpc(5, 'tools/list'))).status, 200, 'listing still works');
  // The other routes share the budget: it is spent.
  assert.equal((await send(handler, 'tok-0123456789abcdef')).status, 429);
});

test('without auth, with clientAddress: MCP tools/call is served and counted per address (design §26)', async () => {
  const handler = agentHandler(echo(), {
    basePath: '/agent',
    mcp: true,
    limits: { requests: { limit: 1, windowSec: 3600 }, clientAddress: testAddress },
  });
  const toolsCall = (address: string) =>
    call(handler, '/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask', arguments: { message: 'hi' } } },
      headers: { accept: 'application/json, text/event-stream', ...from(address) },
    });
  const first = await toolsCall('198.51.100.1');
  assert.equal(first.status, 200);
  assert.equal(
    ((await first.json()) as { result: { structuredContent: { text: string } } }).result.structuredContent.text,
    'hi',
  );
  assert.equal((await toolsCall('198.51.100.1')).status, 429);
  assert.equal((await toolsCall('198.51.100.2')).status, 200);
});

test('limits live on the route handler: an in-process agent.send() is never limited', async () => {
  const agent = echo();
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: apiToken('tok-0123456789abcdef', { id: 'svc' }),
    limits: { requests: { limit: 1, windowSec: 3600 }, concurrent: 1, tokens: { limit: 100, windowSec: 3600 } },
  });
  assert.equal((await send(handler, 'tok-0123456789abcdef')).status, 200);
  assert.equal((await send(handler, 'tok-0123456789abcdef')).status, 429);
  const principal = { id: 'svc', type: 'service', authenticator: 'api-token' } as const;
  const results = await Promise.all(Array.from({ length: 5 }, (_, n) => agent.send(`direct ${n}`, { principal })));
  assert.deepEqual(
    results.map((result) => result.text),
    ['direct 0', 'direct 1', 'direct 2', 'direct 3', 'direct 4'],
  );
});

test('with requests and tokens, accepted answers carry both policies and both service limits; a refusal names only the policy that refused', async () => {
  const now = 7200.5;
  const usage = createAgent({
    name: 'usage',
    model: { generate: async () => ({ text: 'ok', usage: { inputTokens: 30, outputTokens: 20 } }) },
  });
  const handler = agentHandler(usage, {
    basePath: '/agent',
    auth: apiToken('tok-0123456789abcdef'),
    limits: {
      requests: { limit: 10, windowSec: 60 },
      tokens: { limit: 120, windowSec: 3600 },
      store: limitStoreAt(100, () => now),
    },
  });
  const first = await send(handler, 'tok-0123456789abcdef');
  // Model tokens have no unit in the draft: their fields are their own (design §29).
  assert.equal(first.headers.get('ratelimit-policy'), '"requests";q=10;w=60');
  assert.equal(first.headers.get('agentward-tokens-policy'), '"tokens";q=120;w=3600');
  // The JSON answer comes after its turn is stored and counted: 50 of 120 tokens spent.
  assert.equal(first.headers.get('ratelimit'), '"requests";r=9;t=60');
  assert.equal(first.headers.get('agentward-tokens'), '"tokens";r=70;t=3600');
  await send(handler, 'tok-0123456789abcdef');
  const third = await send(handler, 'tok-0123456789abcdef');
  assert.equal(third.status, 200, '100 spent is below 120: the turn starts, and finishes past the limit');
  assert.equal(third.headers.get('ratelimit'), '"requests";r=7;t=60');
  assert.equal(third.headers.get('agentward-tokens'), '"tokens";r=0;t=3600');
  const refused = await send(handler, 'tok-0123456789abcdef');
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('agentward-tokens-policy'), '"tokens";q=120;w=3600');
  assert.equal(refused.headers.get('agentward-tokens'), '"tokens";r=0;t=3600');
  assert.equal(refused.headers.get('ratelimit-policy'), null, 'only the policy that refused');
  assert.equal(refused.headers.get('retry-after'), '3600');
});
