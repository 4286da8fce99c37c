// MCP 2026-07-28 (design §29): `offline_access` is never asked for in a challenge's `scope` (a
// 403's insufficient_scope from an AuthError) nor listed in the protected resource document's
// `scopes_supported`; so a scope list that requires it is refused at creation (design §29). On
// Node, Bun and Deno.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AuthConfigError,
  AuthError,
  introspection,
  jwt,
  oidc,
  protectedResourceMetadata,
  routeAuth,
  wwwAuthenticateLines,
  type AuthFn,
} from '../../src/auth/index.ts';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { AUDIENCE, NOW, SECRET, claims, hmacSigner, signToken } from '../helpers/jwt.ts';

const at = (options: Parameters<typeof jwtAt>[0]) => jwtAt(options, () => NOW);
const token = async (scope: string) => signToken({ alg: 'HS256' }, claims({ scope }), await hmacSigner(SECRET));

async function lines(entries: AuthFn[], authorization?: string) {
  const result = await routeAuth(entries)(
    new Request('https://agent.example.com/agent', { headers: authorization ? { authorization } : {} }),
  );
  assert.ok(!result.ok);
  return [result.response.status, wwwAuthenticateLines(result.response)];
}

const OFFLINE =
  'must not include offline_access: it asks for a refresh token, no access token carries it, so no token could satisfy it';

test('offline_access in any scope list an entry or a route requires is AuthConfigError at creation (design §29): no challenge names it, no access token carries it', () => {
  const refused = (make: () => unknown, message: string) =>
    assert.throws(make, (error: unknown) => {
      assert.ok(error instanceof AuthConfigError);
      assert.equal(error.message, message);
      return true;
    });
  refused(
    () => jwt({ secret: SECRET, audience: AUDIENCE, scopes: ['agent:chat', 'offline_access'] }),
    `jwt(): scopes ${OFFLINE}`,
  );
  refused(
    () => oidc({ issuer: 'https://id.example.com', audience: AUDIENCE, scopes: ['offline_access'] }),
    `oidc(): scopes ${OFFLINE}`,
  );
  refused(
    () =>
      introspection({
        endpoint: 'https://id.example.com/introspect',
        clientId: 'rs',
        clientSecret: 'a-client-secret-0123456789',
        audience: AUDIENCE,
        scopes: ['offline_access', 'agent:read'],
      }),
    `introspection(): scopes ${OFFLINE}`,
  );
  const agent = createAgent({ name: 'a', model: echoModel() });
  const auth = jwt({ secret: SECRET, audience: AUDIENCE });
  for (const group of ['send', 'read', 'approve', 'sessions', 'mcp'])
    refused(
      () => agentHandler(agent, { auth, scopes: { [group]: ['agent:chat', 'offline_access'] } }),
      `agentHandler(): scopes.${group} ${OFFLINE}`,
    );
  for (const tool of ['ask', 'decide', 'read'])
    refused(
      () => agentHandler(agent, { auth, mcp: { scopes: { [tool]: ['offline_access'] } } }),
      `agentHandler(): mcp.scopes.${tool} ${OFFLINE}`,
    );
  // Scopes of its own are taken as ever.
  jwt({ secret: SECRET, audience: AUDIENCE, scopes: ['agent:chat', 'offline'] });
  agentHandler(agent, { auth, scopes: { send: ['agent:chat'] }, mcp: { scopes: { ask: ['mcp:ask'] } } });
});

test('a 403 insufficient_scope never asks for offline_access: an AuthError naming it leaves it out', async () => {
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
  const only = at({
    secret: SECRET,
    audience: AUDIENCE,
    principal: () => {
      throw new AuthError(403, { scope: ['offline_access'] });
    },
  });
  assert.deepEqual(await lines([only], `Bearer ${await token('x')}`), [403, ['Bearer error="insufficient_scope"']]);
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
