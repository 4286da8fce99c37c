// Design §15: OAuth error challenges and scope step-up (RFC 6750 §3, RFC 9728, MCP authorization):
// challenge params, error="invalid_token" on a refused credential, the 403 insufficient_scope
// challenge, per-route scopes on the handler, protectedResourceMetadata(), URL audiences, Ed25519.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AuthConfigError,
  AuthError,
  apiToken,
  basic,
  formatChallenge,
  jwt,
  protectedResourceMetadata,
  routeAuth,
  wwwAuthenticateLines,
  type AuthFn,
} from '../../src/auth/index.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { normalizeAudience } from '../../src/auth/jws/claims.ts';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { AUDIENCE, ISSUER, NOW, SECRET, claims, hmacSigner, signToken, testKey } from '../helpers/jwt.ts';
import { assertConfigError } from '../helpers/config-error.ts';

const METADATA = 'https://agent.example.com/.well-known/oauth-protected-resource/agent';
const hs = async (payload: Record<string, unknown>, header: Record<string, unknown> = { alg: 'HS256' }) =>
  signToken(header, payload, await hmacSigner(SECRET));
const at = (options: Parameters<typeof jwt>[0]) => jwtAt(options, () => NOW);
const request = (authorization?: string) =>
  new Request('https://agent.example.com/agent', { headers: authorization === undefined ? {} : { authorization } });

async function answer(
  entries: AuthFn | AuthFn[],
  authorization?: string,
): Promise<{ status: number; lines: readonly string[]; body: string; cache: string | null }> {
  const result = await routeAuth(entries)(request(authorization));
  assert.ok(!result.ok, 'refused');
  return {
    status: result.response.status,
    lines: wwwAuthenticateLines(result.response) ?? [],
    body: await result.response.text(),
    cache: result.response.headers.get('cache-control'),
  };
}

test('challenge params are written after realm, in insertion order, quoted (RFC 9110); error goes first', () => {
  assert.equal(
    formatChallenge({ scheme: 'Bearer', realm: 'api', params: { scope: 'a b', resource_metadata: 'https://x/"y"' } }),
    'Bearer realm="api", scope="a b", resource_metadata="https://x/\\"y\\""',
  );
  assert.equal(
    formatChallenge({ scheme: 'Bearer', params: { scope: 'a' } }, 'invalid_token'),
    'Bearer error="invalid_token", scope="a"',
  );
  assert.equal(formatChallenge({ scheme: 'DPoP', params: { algs: 'ES256 EdDSA' } }), 'DPoP algs="ES256 EdDSA"');
});

test('challenge declarations are checked at creation: param names are tokens, values quotable, no realm/error/charset params, closed shape', () => {
  const declare = (challenges: unknown) => Object.assign((() => null) as AuthFn, { challenges });
  for (const [what, challenges] of [
    ['a param name with a space', [{ scheme: 'Bearer', params: { 'a b': 'x' } }]],
    ['a control character in a value', [{ scheme: 'Bearer', params: { scope: 'a\nb' } }]],
    ['an error param (the layer writes it)', [{ scheme: 'Bearer', params: { error: 'x' } }]],
    ['a realm param', [{ scheme: 'Bearer', params: { realm: 'x' } }]],
    ['params not an object', [{ scheme: 'Bearer', params: 'scope=a' }]],
    ['an unknown member (the old resourceMetadata)', [{ scheme: 'Bearer', resourceMetadata: METADATA }]],
  ] as const) {
    assertConfigError(() => routeAuth([declare(challenges)]), 'routeAuth()', what);
  }
});

test('jwt(): the Bearer challenge carries resource_metadata and the scope it requires (MCP asks for exactly these)', async () => {
  const entry = at({
    secret: SECRET,
    audience: AUDIENCE,
    scopes: ['agent:chat', 'agent:read'],
    resourceMetadata: METADATA,
  });
  assert.deepEqual(entry.challenges, [
    { scheme: 'Bearer', params: { resource_metadata: METADATA, scope: 'agent:chat agent:read' } },
  ]);
  const { status, lines, body, cache } = await answer(entry);
  assert.deepEqual(
    [status, lines, body, cache],
    [
      401,
      [`Bearer resource_metadata="${METADATA}", scope="agent:chat agent:read"`],
      '{"error":"Unauthorized"}',
      'no-store',
    ],
  );
});

test('a refused credential of a scheme the list reads gets error="invalid_token" on that scheme\'s challenges; none without a credential', async () => {
  const list = [
    at({ secret: SECRET, audience: AUDIENCE, resourceMetadata: METADATA }),
    basic({ users: { ada: 'pw-0123456789' } }),
  ];
  const plain = [`Bearer resource_metadata="${METADATA}"`, 'Basic realm="agent", charset="UTF-8"'];
  assert.deepEqual((await answer(list)).lines, plain, 'no credential: no error (RFC 6750 §3.1)');
  const expired = await hs(claims({ exp: NOW - 3600 }));
  for (const token of [expired, 'not-a-jwt', 'a.b.c']) {
    const refused = await answer(list, `Bearer ${token}`);
    assert.deepEqual(refused.lines, [
      `Bearer error="invalid_token", resource_metadata="${METADATA}"`,
      'Basic realm="agent", charset="UTF-8"',
    ]);
    assert.equal(refused.body, '{"error":"Unauthorized"}', 'the body never says which check failed');
  }
  assert.deepEqual(
    (await answer(list, 'bearer   x')).lines[0],
    `Bearer error="invalid_token", resource_metadata="${METADATA}"`,
    'the scheme name is case-insensitive',
  );
  assert.deepEqual((await answer(list, 'Basic YWRhOndyb25n')).lines, plain, 'Basic gets no error param');
  assert.deepEqual(
    (await answer([basic({ users: { ada: 'pw-0123456789' } })], 'Bearer x')).lines,
    ['Basic realm="agent", charset="UTF-8"'],
    'a scheme no entry reads: no error',
  );
  assert.deepEqual((await answer(list, 'Negotiate abc')).lines, plain);
  // A DPoP credential to a list that advertises DPoP: its challenges carry the error, Bearer's do not.
  const dpop = Object.assign((() => null) as AuthFn, {
    challenges: [{ scheme: 'DPoP', params: { algs: 'ES256' } }, { scheme: 'Bearer' }],
  });
  assert.deepEqual((await answer(dpop, 'DPoP x.y.z')).lines, ['DPoP error="invalid_token", algs="ES256"', 'Bearer']);
  // An entry's AuthError(401) answers the same way.
  const stops = Object.assign(
    (() => {
      throw new AuthError(401);
    }) as AuthFn,
    { challenges: [{ scheme: 'Bearer' }] },
  );
  assert.deepEqual((await answer(stops, 'Bearer x')).lines, ['Bearer error="invalid_token"']);
});

test('a valid token lacking the entry\'s scopes: 403 with Bearer error="insufficient_scope", scope, resource_metadata; body Forbidden, no-store', async () => {
  const entry = at({ secret: SECRET, audience: AUDIENCE, scopes: ['agent:approve'], resourceMetadata: METADATA });
  const refused = await answer(
    [entry, apiToken('token-0123456789')],
    `Bearer ${await hs(claims({ scope: 'agent:chat' }))}`,
  );
  assert.deepEqual(refused, {
    status: 403,
    lines: [`Bearer error="insufficient_scope", scope="agent:approve", resource_metadata="${METADATA}"`],
    body: '{"error":"Forbidden"}',
    cache: 'no-store',
  });
});

test('new AuthError(403, { scope }) from a mapper or a custom entry answers the same challenge; the scheme is DPoP when the token came that way', async () => {
  const mapper = at({
    secret: SECRET,
    audience: AUDIENCE,
    resourceMetadata: METADATA,
    principal: () => {
      throw new AuthError(403, { scope: ['mcp:write', 'mcp:read'] });
    },
  });
  const viaMapper = await answer(mapper, `Bearer ${await hs(claims())}`);
  assert.deepEqual(
    [viaMapper.status, viaMapper.lines],
    [403, [`Bearer error="insufficient_scope", scope="mcp:write mcp:read", resource_metadata="${METADATA}"`]],
  );
  const custom = Object.assign(
    (() => {
      throw new AuthError(403, { scope: ['mcp:write'] });
    }) as AuthFn,
    { challenges: [{ scheme: 'DPoP', params: { algs: 'ES256' } }] },
  );
  assert.deepEqual((await answer(custom, 'DPoP x.y.z')).lines, ['DPoP error="insufficient_scope", scope="mcp:write"']);
  // A plain AuthError(403) stays a bare 403.
  const bare = await answer(
    Object.assign(
      (() => {
        throw new AuthError(403);
      }) as AuthFn,
      {},
    ),
    'Bearer x',
  );
  assert.deepEqual([bare.status, bare.lines, bare.body], [403, [], '{"error":"Forbidden"}']);
});

test('AuthError: scope only on a 403, a non-empty list of RFC 6749 scope tokens', () => {
  assert.throws(() => new AuthError(401, { scope: ['a'] }), {
    name: 'AuthConfigError',
    code: 'AGENT_AUTH_CONFIG_INVALID',
    message: 'new AuthError(): scope is the answer of a 403 (insufficient_scope); got status 401',
  });
  for (const scope of [[], ['a b'], ['a"'], [''], 'a', [1]])
    assert.throws(() => new AuthError(403, { scope: scope as never }), {
      name: 'AuthConfigError',
      code: 'AGENT_AUTH_CONFIG_INVALID',
      message: /^new AuthError\(\): scope must be a non-empty list of RFC 6749 scope tokens; got (an array|a string)$/,
    });
  assert.deepEqual(new AuthError(403, { scope: ['mcp:write'] }).scope, ['mcp:write']);
  assert.equal(new AuthError(403).scope, undefined);
});

const routeAgent = () => createAgent({ name: 'scoped', model: echoModel(), store: memoryStore(), sessions: 'owned' });

test("per-route scopes on agentHandler: each group needs its scopes in the principal's claims, else 403 insufficient_scope naming them", async () => {
  const metadata = protectedResourceMetadata({
    resource: 'https://agent.example.com/agent',
    authorizationServers: ['https://id.example.com'],
  });
  const handler = agentHandler(routeAgent(), {
    basePath: '/agent',
    auth: [at({ secret: SECRET, audience: AUDIENCE, resourceMetadata: metadata }), apiToken('token-0123456789')],
    protectedResource: metadata,
    scopes: { send: ['agent:chat'], read: ['agent:read'], approve: ['agent:approve'], sessions: ['agent:sessions'] },
  });
  const call = async (method: string, path: string, authorization: string, body?: unknown) => {
    const response = await handler(
      new Request(`https://agent.example.com${path}`, {
        method,
        headers: { authorization, 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      }),
    );
    return {
      status: response.status,
      challenge: response.headers.get('www-authenticate'),
      body: await response.text(),
    };
  };
  const chatter = `Bearer ${await hs(claims({ scope: 'agent:chat agent:read' }))}`;
  const sent = await call('POST', '/agent', chatter, { message: 'hi' });
  assert.equal(sent.status, 200);
  const { sessionId } = JSON.parse(sent.body) as { sessionId: string };
  assert.equal((await call('GET', `/agent/chat/${sessionId}`, chatter)).status, 200);
  const cases: [string, string, string][] = [
    ['POST', '/agent/approvals/some-approval', 'agent:approve'],
    ['GET', '/agent/sessions', 'agent:sessions'],
    ['DELETE', `/agent/chat/${sessionId}`, 'agent:sessions'],
  ];
  for (const [method, path, scope] of cases) {
    const refused = await call(method, path, chatter, method === 'POST' ? { approved: true } : undefined);
    assert.deepEqual(
      refused,
      {
        status: 403,
        challenge: `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${metadata.url}"`,
        body: '{"error":"Forbidden"}',
      },
      `${method} ${path}`,
    );
  }
  // scp as a list (Okta, Entra ID) grants too.
  assert.equal(
    (await call('GET', '/agent/sessions', `Bearer ${await hs(claims({ scp: ['agent:sessions'] }))}`)).status,
    200,
  );
  // A principal without claims (an API token) grants no scope.
  const token = await call('POST', '/agent', 'Bearer token-0123456789', { message: 'hi' });
  assert.equal(token.status, 403);
  assert.equal(
    token.challenge,
    `Bearer error="insufficient_scope", scope="agent:chat", resource_metadata="${metadata.url}"`,
  );
});

test('agentHandler scopes are checked at creation: closed groups, scope tokens, and auth required', () => {
  const agent = createAgent({ name: 'x', model: echoModel() });
  assertConfigError(
    () => agentHandler(agent, { auth: 'token-0123456789', scopes: { sned: ['a'] } as never }),
    'agentHandler(): scopes',
    'a misspelled group',
  );
  assertConfigError(
    () => agentHandler(agent, { auth: 'token-0123456789', scopes: { send: ['a b'] } }),
    'agentHandler()',
    'a scope with a space',
  );
  assertConfigError(
    () => agentHandler(agent, { auth: 'token-0123456789', scopes: { send: [] } }),
    'agentHandler()',
    'an empty list',
  );
  assertConfigError(() => agentHandler(agent, { scopes: { send: ['a'] } }), 'agentHandler()', 'scopes without auth');
});

test('protectedResourceMetadata(): path, url and the document, answered for its path only; usable as resourceMetadata and protectedResource', async () => {
  const metadata = protectedResourceMetadata({
    resource: 'https://mcp.example.com/mcp',
    authorizationServers: ['https://id.example.com'],
    scopesSupported: ['mcp:read'],
    resourceName: 'Agent MCP',
  });
  assert.equal(metadata.path, '/.well-known/oauth-protected-resource/mcp');
  assert.equal(metadata.url, 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp');
  const got = metadata.respond(new Request(metadata.url))!;
  assert.equal(got.status, 200);
  assert.equal(got.headers.get('content-type'), 'application/json');
  assert.deepEqual(await got.json(), {
    resource: 'https://mcp.example.com/mcp',
    authorization_servers: ['https://id.example.com'],
    scopes_supported: ['mcp:read'],
    resource_name: 'Agent MCP',
    bearer_methods_supported: ['header'],
  });
  assert.equal(metadata.respond(new Request(`${metadata.url}?x=1`, { method: 'HEAD' }))!.status, 200);
  assert.equal(metadata.respond(new Request(metadata.url, { method: 'POST' }))!.status, 405);
  assert.equal(metadata.respond(new Request('https://mcp.example.com/mcp')), undefined);
  assert.equal(
    metadata.respond({ method: 'GET', url: '/.well-known/oauth-protected-resource/mcp' })?.status,
    200,
    'a path alone works too',
  );
  assert.deepEqual(jwt({ secret: SECRET, audience: AUDIENCE, resourceMetadata: metadata }).challenges, [
    { scheme: 'Bearer', params: { resource_metadata: metadata.url } },
  ]);
  const handler = agentHandler(createAgent({ name: 'x', model: echoModel() }), {
    basePath: '/mcp',
    auth: 'token-0123456789',
    protectedResource: metadata,
  });
  assert.deepEqual(
    await (await handler(new Request(metadata.url))).json(),
    await metadata.respond(new Request(metadata.url))!.json(),
  );
  assert.throws(
    () =>
      protectedResourceMetadata({
        resource: 'https://a.example/x',
        authorizationServers: ['https://id.example.com'],
        scopesSuported: [],
      } as never),
    (error) => error instanceof AuthConfigError && /did you mean "scopesSupported"/.test(error.message),
  );
  assertConfigError(
    () =>
      protectedResourceMetadata({
        resource: 'http://evil.example/x',
        authorizationServers: ['https://id.example.com'],
      }),
    'protectedResourceMetadata()',
    'http: off loopback',
  );
  assertConfigError(
    () => protectedResourceMetadata({ resource: 'https://a.example/x', authorizationServers: [] }),
    'protectedResourceMetadata()',
    'no authorization server',
  );
});

test('URL audiences are compared after RFC 3986 §6.2.2–6.2.3 normalization (scheme, host, default port); the path exactly', async () => {
  assert.equal(normalizeAudience('https://MCP.example.com:443/mcp'), 'https://mcp.example.com/mcp');
  assert.equal(normalizeAudience('HTTP://Example.COM:80'), 'http://example.com/');
  assert.equal(normalizeAudience('https://example.com:8443/A/B'), 'https://example.com:8443/A/B');
  assert.equal(normalizeAudience('https://[::1]:443/x'), 'https://[::1]/x');
  assert.equal(normalizeAudience('agent-api'), 'agent-api');
  const entry = at({ secret: SECRET, audience: 'https://mcp.example.com/mcp' });
  const accepted = async (aud: unknown) => (await routeAuth(entry)(request(`Bearer ${await hs(claims({ aud }))}`))).ok;
  for (const aud of [
    'https://mcp.example.com/mcp',
    'https://MCP.example.com:443/mcp',
    'HTTPS://mcp.EXAMPLE.com/mcp',
    ['other', 'https://mcp.example.com:443/mcp'],
  ])
    assert.equal(await accepted(aud), true, JSON.stringify(aud));
  for (const aud of [
    'https://mcp.example.com/MCP',
    'https://mcp.example.com/mcp/',
    'https://mcp.example.com:8443/mcp',
    'http://mcp.example.com/mcp',
    'https://mcp.example.com/./mcp',
  ])
    assert.equal(await accepted(aud), false, JSON.stringify(aud));
  const upper = at({ secret: SECRET, audience: 'https://MCP.example.com:443/mcp' });
  assert.equal(
    (await routeAuth(upper)(request(`Bearer ${await hs(claims({ aud: 'https://mcp.example.com/mcp' }))}`))).ok,
    true,
    'a configured audience is normalized too',
  );
});

test('RFC 9864: "Ed25519" is the fully-specified name of EdDSA with an Ed25519 key, in algorithms, token headers and a JWK\'s alg', async () => {
  const key = await testKey('EdDSA');
  const payload = claims();
  const edToken = await signToken({ alg: 'Ed25519' }, payload, key.sign);
  const eddsaToken = await signToken({ alg: 'EdDSA' }, payload, key.sign);
  const ok = async (entry: AuthFn, token: string) => (await routeAuth(entry)(request(`Bearer ${token}`))).ok;
  assert.equal(
    await ok(at({ publicKey: key.jwk, audience: AUDIENCE }), edToken),
    true,
    'an Ed25519 key allows both names by default',
  );
  assert.equal(await ok(at({ publicKey: key.jwk, audience: AUDIENCE, algorithms: ['Ed25519'] }), edToken), true);
  assert.equal(
    await ok(at({ publicKey: key.jwk, audience: AUDIENCE, algorithms: ['Ed25519'] }), eddsaToken),
    false,
    'only the names allowed',
  );
  assert.equal(
    await ok(at({ publicKey: { ...key.jwk, alg: 'Ed25519' }, audience: AUDIENCE }), edToken),
    true,
    'a JWK whose alg is Ed25519',
  );
  assertConfigError(
    () => jwt({ secret: SECRET, audience: AUDIENCE, algorithms: ['Ed25519'] }),
    'jwt()',
    'Ed25519 with an HMAC secret',
  );
  // A key set: its Ed25519 key (alg "Ed25519") is kept and verifies once the name is allowed.
  const jwks = { keys: [{ ...key.jwk, kid: 'ed', alg: 'Ed25519', use: 'sig' }] };
  const fromSet = jwtAt(
    {
      jwksUrl: 'https://id.example.com/jwks',
      audience: AUDIENCE,
      issuer: ISSUER,
      algorithms: ['Ed25519'],
      _internal: { fetch: async () => Response.json(jwks) },
    },
    () => NOW,
  );
  assert.equal(await ok(fromSet, await signToken({ alg: 'Ed25519', kid: 'ed' }, payload, key.sign)), true);
});
