// Design §13, RFC 9728: `resourceMetadata` on jwt()/oidc() puts `Bearer resource_metadata="<URL>"`
// into the 401, and `protectedResource` on agentHandler serves the metadata document, unauthenticated,
// at the well-known path of the resource. Runs on Node, Bun, Deno and inside workerd
// (tests/auth/jws/workerd.node.test.ts); tests/http/mcp-client.test.ts has a real OAuth client read both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  apiToken,
  basic,
  formatChallenge,
  jwt,
  oidc,
  protectedResourcePath,
  routeAuth,
  wwwAuthenticateLines,
  type AuthFn,
} from '../../src/auth/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { assertConfigError } from '../helpers/config-error.ts';

const SECRET = 'resource-metadata-secret-0123456789abcdef';
const METADATA = 'https://agent.example.com/.well-known/oauth-protected-resource/agent';
const PROTECTED = {
  resource: 'https://agent.example.com/agent',
  authorizationServers: ['https://id.example.com'],
  scopesSupported: ['agent:invoke'],
};

async function refusal(
  auth: AuthFn[],
  authorization?: string,
): Promise<{ response: Response; lines: readonly string[] | undefined }> {
  const result = await routeAuth(auth)(
    new Request('https://agent.example.com/agent', { headers: authorization === undefined ? {} : { authorization } }),
  );
  assert.equal(result.ok, false);
  const { response } = result as { response: Response };
  assert.equal(response.status, 401);
  return { response, lines: wwwAuthenticateLines(response) };
}

test('jwt({ resourceMetadata }) advertises Bearer resource_metadata="<URL>" in its 401, whatever the token', async () => {
  const entry = jwt({ secret: SECRET, audience: 'agent', resourceMetadata: METADATA });
  assert.deepEqual(entry.challenges, [{ scheme: 'Bearer', params: { resource_metadata: METADATA } }]);
  for (const [authorization, error] of [
    [undefined, ''],
    ['Bearer not-a-jwt', 'error="invalid_token", '],
    ['Basic YTpi', ''],
  ] as const) {
    const { response, lines } = await refusal([entry], authorization);
    assert.deepEqual(lines, [`Bearer ${error}resource_metadata="${METADATA}"`]);
    assert.equal(response.headers.get('www-authenticate'), `Bearer ${error}resource_metadata="${METADATA}"`);
    assert.equal(response.headers.get('cache-control'), 'no-store');
  }
});

test('oidc({ resourceMetadata }) advertises it too; created without any fetch', async () => {
  const entry = oidc({
    issuer: 'https://id.example.com',
    audience: 'https://agent.example.com/agent',
    resourceMetadata: new URL(METADATA),
  });
  assert.deepEqual(entry.challenges, [{ scheme: 'Bearer', params: { resource_metadata: METADATA } }]);
  assert.deepEqual((await refusal([entry])).lines, [`Bearer resource_metadata="${METADATA}"`]);
});

test('without resourceMetadata the challenge stays a bare Bearer', () => {
  assert.deepEqual(jwt({ secret: SECRET, audience: 'agent' }).challenges, [{ scheme: 'Bearer' }]);
});

test('in a list, each distinct challenge once and in list order: the parameterized Bearer, then the bare one, then Basic', async () => {
  const list = [
    jwt({ secret: SECRET, audience: 'agent', resourceMetadata: METADATA }),
    apiToken('token-0123456789'),
    basic({ users: { ada: 'pw-0123456789' } }),
    jwt({ secret: SECRET, audience: 'other', resourceMetadata: METADATA }),
  ];
  const { response, lines } = await refusal(list);
  assert.deepEqual(lines, [`Bearer resource_metadata="${METADATA}"`, 'Bearer', 'Basic realm="agent", charset="UTF-8"']);
  assert.equal(
    response.headers.get('www-authenticate'),
    `Bearer resource_metadata="${METADATA}", Bearer, Basic realm="agent", charset="UTF-8"`,
  );
});

test('the URL is a quoted-string (RFC 9110 §5.6.4): a backslash is escaped, a quote cannot survive URL parsing', () => {
  const entry = jwt({ secret: SECRET, audience: 'agent', resourceMetadata: 'https://agent.example.com/m"d?x=a\\b' });
  const line = formatChallenge(entry.challenges![0]!);
  assert.equal(line, 'Bearer resource_metadata="https://agent.example.com/m%22d?x=a\\\\b"');
  assert.equal(
    formatChallenge({ scheme: 'Bearer', realm: 'api', params: { resource_metadata: 'a"b' } }),
    'Bearer realm="api", resource_metadata="a\\"b"',
  );
});

test('resourceMetadata is checked at creation: https:, or http: on localhost only; an absolute URL; no control characters or user info', () => {
  for (const resourceMetadata of [
    'http://localhost:3000/.well-known/oauth-protected-resource',
    'http://127.0.0.1/x',
    'http://[::1]:8080/x',
  ]) {
    assert.deepEqual(jwt({ secret: SECRET, audience: 'agent', resourceMetadata }).challenges, [
      { scheme: 'Bearer', params: { resource_metadata: new URL(resourceMetadata).href } },
    ]);
  }
  const bad = [
    'http://agent.example.com/x',
    'ftp://agent.example.com/x',
    '/.well-known/oauth-protected-resource',
    '',
    'https://agent.example.com/\u0000x',
    'https://agent.example.com/x\n',
    'https://agent.example.com/\u007fx',
    'https://user:pw@agent.example.com/x',
    42,
    null,
  ];
  for (const resourceMetadata of bad) {
    assertConfigError(
      () => jwt({ secret: SECRET, audience: 'agent', resourceMetadata: resourceMetadata as string }),
      'jwt()',
      JSON.stringify(resourceMetadata),
      [SECRET],
    );
    assertConfigError(
      () => oidc({ issuer: 'https://id.example.com', audience: 'a', resourceMetadata: resourceMetadata as string }),
      'oidc()',
      JSON.stringify(resourceMetadata),
    );
  }
});

test('a custom entry may declare a resource_metadata param; a control character in it is a configuration error of routeAuth', () => {
  const entry: AuthFn = () => null;
  entry.challenges = [{ scheme: 'Bearer', params: { resource_metadata: 'https://a.example/\r\nx' } }];
  assertConfigError(() => routeAuth([entry]), 'routeAuth()', 'CRLF');
});

const agent = () => createAgent({ name: 'metadata', model: echoModel(), store: memoryStore() });

test('protectedResourcePath inserts the well-known prefix before the resource path (RFC 9728 §3.1)', () => {
  assert.equal(protectedResourcePath('https://agent.example.com/agent'), '/.well-known/oauth-protected-resource/agent');
  assert.equal(protectedResourcePath('https://agent.example.com/a/b'), '/.well-known/oauth-protected-resource/a/b');
  assert.equal(protectedResourcePath('https://agent.example.com'), '/.well-known/oauth-protected-resource');
  assert.equal(protectedResourcePath('https://agent.example.com/'), '/.well-known/oauth-protected-resource');
});

test('agentHandler serves the metadata document at the well-known path, never behind auth, cacheable, as JSON', async () => {
  const handler = agentHandler(agent(), {
    basePath: '/agent',
    auth: [jwt({ secret: SECRET, audience: 'agent', resourceMetadata: METADATA })],
    protectedResource: PROTECTED,
  });
  const response = await handler(new Request(METADATA));
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'application/json');
  assert.match(response.headers.get('cache-control') ?? '', /^public, max-age=\d+$/);
  assert.deepEqual(await response.json(), {
    resource: 'https://agent.example.com/agent',
    authorization_servers: ['https://id.example.com'],
    scopes_supported: ['agent:invoke'],
    bearer_methods_supported: ['header'],
  });
  const withBadToken = await handler(new Request(METADATA, { headers: { authorization: 'Bearer nope' } }));
  assert.equal(withBadToken.status, 200, 'a bad token does not matter: the document is public');
  const head = await handler(new Request(METADATA, { method: 'HEAD' }));
  assert.equal(head.status, 200);
  assert.equal(await head.text(), '');
  const refused = await handler(
    new Request('https://agent.example.com/agent', { method: 'POST', body: '{"message":"hi"}' }),
  );
  assert.equal(refused.status, 401, 'the agent routes stay behind auth');
  assert.equal(refused.headers.get('www-authenticate'), `Bearer resource_metadata="${METADATA}"`);
});

test('the document answers 405 with Allow to other methods; other well-known paths are not it', async () => {
  const handler = agentHandler(agent(), { basePath: '/agent', auth: 'token-0123456789', protectedResource: PROTECTED });
  for (const method of ['POST', 'PUT', 'DELETE']) {
    const response = await handler(new Request(METADATA, { method, ...(method !== 'DELETE' && { body: '{}' }) }));
    assert.equal(response.status, 405, method);
    assert.equal(response.headers.get('allow'), 'GET, HEAD');
  }
  assert.equal(
    (await handler(new Request('https://agent.example.com/.well-known/oauth-protected-resource'))).status,
    401,
  );
  assert.equal((await handler(new Request(`${METADATA}/more`))).status, 401);
});

test('without scopesSupported the document has no scopes_supported; a resource at the root is served at the bare well-known path', async () => {
  const handler = agentHandler(agent(), {
    protectedResource: {
      resource: 'https://agent.example.com',
      authorizationServers: ['https://a.example', 'https://b.example/tenant'],
    },
  });
  const response = await handler(new Request('https://agent.example.com/.well-known/oauth-protected-resource'));
  assert.deepEqual(await response.json(), {
    resource: 'https://agent.example.com',
    authorization_servers: ['https://a.example', 'https://b.example/tenant'],
    bearer_methods_supported: ['header'],
  });
});

test('protectedResource is checked at creation (AGENT_AUTH_CONFIG_INVALID, naming the field)', () => {
  const invalid: unknown[] = [
    null,
    'https://agent.example.com',
    {},
    { ...PROTECTED, resource: 'http://agent.example.com/agent' },
    { ...PROTECTED, resource: 'agent' },
    { ...PROTECTED, resource: 'https://agent.example.com/agent?x=1' },
    { ...PROTECTED, resource: 'https://agent.example.com/agent#top' },
    { ...PROTECTED, resource: ' https://agent.example.com/agent' },
    { ...PROTECTED, authorizationServers: [] },
    { ...PROTECTED, authorizationServers: 'https://id.example.com' },
    { ...PROTECTED, authorizationServers: ['http://id.example.com'] },
    { ...PROTECTED, authorizationServers: ['https://id.example.com?tenant=1'] },
    { ...PROTECTED, scopesSupported: ['agent invoke'] },
    { ...PROTECTED, scopesSupported: 'agent:invoke' },
  ];
  for (const protectedResource of invalid) {
    assertConfigError(
      () => agentHandler(agent(), { protectedResource: protectedResource as never }),
      'agentHandler()',
      JSON.stringify(protectedResource),
    );
  }
  assert.doesNotThrow(() =>
    agentHandler(agent(), { protectedResource: { ...PROTECTED, resource: 'http://localhost:3000/agent' } }),
  );
});
