// Design §29 (MCP 2026-07-28: servers account for scope hierarchies): scopeImplies on the entries
// that check scopes, jwt(), oidc() and introspection(): a token holding a key passes as holding
// every scope it implies, transitively; challenges still name the scopes as configured; a cycle,
// a malformed map or scopeImplies without scopes is an AuthConfigError at creation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { introspection, oidc, routeAuth, wwwAuthenticateLines, type AuthFn } from '../../src/auth/index.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { AUDIENCE, NOW, SECRET, claims, hmacSigner, signToken, testKey } from '../helpers/jwt.ts';
import { assertConfigError } from '../helpers/config-error.ts';

const IMPLIES = { 'agent:admin': ['agent:operate'], 'agent:operate': ['agent:chat', 'agent:approve'] };
const URL_ = 'https://agent.example.com/agent';
const hs = async (scope: string) => signToken({ alg: 'HS256' }, claims({ scope }), await hmacSigner(SECRET));

async function status(entry: AuthFn, token: string): Promise<[number, readonly string[]]> {
  const result = await routeAuth([entry])(new Request(URL_, { headers: { authorization: `Bearer ${token}` } }));
  return result.ok ? [200, []] : [result.response.status, wwwAuthenticateLines(result.response) ?? []];
}

test('jwt() scopeImplies: a token holding a key passes as holding what it implies, transitively; a 403 still names the scopes as configured', async () => {
  const entry = jwtAt(
    { secret: SECRET, audience: AUDIENCE, scopes: ['agent:chat', 'agent:approve'], scopeImplies: IMPLIES },
    () => NOW,
  );
  assert.deepEqual(await status(entry, await hs('agent:admin')), [200, []], 'admin implies operate implies both');
  assert.deepEqual(await status(entry, await hs('agent:operate')), [200, []]);
  assert.deepEqual(await status(entry, await hs('agent:chat agent:approve')), [200, []]);
  assert.deepEqual(await status(entry, await hs('agent:chat')), [
    403,
    ['Bearer error="insufficient_scope", scope="agent:chat agent:approve"'],
  ]);
  // Implication goes one way: holding what a key implies is not holding the key.
  const admin = jwtAt(
    { secret: SECRET, audience: AUDIENCE, scopes: ['agent:admin'], scopeImplies: IMPLIES },
    () => NOW,
  );
  assert.equal((await status(admin, await hs('agent:operate agent:chat agent:approve')))[0], 403);
  // Without scopeImplies the same token is refused: the option is what grants it.
  const plain = jwtAt({ secret: SECRET, audience: AUDIENCE, scopes: ['agent:chat'] }, () => NOW);
  assert.equal((await status(plain, await hs('agent:admin')))[0], 403);
});

test('jwt() scopeImplies is checked at creation: a cycle, a malformed map, and scopeImplies without scopes are AuthConfigErrors', () => {
  const make =
    (scopeImplies: unknown, scopes: string[] | undefined = ['a']) =>
    () =>
      jwtAt({ secret: SECRET, audience: AUDIENCE, scopes, scopeImplies: scopeImplies as never }, () => NOW);
  const refused = (create: () => unknown, message: RegExp) => {
    assertConfigError(create, 'jwt()', String(message));
    assert.throws(create, message);
  };
  refused(make({ a: ['b'], b: ['c'], c: ['a'] }), /scopeImplies has a cycle: a → b → c → a/);
  refused(make({ a: 'b' }), /scopeImplies\["a"\] must be a non-empty list/);
  refused(make([]), /scopeImplies must be an object/);
  refused(
    () => jwtAt({ secret: SECRET, audience: AUDIENCE, scopeImplies: { a: ['b'] } }, () => NOW),
    /scopeImplies needs scopes/,
  );
  refused(
    () => jwtAt({ secret: SECRET, audience: AUDIENCE, scopes: ['a'], scopeImplys: {} } as never, () => NOW),
    /unknown option "scopeImplys" \(did you mean "scopeImplies"\?\)/,
  );
});

test('oidc() scopeImplies: a token holding a key passes; a cycle is an AuthConfigError', async () => {
  const issuer = 'https://idp.example';
  const key = await testKey('ES256');
  const fetch = async (input: string | URL | Request) => {
    const url = String(input instanceof Request ? input.url : input);
    return url.endsWith('/.well-known/openid-configuration')
      ? Response.json({ issuer, jwks_uri: `${issuer}/jwks` })
      : Response.json({ keys: [{ ...key.jwk, kid: 'k1', alg: 'ES256', use: 'sig' }] });
  };
  const entry = oidc({
    issuer,
    audience: AUDIENCE,
    scopes: ['agent:chat'],
    scopeImplies: IMPLIES,
    _internal: { fetch, now: () => NOW * 1000 },
  });
  const token = (scope: string) => signToken({ alg: 'ES256', kid: 'k1' }, claims({ iss: issuer, scope }), key.sign);
  assert.deepEqual(await status(entry, await token('agent:admin')), [200, []]);
  assert.equal((await status(entry, await token('agent:approve')))[0], 403);
  const cycle = () => oidc({ issuer, audience: AUDIENCE, scopes: ['a'], scopeImplies: { a: ['b'], b: ['a'] } });
  assertConfigError(cycle, 'oidc()', 'a cycle');
  assert.throws(cycle, /scopeImplies has a cycle: a → b → a/);
});

test('introspection() scopeImplies: an active answer holding a key passes; a cycle is an AuthConfigError', async () => {
  let scope = 'agent:admin';
  const entry = introspection({
    endpoint: 'https://id.example.com/introspect',
    clientId: 'rs',
    clientSecret: 'a-client-secret-0123456789',
    audience: AUDIENCE,
    scopes: ['agent:approve'],
    scopeImplies: IMPLIES,
    cache: false,
    _internal: {
      now: () => NOW * 1000,
      fetch: async () => Response.json({ active: true, sub: 'ada', aud: AUDIENCE, exp: NOW + 600, scope }),
    },
  });
  assert.deepEqual(await status(entry, 'opaque-token-0123456789'), [200, []]);
  scope = 'agent:chat';
  assert.deepEqual(await status(entry, 'opaque-token-0123456789'), [
    403,
    ['Bearer error="insufficient_scope", scope="agent:approve"'],
  ]);
  const cycle = () =>
    introspection({
      endpoint: 'https://id.example.com/introspect',
      clientId: 'rs',
      clientSecret: 'a-client-secret-0123456789',
      audience: AUDIENCE,
      scopes: ['a'],
      scopeImplies: { a: ['a'] },
    });
  assertConfigError(cycle, 'introspection()', 'a cycle');
  assert.throws(cycle, /scopeImplies has a cycle: a → a/);
});
