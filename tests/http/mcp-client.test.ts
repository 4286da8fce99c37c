// A real OAuth client that no one here wrote, the MCP TypeScript SDK, finds our metadata the way it
// finds any MCP server's (RFC 9728): from the 401's `WWW-Authenticate` with its own parser, then the
// document with its own discovery, over real HTTP. Node, Bun and Deno run this file (node:http serves
// the route handler through the node bridge); tests/node/server-metadata.node.test.ts does it against serve().
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  discoverOAuthProtectedResourceMetadata,
  extractResourceMetadataUrl,
  extractWWWAuthenticateParams,
  selectResourceURL,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { apiToken, jwt } from '../../src/auth/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { toNodeListener } from '../../src/node/listener.ts';

let server: Server;
let origin: string;

before(async () => {
  let listener: ReturnType<typeof toNodeListener> | undefined;
  server = createServer((req, res) => listener?.(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const handler = agentHandler(createAgent({ name: 'mcp', model: echoModel(), store: memoryStore() }), {
    basePath: '/agent',
    auth: [
      jwt({
        secret: 'mcp-client-test-secret-0123456789abcdef',
        audience: `${origin}/agent`,
        resourceMetadata: `${origin}/.well-known/oauth-protected-resource/agent`,
      }),
      apiToken('token-0123456789'),
    ],
    protectedResource: {
      resource: `${origin}/agent`,
      authorizationServers: ['https://id.example.com'],
      scopesSupported: ['agent:invoke'],
    },
  });
  listener = toNodeListener(handler, { origin });
});

after(async () => {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
});

const expected = () => ({
  resource: `${origin}/agent`,
  authorization_servers: ['https://id.example.com'],
  scopes_supported: ['agent:invoke'],
  bearer_methods_supported: ['header'],
});

test('the MCP SDK reads resource_metadata from our 401 with its own parsers', async () => {
  const response = await fetch(`${origin}/agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"message":"hi"}',
  });
  assert.equal(response.status, 401);
  await response.body?.cancel();
  const url = `${origin}/.well-known/oauth-protected-resource/agent`;
  assert.equal(extractResourceMetadataUrl(response)?.href, url);
  assert.equal(extractWWWAuthenticateParams(response).resourceMetadataUrl?.href, url);
});

test('the MCP SDK fetches the document from the URL of the 401, and finds it from the server URL alone (path-aware discovery)', async () => {
  const refused = await fetch(`${origin}/agent`, { method: 'POST', body: '{}' });
  await refused.body?.cancel();
  const resourceMetadataUrl = extractResourceMetadataUrl(refused);
  const fromChallenge = await discoverOAuthProtectedResourceMetadata(`${origin}/agent`, { resourceMetadataUrl });
  assert.deepEqual({ ...fromChallenge }, expected());
  const discovered = await discoverOAuthProtectedResourceMetadata(`${origin}/agent`);
  assert.deepEqual({ ...discovered }, expected());
  // The SDK then checks the document's resource against the server it called, and asks for tokens for it (RFC 8707).
  const resource = await selectResourceURL(`${origin}/agent`, {} as never, discovered);
  assert.equal(resource?.href, `${origin}/agent`);
});

test('the document the SDK reads is public and cacheable; the agent route is not', async () => {
  const response = await fetch(`${origin}/.well-known/oauth-protected-resource/agent`, {
    headers: { 'mcp-protocol-version': '2025-06-18' },
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('cache-control') ?? '', /^public, max-age=\d+$/);
  assert.equal(response.headers.get('content-type'), 'application/json');
  await response.body?.cancel();
});
