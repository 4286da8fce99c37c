// Design §12: the typ and scopes options, type 'service' for a client's own token, the oidc()
// http-issuer rule at creation, and routeAuth's onRefused: one reason per refused bearer token,
// never the token, the client's answer unchanged.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { apiToken, basic, oidc, routeAuth, type AuthFn } from '../../src/auth/index.ts';
import type { JwtOptions } from '../../src/auth/jwt.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import type { Refusal } from '../../src/auth/refusals.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import {
  AUDIENCE,
  ISSUER,
  NOW,
  SECRET,
  authenticate,
  b64json,
  bearer,
  claims,
  hmacSigner,
  signToken,
  statusOf,
  testKey,
  type Sign,
  type TestKey,
} from '../helpers/jwt.ts';

const at = (options: JwtOptions, now = NOW) => jwtAt(options, () => now);
const base = { issuer: ISSUER, audience: AUDIENCE };
let hs256: Sign;
let es256: TestKey;

before(async () => {
  [hs256, es256] = await Promise.all([hmacSigner(SECRET), testKey('ES256')]);
});

const hs = (payload: Record<string, unknown> = claims(), header: Record<string, unknown> = { alg: 'HS256' }) =>
  signToken(header, payload, hs256);

describe('typ (RFC 8725 §3.11, RFC 9068 access tokens)', () => {
  test("typ: 'at+jwt' accepts at+jwt in any letter case and with the application/ prefix; refuses JWT and a missing typ", async () => {
    const entry = at({ secret: SECRET, typ: 'at+jwt', ...base });
    for (const typ of ['at+jwt', 'AT+JWT', 'application/at+jwt', 'Application/At+Jwt'])
      assert.equal(await statusOf(entry, await hs(claims(), { alg: 'HS256', typ })), 200, typ);
    for (const typ of ['JWT', 'jwt', 'at+jwt2', 'application/jwt', 42, undefined])
      assert.equal(await statusOf(entry, await hs(claims(), { alg: 'HS256', typ })), 401, String(typ));
  });

  test('without typ any header type passes, as the spec has it', async () => {
    assert.equal(
      await statusOf(at({ secret: SECRET, ...base }), await hs(claims(), { alg: 'HS256', typ: 'whatever' })),
      200,
    );
  });

  test('typ configured as application/AT+JWT means at+jwt; an empty or non-string typ is a configuration error', async () => {
    assert.equal(
      await statusOf(
        at({ secret: SECRET, typ: 'application/AT+JWT', ...base }),
        await hs(claims(), { alg: 'HS256', typ: 'at+jwt' }),
      ),
      200,
    );
    for (const typ of ['', 'application/', 42])
      assertConfigError(() => at({ secret: SECRET, typ: typ as string, ...base }), 'jwt()', `typ ${String(typ)}`, [
        SECRET,
      ]);
    assertConfigError(() => oidc({ issuer: ISSUER, audience: AUDIENCE, typ: '' }), 'oidc()', 'oidc typ');
  });
});

describe('scopes (RFC 6749 §3.3, RFC 9068 scope, Okta/Entra ID scp)', () => {
  const entry = () => at({ secret: SECRET, scopes: ['agent:invoke', 'agent:read'], ...base });

  test('all required scopes from scope (space separated) or scp (a list or space separated) are accepted', async () => {
    for (const granted of [
      { scope: 'openid agent:read agent:invoke' },
      { scp: ['agent:invoke', 'agent:read'] },
      { scp: 'agent:read agent:invoke email' },
    ]) {
      assert.equal(await statusOf(entry(), await hs(claims(granted))), 200, JSON.stringify(granted));
    }
  });

  test('a valid token without all of them stops the list with 403 (insufficient_scope), even with later entries', async () => {
    const fallback: AuthFn = () => ({ id: 'fallback', type: 'user' });
    for (const granted of [
      {},
      { scope: 'agent:invoke' },
      { scope: 'agent:invoke agent:reader' },
      { scp: ['AGENT:READ', 'agent:invoke'] },
      { scope: 'agent:invoke,agent:read' },
      { scope: ['agent:invoke', 'agent:read'] },
    ]) {
      const result = await authenticate([entry(), fallback], await hs(claims(granted)));
      assert.equal(result.ok ? 200 : result.response.status, 403, JSON.stringify(granted));
      if (!result.ok) assert.equal(await result.response.text(), '{"error":"Forbidden"}');
    }
  });

  test('an invalid token (expired, wrong audience, bad signature) without the scopes still skips: 401, not 403', async () => {
    for (const token of [
      await hs(claims({ exp: NOW - 3600 })),
      await hs(claims({ aud: 'other' })),
      `${(await hs()).slice(0, -4)}AAAA`,
    ]) {
      assert.equal(await statusOf(entry(), token), 401);
    }
  });

  test('scopes must be a non-empty list of scope tokens', () => {
    for (const scopes of [[], 'agent:invoke', ['two words'], [''], ['a"b'], [42]]) {
      assertConfigError(
        () => at({ secret: SECRET, scopes: scopes as string[], ...base }),
        'jwt()',
        JSON.stringify(scopes),
        [SECRET],
      );
    }
  });
});

describe("type 'service' for a client's own token", () => {
  test('client_id or azp equal to sub: service; otherwise user', async () => {
    const entry = at({ secret: SECRET, ...base });
    const typeOf = async (extra: Record<string, unknown>) => {
      const result = await authenticate(entry, await hs(claims(extra)));
      return result.ok ? result.principal.type : result.response.status;
    };
    assert.equal(await typeOf({ sub: 'svc-1', client_id: 'svc-1' }), 'service');
    assert.equal(await typeOf({ sub: 'svc-1', azp: 'svc-1' }), 'service');
    assert.equal(await typeOf({ sub: 'user-1', client_id: 'web-app' }), 'user');
    assert.equal(await typeOf({ sub: 'user-1', azp: 'web-app' }), 'user');
    assert.equal(await typeOf({ sub: 'user-1' }), 'user');
  });
});

describe('oidc(): an http issuer only on localhost, decided at creation', () => {
  test('http://127.0.0.1, localhost and [::1] are accepted; any other http issuer is a configuration error, even with an https discoveryUrl', () => {
    for (const issuer of ['http://127.0.0.1:8080', 'http://localhost:3000/realms/x', 'http://[::1]:9000']) {
      assert.doesNotThrow(() => oidc({ issuer, audience: AUDIENCE }), issuer);
    }
    for (const issuer of ['http://idp.example.com', 'http://10.0.0.1', 'ftp://idp.example']) {
      assertConfigError(() => oidc({ issuer, audience: AUDIENCE }), 'oidc()', issuer);
      assertConfigError(
        () =>
          oidc({
            issuer,
            audience: AUDIENCE,
            discoveryUrl: 'https://idp.example.com/.well-known/openid-configuration',
          }),
        'oidc()',
        `${issuer} with discoveryUrl`,
      );
    }
  });
});

describe('onRefused: why a bearer token was refused, for the operator', () => {
  async function heard(
    entries: AuthFn | AuthFn[],
    token: string | null,
  ): Promise<{ refusals: Refusal[]; status: number; body: string }> {
    const refusals: Refusal[] = [];
    const authenticate = routeAuth(entries, { onRefused: (refusal) => void refusals.push(refusal) });
    const result = await authenticate(token === null ? new Request('https://agent.example/') : bearer(token));
    return {
      refusals,
      status: result.ok ? 200 : result.response.status,
      body: result.ok ? '' : await result.response.text(),
    };
  }
  const withKid = (payload: Record<string, unknown>, header: Record<string, unknown> = {}) =>
    hs(payload, { alg: 'HS256', kid: 'k-7', ...header });

  // Issue 28, finding 5: a forged token's kid reached the operator's log whole (~16 KB a request).
  test('kid and iss are cut to 256 characters: a forged token cannot flood the operator', async () => {
    const long = 'k'.repeat(4000); // within the 16 KiB Authorization bound once encoded
    const { refusals } = await heard(
      at({ secret: SECRET, ...base }),
      `${(await hs(claims({ iss: 'i'.repeat(4000) }), { alg: 'HS256', kid: long })).slice(0, -4)}AAAA`,
    );
    assert.equal(refusals.length, 1);
    assert.equal(refusals[0]!.kid, long.slice(0, 256));
    assert.equal(refusals[0]!.iss, 'i'.repeat(256));
  });

  test('one reason per refused request, with the entry and the token kid and iss; the client gets the same 401', async () => {
    const entry = at({ secret: SECRET, typ: 'at+jwt', ...base });
    const at_ = { typ: 'at+jwt' };
    const cases: [string, string][] = [
      ['malformed', 'not-a-jwt'],
      ['alg-not-allowed', await signToken({ alg: 'ES256', kid: 'k-7', ...at_ }, claims(), es256.sign)],
      ['type', await withKid(claims(), { typ: 'JWT' })],
      ['signature', `${(await withKid(claims(), at_)).slice(0, -4)}AAAA`],
      ['expired', await withKid(claims({ exp: NOW - 3600 }), at_)],
      ['not-yet-valid', await withKid(claims({ nbf: NOW + 3600 }), at_)],
      ['issued-in-future', await withKid(claims({ iat: NOW + 3600 }), at_)],
      ['issuer', await withKid(claims({ iss: 'https://other.example' }), at_)],
      ['audience', await withKid(claims({ aud: 'other' }), at_)],
      ['no-subject', await withKid(claims({ sub: undefined }), at_)],
    ];
    for (const [reason, token] of cases) {
      const { refusals, status, body } = await heard(entry, token);
      assert.equal(status, 401, reason);
      assert.equal(body, '{"error":"Unauthorized"}');
      assert.equal(refusals.length, 1, reason);
      const [refusal] = refusals;
      assert.equal(refusal!.entry, 'jwt');
      assert.equal(refusal!.reason, reason);
      if (reason !== 'malformed') {
        assert.equal(refusal!.kid, 'k-7', reason);
        assert.equal(refusal!.iss, reason === 'issuer' ? 'https://other.example' : ISSUER, reason);
      }
      assert.ok(!JSON.stringify(refusal).includes(token.split('.')[2] ?? token), 'never the token');
      assert.ok(Object.isFrozen(refusal));
    }
  });

  test('scope: heard, and the answer is 403', async () => {
    const { refusals, status } = await heard(
      at({ secret: SECRET, scopes: ['agent:invoke'], ...base }),
      await withKid(claims()),
    );
    assert.equal(status, 403);
    assert.deepEqual(refusals, [{ entry: 'jwt', reason: 'scope', kid: 'k-7', iss: ISSUER }]);
  });

  test('no-key and key-set-unavailable from key sets, oidc named as its entry', async () => {
    const ec = await signToken({ alg: 'ES256', kid: 'unknown' }, claims(), es256.sign);
    const jwks = { keys: [{ ...es256.jwk, kid: 'known' }] };
    const keyed = at({
      jwksUrl: 'https://idp.example/jwks',
      ...base,
      _internal: { fetch: async () => Response.json(jwks) },
    });
    assert.deepEqual(
      (await heard(keyed, ec)).refusals.map((r) => r.reason),
      ['no-key'],
    );
    const down = oidc({
      issuer: ISSUER,
      audience: AUDIENCE,
      _internal: { fetch: async () => new Response('', { status: 503 }) },
    });
    const warn = console.warn;
    console.warn = () => {};
    try {
      assert.deepEqual((await heard(down, ec)).refusals, [
        { entry: 'oidc', reason: 'key-set-unavailable', kid: 'unknown', iss: ISSUER },
      ]);
    } finally {
      console.warn = warn;
    }
  });

  test('a token of an issuer no entry names is reported as issuer, not no-key or signature, though its key is unknown too (design §12)', async () => {
    const foreign = await signToken(
      { alg: 'ES256', kid: 'theirs' },
      claims({ iss: 'https://other-idp.example' }),
      es256.sign,
    );
    const jwks = { keys: [{ ...es256.jwk, kid: 'known' }] };
    const keyed = at({
      jwksUrl: 'https://idp.example/jwks',
      ...base,
      _internal: { fetch: async () => Response.json(jwks) },
    });
    const other = at({ secret: SECRET, ...base });
    const { refusals, status } = await heard([keyed, other], foreign);
    assert.equal(status, 401);
    assert.deepEqual(refusals, [{ entry: 'jwt', reason: 'issuer', kid: 'theirs', iss: 'https://other-idp.example' }]);
    // Without iss too; and the entry's own issuer with a key it lacks is still no-key.
    const bare = await signToken({ alg: 'ES256', kid: 'theirs' }, claims({ iss: undefined }), es256.sign);
    assert.deepEqual(
      (await heard(keyed, bare)).refusals.map((r) => r.reason),
      ['issuer'],
    );
    const ours = await signToken({ alg: 'ES256', kid: 'theirs' }, claims(), es256.sign);
    assert.deepEqual(
      (await heard(keyed, ours)).refusals.map((r) => r.reason),
      ['no-key'],
    );
  });

  test('apiToken is heard too; of several entries the one whose check got furthest is reported, once', async () => {
    const list = [apiToken('the-api-token-0123456789'), at({ secret: SECRET, ...base })];
    assert.deepEqual((await heard(list, 'wrong-token')).refusals, [{ entry: 'apiToken', reason: 'mismatch' }]);
    assert.deepEqual(
      (await heard(list, await withKid(claims({ exp: NOW - 3600 })))).refusals.map((r) => [r.entry, r.reason]),
      [['jwt', 'expired']],
    );
  });

  test('nothing is heard for an accepted request, for a request without a bearer token, or for Basic credentials', async () => {
    const list = [
      at({ secret: SECRET, issuer: 'https://first.example', audience: AUDIENCE }),
      at({ secret: SECRET, ...base }),
    ];
    assert.deepEqual(
      (await heard(list, await hs())).refusals,
      [],
      'refused by the first entry, accepted by the second',
    );
    assert.deepEqual((await heard(list, null)).refusals, []);
    const refusals: Refusal[] = [];
    const basicAuth = routeAuth([basic({ users: { ada: 'pw-0123456789' } })], {
      onRefused: (r) => void refusals.push(r),
    });
    await basicAuth(
      new Request('https://agent.example/', { headers: { authorization: `Basic ${btoa('ada:wrong')}` } }),
    );
    assert.deepEqual(refusals, []);
  });

  test('a listener that throws is logged; the answer is still the 401', async () => {
    const logged: unknown[] = [];
    const error = console.error;
    console.error = (...args: unknown[]) => void logged.push(args);
    try {
      const authenticate = routeAuth(at({ secret: SECRET, ...base }), {
        onRefused: () => {
          throw new Error('listener bug');
        },
      });
      const result = await authenticate(bearer('x.y.z'));
      assert.equal(result.ok ? 200 : result.response.status, 401);
    } finally {
      console.error = error;
    }
    assert.equal(logged.length, 1);
    assertConfigError(() => routeAuth([], { onRefused: 'yes' as never }), 'routeAuth()', 'a non-function onRefused');
  });

  test('the token never reaches the listener, even when its iss is the token text itself', async () => {
    const token = await withKid(claims({ exp: NOW - 3600 }));
    const { refusals } = await heard(at({ secret: SECRET, ...base }), token);
    assert.ok(!JSON.stringify(refusals).includes(token));
    void b64json;
  });
});
