// Design §13 on the node server: `resourceMetadata` challenges written as their own header lines,
// `protectedResource` passed through serve() and answered outside auth and outside basePath, and the
// MCP TypeScript SDK discovering both over the wire.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  discoverOAuthProtectedResourceMetadata,
  extractResourceMetadataUrl,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { basic, jwt, oidc } from '../../src/auth/index.ts';
import { serve, type ServeOptions } from '../../src/node.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { headerLines, send } from '../helpers/http-client.ts';

delete process.env.AGENT_API_TOKEN;
const agent = () => createAgent({ name: 'metadata', model: echoModel(), store: memoryStore() });
const SECRET = 'server-metadata-secret-0123456789abcdef';

/** serve() on a port of its own, with `resourceMetadata` and `protectedResource` naming that port. */
async function start(
  t: { after(fn: () => Promise<void>): void },
  options: (port: number) => Partial<ServeOptions>,
  env?: string,
) {
  // The origin is in the configuration: find a free port first, then serve on it.
  const probe = await serve({ agent: agent(), port: 0, log: 'off' });
  const port = Number(new URL(probe.url).port);
  await probe.close();
  if (env !== undefined) process.env.AGENT_API_TOKEN = env;
  try {
    const server = await serve({ agent: agent(), port, log: 'off', ...options(port) });
    t.after(() => server.close());
    return server;
  } finally {
    delete process.env.AGENT_API_TOKEN;
  }
}

const metadataOptions = (port: number): Partial<ServeOptions> => ({
  auth: [
    jwt({
      secret: SECRET,
      audience: 'agent',
      resourceMetadata: `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/agent`,
    }),
    basic({ users: { ada: 'pw-0123456789' } }),
  ],
  protectedResource: {
    resource: `http://127.0.0.1:${port}/agent`,
    authorizationServers: ['https://id.example.com'],
    scopesSupported: ['agent:invoke'],
  },
});

test('node server: the resource_metadata challenge is its own WWW-Authenticate line, beside the others, in list order', async (t) => {
  const server = await start(t, metadataOptions, 'env-token-0123456789');
  const response = await send(`${server.url}/agent`, { method: 'POST', body: '{"message":"hi"}' });
  assert.equal(response.status, 401);
  assert.deepEqual(headerLines(response.rawHeaders, 'www-authenticate'), [
    `Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource/agent"`,
    'Basic realm="agent", charset="UTF-8"',
    'Bearer',
  ]);
});

test('node server: protectedResource is served at the origin root, outside basePath and auth, cacheable', async (t) => {
  const server = await start(t, metadataOptions);
  const response = await send(`${server.url}/.well-known/oauth-protected-resource/agent`, {
    headers: { authorization: 'Bearer wrong' },
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers['content-type'], 'application/json');
  assert.match(String(response.headers['cache-control']), /^public, max-age=\d+$/);
  assert.deepEqual(JSON.parse(response.text), {
    resource: `${server.url}/agent`,
    authorization_servers: ['https://id.example.com'],
    scopes_supported: ['agent:invoke'],
    bearer_methods_supported: ['header'],
  });
  const post = await send(`${server.url}/.well-known/oauth-protected-resource/agent`, { method: 'POST', body: '{}' });
  assert.equal(post.status, 405);
  assert.equal(post.headers.allow, 'GET, HEAD');
});

test('node server: the MCP SDK finds the metadata URL in the 401 and reads the document with its own functions', async (t) => {
  const server = await start(t, metadataOptions);
  const refused = await fetch(`${server.url}/agent`, { method: 'POST', body: '{"message":"hi"}' });
  await refused.body?.cancel();
  const resourceMetadataUrl = extractResourceMetadataUrl(refused);
  assert.equal(resourceMetadataUrl?.href, `${server.url}/.well-known/oauth-protected-resource/agent`);
  const metadata = await discoverOAuthProtectedResourceMetadata(`${server.url}/agent`, { resourceMetadataUrl });
  assert.equal(metadata.resource, `${server.url}/agent`);
  assert.deepEqual(metadata.authorization_servers, ['https://id.example.com']);
  assert.deepEqual(metadata.bearer_methods_supported, ['header']);
  assert.deepEqual({ ...(await discoverOAuthProtectedResourceMetadata(`${server.url}/agent`)) }, { ...metadata });
});

test("node server with mcp: the document is at RFC 9728 §3.1's path for the MCP endpoint too, where the MCP SDK looks without resource_metadata (design §29)", async (t) => {
  const server = await start(t, (port) => ({ ...metadataOptions(port), mcp: true }));
  const suffixed = await send(`${server.url}/.well-known/oauth-protected-resource/agent/mcp`);
  assert.equal(suffixed.status, 200, 'no auth: before this it answered 401');
  assert.equal(JSON.parse(suffixed.text).resource, `${server.url}/agent`);
  // The SDK probes the endpoint's own well-known path first when it has no resource_metadata URL.
  const metadata = await discoverOAuthProtectedResourceMetadata(`${server.url}/agent/mcp`);
  assert.equal(metadata.resource, `${server.url}/agent`);
  assert.deepEqual(metadata.authorization_servers, ['https://id.example.com']);
  assert.equal(
    (await send(`${server.url}/.well-known/oauth-protected-resource/agent`)).status,
    200,
    'the resource path stays',
  );
});

test('node server: oidc({ resourceMetadata }) in serve() advertises it too', async (t) => {
  const server = await start(t, (port) => ({
    auth: oidc({ issuer: 'https://id.example.com', audience: 'agent', resourceMetadata: `http://localhost:${port}/m` }),
  }));
  const response = await send(`${server.url}/agent`, { method: 'POST', body: '{}' });
  assert.deepEqual(headerLines(response.rawHeaders, 'www-authenticate'), [
    `Bearer resource_metadata="http://localhost:${new URL(server.url).port}/m"`,
  ]);
});

test('serve(): an invalid protectedResource fails at start, before listening', async () => {
  await assert.rejects(
    serve({
      agent: agent(),
      port: 0,
      protectedResource: {
        resource: 'http://agent.example.com/agent',
        authorizationServers: ['https://id.example.com'],
      },
    }),
    (error: unknown) => {
      assertConfigError(
        () => {
          throw error;
        },
        'serve()',
        'http resource',
      );
      return true;
    },
  );
});
