// MCP 2026-07-28 (design §29): `offline_access` is never asked for in a challenge's `scope` (a
// 401's, a 403's insufficient_scope, from an entry's scopes, a route's, or an AuthError) nor listed
// in the protected resource document's `scopes_supported`. On Node, Bun and Deno.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AuthError,
  introspection,
  protectedResourceMetadata,
  routeAuth,
  wwwAuthenticateLines,
  type AuthFn,
} from '../../src/auth/index.ts';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { AUDIENCE, NOW, SECRET, claims, hmacSigner, signToken } from '../helpers/jwt.ts';

const METADATA = 'https://agent.example.com/.well-known/oauth-protected-resource/agent';
const at = (options: Parameters<typeof jwtAt>[0]) => jwtAt(options, () => NOW);
const token = async (scope: string) => signToken({ alg: 'HS256' }, claims({ scope }), await hmacSigner(SECRET));

async function lines(entries: AuthFn[], authorization?: string) {
  const result = await routeAuth(entries)(
    new Request('https://agent.example.com/agent', { headers: authorization ? { authorization } : {} }),
  );
  assert.ok(!result.ok);
  return [result.response.status, wwwAuthenticateLines(result.response)];
}

test("an entry's 401 challenges never ask for offline_access; a scope of nothing else is left out", async () => {
  const entry = at({
    secret: SECRET,
    audience: AUDIENCE,
    scopes: ['offline_access', 'agent:chat'],
    resourceMetadata: METADATA,
  });
  assert.deepEqual(await lines([entry]), [401, [`Bearer resource_metadata="${METADATA}", scope="agent:chat"`]]);
  const dpop = at({ secret: SECRET, audience: AUDIENCE, scopes: ['agent:chat', 'offline_access'], dpop: 'required' });
  assert.deepEqual(await lines([dpop]), [401, ['DPoP algs="ES256 EdDSA Ed25519 RS256 PS256", scope="agent:chat"']]);
  const only = at({ secret: SECRET, audience: AUDIENCE, scopes: ['offline_access'], resourceMetadata: METADATA });
  assert.deepEqual(await lines([only]), [401, [`Bearer resource_metadata="${METADATA}"`]]);
  const opaque = introspection({
    endpoint: 'https://id.example.com/introspect',
    clientId: 'rs',
    clientSecret: 'a-client-secret-0123456789',
    audience: AUDIENCE,
    scopes: ['offline_access', 'agent:read'],
  });
  assert.deepEqual(await lines([opaque]), [401, ['Bearer scope="agent:read"']]);
});

test('a 403 insufficient_scope never asks for offline_access: an entry lacking scopes, an AuthError, a route of the handler', async () => {
  const entry = at({ secret: SECRET, audience: AUDIENCE, scopes: ['agent:approve', 'offline_access'] });
  assert.deepEqual(await lines([entry], `Bearer ${await token('agent:chat')}`), [
    403,
    ['Bearer error="insufficient_scope", scope="agent:approve"'],
  ]);
  const mapper = at({
    secret: SECRET,
    audience: AUDIENCE,
    principal: () => {
      throw new AuthError(403, { scope: ['offline_access', 'mcp:write'] });
    },
  });
  assert.deepEqual(await lines([mapper], `Bearer ${await token('x')}`), [
    403,
    ['Bearer error="insufficient_scope", scope="mcp:write"'],
  ]);
  const handler = agentHandler(createAgent({ name: 'a', model: echoModel() }), {
    auth: at({ secret: SECRET, audience: AUDIENCE }),
    scopes: { send: ['agent:chat', 'offline_access'] },
  });
  const refused = await handler(
    new Request('https://agent.example.com/', {
      method: 'POST',
      headers: { authorization: `Bearer ${await token('agent:read')}`, 'content-type': 'application/json' },
      body: '{"message":"hi"}',
    }),
  );
  assert.equal(refused.status, 403);
  assert.equal(refused.headers.get('www-authenticate'), 'Bearer error="insufficient_scope", scope="agent:chat"');
});

test('the protected resource document never lists offline_access in scopes_supported', async () => {
  const document = async (scopesSupported: string[]) => {
    const metadata = protectedResourceMetadata({
      resource: 'https://agent.example.com/agent',
      authorizationServers: ['https://id.example.com'],
      scopesSupported,
    });
    return (await metadata.respond({ method: 'GET', url: metadata.path })!.json()) as Record<string, unknown>;
  };
  assert.deepEqual((await document(['agent:chat', 'offline_access', 'agent:read'])).scopes_supported, [
    'agent:chat',
    'agent:read',
  ]);
  assert.equal('scopes_supported' in (await document(['offline_access'])), false);
});
