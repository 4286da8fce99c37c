import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthConfigError, jwt, routeAuth } from '../../src/auth/index.ts';
import type { JwtOptions } from '../../src/auth/jwt.ts';
import {
  AUDIENCE,
  bearer,
  claimsFor,
  ecKey,
  json,
  rsaKey,
  sign,
  startServer,
  type SigningKey,
  type TestServer,
} from '../helpers/jwks.ts';

const isConfigError = (helperOption: string) => (error: unknown) =>
  error instanceof AuthConfigError &&
  error.code === 'AGENT_AUTH_CONFIG_INVALID' &&
  error.message.startsWith('jwt(): ') &&
  error.message.includes(helperOption);

describe('jwt({ jwksUrl }): options checked at creation', () => {
  const accepted = [
    'https://idp.example/jwks',
    'http://localhost:8080/jwks',
    'http://127.0.0.1/jwks',
    'http://[::1]:3000/.well-known/jwks.json',
    new URL('https://idp.example/keys'),
  ];
  for (const jwksUrl of accepted) {
    test(`jwksUrl ${String(jwksUrl)} is accepted (https:, or http: on localhost)`, () => {
      assert.equal(typeof jwt({ jwksUrl, audience: AUDIENCE }), 'function');
    });
  }

  const refused = [
    'http://idp.example/jwks',
    'http://127.0.0.2/jwks',
    'http://localhost.evil.example/jwks',
    'ftp://idp.example/jwks',
    'file:///etc/jwks.json',
    'not a url',
    '/jwks',
    'https://user:pass@idp.example/jwks',
    42,
  ];
  for (const jwksUrl of refused) {
    test(`jwksUrl ${JSON.stringify(jwksUrl)} is a configuration error (AGENT_AUTH_CONFIG_INVALID)`, () => {
      assert.throws(() => jwt({ jwksUrl: jwksUrl as string, audience: AUDIENCE }), isConfigError('jwksUrl'));
    });
  }

  for (const algorithms of [['HS256'], ['RS256', 'HS512'], ['none']]) {
    test(`algorithms ${JSON.stringify(algorithms)} with jwksUrl is a configuration error: a key set never supplies an HMAC key`, () => {
      assert.throws(
        () => jwt({ jwksUrl: 'https://idp.example/jwks', audience: AUDIENCE, algorithms }),
        isConfigError('algorithms'),
      );
    });
  }

  test('jwksUrl with another key source is a configuration error (exactly one key source)', () => {
    assert.throws(
      () => jwt({ jwksUrl: 'https://idp.example/jwks', secret: 'x'.repeat(32), audience: AUDIENCE }),
      isConfigError('key source'),
    );
  });

  test('jwksUrl without audience (and without allowAnyAudience) is a configuration error', () => {
    assert.throws(() => jwt({ jwksUrl: 'https://idp.example/jwks' }), isConfigError('audience'));
  });
});

describe('jwt({ jwksUrl }): algorithms and principal', () => {
  let server: TestServer;
  let rs256: SigningKey;
  let rs384: SigningKey;
  let es256: SigningKey;
  let es384: SigningKey;
  before(async () => {
    [server, rs256, rs384, es256, es384] = await Promise.all([
      startServer(),
      rsaKey('r256'),
      rsaKey('r384', 2048, 'RS384'),
      ecKey('e256'),
      ecKey('e384', 'ES384'),
    ]);
    server.answer(json({ keys: [rs256.jwk, rs384.jwk, es256.jwk, es384.jwk] }));
  });
  after(() => server.close());

  const authenticate = (options: Partial<JwtOptions> = {}) =>
    routeAuth([jwt({ jwksUrl: `${server.origin}/jwks`, audience: AUDIENCE, ...options })]);
  const outcome = async (auth: ReturnType<typeof authenticate>, token: string) => {
    const result = await auth(bearer(token));
    return result.ok ? result.principal.id : result.response.status;
  };

  test('algorithms default to RS256 and ES256', async () => {
    const auth = authenticate();
    assert.equal(await outcome(auth, await sign(rs256, claimsFor('rs256'))), 'rs256');
    assert.equal(await outcome(auth, await sign(es256, claimsFor('es256'))), 'es256');
    assert.equal(await outcome(auth, await sign(rs384, claimsFor('rs384'))), 401);
    assert.equal(await outcome(auth, await sign(es384, claimsFor('es384'))), 401);
  });

  test('algorithms narrows or widens within RSA and EC', async () => {
    const auth = authenticate({ algorithms: ['RS384', 'ES384'] });
    assert.equal(await outcome(auth, await sign(rs384, claimsFor('rs384'))), 'rs384');
    assert.equal(await outcome(auth, await sign(es384, claimsFor('es384'))), 'es384');
    assert.equal(await outcome(auth, await sign(rs256, claimsFor('rs256'))), 401);
  });

  test('default principal: id = sub, type user, authenticator jwt, issuer = iss, claims = verified claims', async () => {
    const result = await authenticate({ issuer: 'https://idp.example' })(
      bearer(await sign(rs256, claimsFor('ada', { iss: 'https://idp.example' }))),
    );
    assert.ok(result.ok);
    assert.equal(result.principal.id, 'ada');
    assert.equal(result.principal.type, 'user');
    assert.equal(result.principal.authenticator, 'jwt');
    assert.equal(result.principal.issuer, 'https://idp.example');
    assert.equal(result.principal.claims?.sub, 'ada');
  });
});
