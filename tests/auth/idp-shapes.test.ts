// Tokens shaped like those of Auth0, Okta, Entra ID (v2), Keycloak, Cognito, Google and Clerk,
// from their public documentation (header, iss, aud, azp, client_id/cid, scp/scope, token_use),
// each accepted with the configuration the README shows for that provider, and refused when the
// README's safety settings are violated (above all: the provider's ID token never opens the API).
// The discovery document and key set are served by a fake fetch: the shapes, not the network, are tested here.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { oidc, jwt, routeAuth, type AuthFn, type OidcOptions, type JwtOptions } from '../../src/auth/index.ts';
import { bearer, signToken, testKey, type TestKey } from '../helpers/jwt.ts';

let key: TestKey;
before(async () => {
  key = await testKey('RS256');
});

const now = () => Math.floor(Date.now() / 1000);
const times = () => ({ iat: now() - 5, exp: now() + 600 });

/** Serves `<issuer>/.well-known/openid-configuration` and the key set at `jwksUri`, for `oidc()` and `jwt({ jwksUrl })`. */
function provider(issuer: string, jwksUri: string) {
  const fetch = async (url: string) => {
    const discovery = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    if (url === discovery) return Response.json({ issuer, jwks_uri: jwksUri });
    if (url === jwksUri) return Response.json({ keys: [{ ...key.jwk, kid: 'kid-1', use: 'sig', alg: 'RS256' }] });
    return new Response('not found', { status: 404 });
  };
  return {
    oidc: (options: Omit<OidcOptions, 'issuer'>) => oidc({ issuer, ...options, _internal: { fetch } }),
    jwt: (options: JwtOptions) => jwt({ ...options, _internal: { fetch } }),
  };
}

async function outcome(
  entry: AuthFn,
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
): Promise<string | number> {
  const token = await signToken({ alg: 'RS256', kid: 'kid-1', ...header }, payload, key.sign);
  const result = await routeAuth(entry)(bearer(token));
  return result.ok ? `${result.principal.type}:${result.principal.id}` : result.response.status;
}

describe('Auth0', () => {
  const issuer = 'https://example-tenant.us.auth0.com/'; // Auth0's issuer ends with "/"
  const idp = () => provider(issuer, 'https://example-tenant.us.auth0.com/.well-known/jwks.json');
  const entry = () => idp().oidc({ audience: 'https://agent.example.com/api', scopes: ['agent:invoke'] });

  test('an access token for the API (aud: [API, userinfo], scope) is accepted; the README configuration', async () => {
    const access = {
      iss: issuer,
      sub: 'auth0|64f1c0ffee',
      aud: ['https://agent.example.com/api', `${issuer}userinfo`],
      azp: 'Xq3clientid',
      scope: 'openid profile agent:invoke',
      ...times(),
    };
    assert.equal(await outcome(entry(), { typ: 'JWT' }, access), 'user:auth0|64f1c0ffee');
    // RFC 9068 token profile on the API: typ at+jwt, which the README suggests requiring then.
    assert.equal(
      await outcome(
        idp().oidc({ audience: 'https://agent.example.com/api', typ: 'at+jwt' }),
        { typ: 'at+jwt' },
        access,
      ),
      'user:auth0|64f1c0ffee',
    );
  });

  test('the ID token (aud: client id), a token for another API, and a token without the scope are refused', async () => {
    const id = { iss: issuer, sub: 'auth0|64f1c0ffee', aud: 'Xq3clientid', nonce: 'n', name: 'Ada', ...times() };
    assert.equal(await outcome(entry(), { typ: 'JWT' }, id), 401);
    assert.equal(
      await outcome(
        entry(),
        {},
        { iss: issuer, sub: 'auth0|1', aud: 'https://billing.example.com', scope: 'agent:invoke', ...times() },
      ),
      401,
    );
    assert.equal(
      await outcome(
        entry(),
        {},
        { iss: issuer, sub: 'auth0|1', aud: 'https://agent.example.com/api', scope: 'openid', ...times() },
      ),
      403,
    );
    // Without the trailing slash the issuer is another one (exact comparison).
    assert.equal(
      await outcome(
        entry(),
        {},
        {
          iss: issuer.slice(0, -1),
          sub: 'auth0|1',
          aud: 'https://agent.example.com/api',
          scope: 'agent:invoke',
          ...times(),
        },
      ),
      401,
    );
  });

  test('a machine-to-machine token (sub "<client>@clients", gty client-credentials) is accepted', async () => {
    const m2m = {
      iss: issuer,
      sub: 'Xq3clientid@clients',
      aud: 'https://agent.example.com/api',
      azp: 'Xq3clientid',
      gty: 'client-credentials',
      scope: 'agent:invoke',
      ...times(),
    };
    assert.equal(await outcome(entry(), { typ: 'JWT' }, m2m), 'user:Xq3clientid@clients');
  });
});

describe('Okta (custom authorization server)', () => {
  const issuer = 'https://example.okta.com/oauth2/default';
  const entry = () => provider(issuer, `${issuer}/v1/keys`).oidc({ audience: 'api://agent', scopes: ['agent:invoke'] });

  test('an access token (aud api://agent, cid, uid, scp list) is accepted', async () => {
    const access = {
      ver: 1,
      jti: 'AT.x',
      iss: issuer,
      aud: 'api://agent',
      cid: '0oa1client',
      uid: '00u1user',
      scp: ['openid', 'agent:invoke'],
      sub: 'ada@example.com',
      ...times(),
    };
    assert.equal(await outcome(entry(), {}, access), 'user:ada@example.com');
    const service = {
      ver: 1,
      iss: issuer,
      aud: 'api://agent',
      cid: '0oa1client',
      scp: ['agent:invoke'],
      sub: '0oa1client',
      ...times(),
    };
    assert.equal(
      await outcome(entry(), {}, service),
      'user:0oa1client',
      'Okta names the client cid, not client_id: a mapper makes it a service (README)',
    );
  });

  test('the ID token (aud: client id) and a token of the org authorization server are refused', async () => {
    assert.equal(
      await outcome(entry(), {}, { ver: 1, iss: issuer, aud: '0oa1client', sub: '00u1user', ...times(), amr: ['pwd'] }),
      401,
    );
    assert.equal(
      await outcome(
        entry(),
        {},
        { ver: 1, iss: 'https://example.okta.com', aud: 'api://agent', scp: ['agent:invoke'], sub: 'x', ...times() },
      ),
      401,
    );
  });
});

describe('Entra ID (v2 tokens)', () => {
  const tenant = '72f988bf-86f1-41af-91ab-2d7cd011db47';
  const issuer = `https://login.microsoftonline.com/${tenant}/v2.0`;
  const apiClientId = '6e74172b-be56-4843-9ff4-e66a39bb12e3';
  const entry = () =>
    provider(issuer, `https://login.microsoftonline.com/${tenant}/discovery/v2.0/keys`).oidc({
      audience: apiClientId,
      scopes: ['agent.invoke'],
    });

  test('an access token for the API (aud: its application id, scp space separated, ver 2.0) is accepted', async () => {
    const access = {
      aud: apiClientId,
      iss: issuer,
      azp: 'c44b4083-3bb0-49c1-b47d-974e53cbdf3c',
      azpacr: '0',
      name: 'Ada',
      oid: '00000000-0000-0000-66f3-3332eca7ea81',
      scp: 'agent.invoke User.Read',
      sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
      tid: tenant,
      ver: '2.0',
      ...times(),
    };
    assert.equal(await outcome(entry(), { typ: 'JWT' }, access), 'user:AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ');
  });

  test('the ID token (aud: the client app), another tenant, and a Graph token are refused', async () => {
    const base = { iss: issuer, sub: 's', tid: tenant, ver: '2.0', ...times() };
    assert.equal(await outcome(entry(), {}, { ...base, aud: 'c44b4083-3bb0-49c1-b47d-974e53cbdf3c', nonce: 'n' }), 401);
    assert.equal(
      await outcome(
        entry(),
        {},
        {
          ...base,
          iss: 'https://login.microsoftonline.com/00000000-0000-0000-0000-000000000001/v2.0',
          aud: apiClientId,
          scp: 'agent.invoke',
        },
      ),
      401,
    );
    assert.equal(
      await outcome(entry(), {}, { ...base, aud: '00000003-0000-0000-c000-000000000000', scp: 'agent.invoke' }),
      401,
    );
  });
});

describe('Keycloak', () => {
  const issuer = 'https://keycloak.example.com/realms/agents';
  const entry = () =>
    provider(issuer, `${issuer}/protocol/openid-connect/certs`).oidc({
      audience: 'agent-api',
      scopes: ['agent:invoke'],
    });

  test('an access token with the audience mapper (aud [agent-api, account], azp, typ claim "Bearer") is accepted', async () => {
    const access = {
      iss: issuer,
      aud: ['agent-api', 'account'],
      sub: 'f1b3a1e2-0000-4000-8000-000000000001',
      typ: 'Bearer',
      azp: 'web-app',
      session_state: 's',
      scope: 'openid profile agent:invoke',
      realm_access: { roles: ['user'] },
      preferred_username: 'ada',
      ...times(),
    };
    assert.equal(await outcome(entry(), { typ: 'JWT' }, access), 'user:f1b3a1e2-0000-4000-8000-000000000001');
  });

  test('the ID token (aud: the client, typ claim "ID") and an access token without the audience mapper (aud account) are refused', async () => {
    assert.equal(
      await outcome(
        entry(),
        {},
        { iss: issuer, aud: 'web-app', sub: 'u', typ: 'ID', azp: 'web-app', nonce: 'n', ...times() },
      ),
      401,
    );
    assert.equal(
      await outcome(
        entry(),
        {},
        { iss: issuer, aud: 'account', sub: 'u', typ: 'Bearer', azp: 'web-app', scope: 'agent:invoke', ...times() },
      ),
      401,
    );
  });
});

describe('Amazon Cognito', () => {
  const issuer = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123';
  const clientId = '3n4b5urk1ft4fl3mg5e62d9ado';
  // Cognito access tokens carry no aud: the README checks client_id and token_use in a mapper.
  const entry = () =>
    provider(issuer, `${issuer}/.well-known/jwks.json`).oidc({
      allowAnyAudience: true,
      principal: (claims) =>
        claims.token_use === 'access' && claims.client_id === clientId && typeof claims.sub === 'string'
          ? { id: claims.sub, type: claims.sub === clientId ? 'service' : 'user', issuer: claims.iss as string, claims }
          : null,
    });

  test('an access token (token_use access, client_id, no aud) of a user and of the client (client credentials) is accepted', async () => {
    const access = {
      sub: 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee',
      'cognito:groups': ['admin'],
      iss: issuer,
      client_id: clientId,
      origin_jti: 'o',
      event_id: 'e',
      token_use: 'access',
      scope: 'aws.cognito.signin.user.admin',
      auth_time: now() - 5,
      jti: 'j',
      username: 'ada',
      ...times(),
    };
    assert.equal(await outcome(entry(), {}, access), 'user:aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee');
    assert.equal(
      await outcome(
        entry(),
        {},
        { sub: clientId, iss: issuer, client_id: clientId, token_use: 'access', scope: 'agent/invoke', ...times() },
      ),
      `service:${clientId}`,
    );
  });

  test("the ID token (token_use id, aud: client id) and another app client's token are refused", async () => {
    assert.equal(
      await outcome(
        entry(),
        {},
        { sub: 'u', aud: clientId, iss: issuer, token_use: 'id', 'cognito:username': 'ada', ...times() },
      ),
      401,
    );
    assert.equal(
      await outcome(
        entry(),
        {},
        { sub: 'u', iss: issuer, client_id: 'another-client', token_use: 'access', ...times() },
      ),
      401,
    );
  });
});

describe('Google (identity tokens for service-to-service calls)', () => {
  const issuer = 'https://accounts.google.com';
  const entry = () =>
    provider(issuer, 'https://www.googleapis.com/oauth2/v3/certs').oidc({ audience: 'https://agent.example.com' });

  test('an identity token whose aud is this service (a Cloud Run / service account caller) is accepted', async () => {
    const token = {
      aud: 'https://agent.example.com',
      azp: '1008719970978-hb24n2dstb40o45d4feuo2ukqmcc6381',
      email: 'caller@project.iam.gserviceaccount.com',
      email_verified: true,
      iss: issuer,
      sub: '1008719970978',
      ...times(),
    };
    assert.equal(await outcome(entry(), { typ: 'JWT' }, token), 'user:1008719970978');
  });

  test('a Google sign-in ID token for a web client (aud: the OAuth client id) is refused', async () => {
    const signIn = {
      aud: '1234567890-abc.apps.googleusercontent.com',
      azp: '1234567890-abc.apps.googleusercontent.com',
      iss: issuer,
      sub: '110169484474386276334',
      email: 'ada@example.com',
      ...times(),
    };
    assert.equal(await outcome(entry(), {}, signIn), 401);
    assert.equal(
      await outcome(entry(), {}, { ...signIn, aud: 'https://agent.example.com', iss: 'accounts.google.com' }),
      401,
      'the legacy issuer without https:// is another issuer',
    );
  });
});

describe('Clerk', () => {
  const issuer = 'https://clerk.example.com';
  // A JWT template adds the aud (session tokens have none): the README's setup.
  const entry = () => provider(issuer, `${issuer}/.well-known/jwks.json`).oidc({ audience: 'agent-api' });

  test('a template token (aud agent-api, azp origin, sid) is accepted', async () => {
    const token = {
      azp: 'https://app.example.com',
      iss: issuer,
      sid: 'sess_2abc',
      sub: 'user_2abcdefghijklmnopqrstuvwxy',
      aud: 'agent-api',
      nbf: now() - 10,
      ...times(),
    };
    assert.equal(await outcome(entry(), { typ: 'JWT' }, token), 'user:user_2abcdefghijklmnopqrstuvwxy');
  });

  test('a default session token (no aud) is refused', async () => {
    assert.equal(
      await outcome(
        entry(),
        {},
        { azp: 'https://app.example.com', iss: issuer, sid: 'sess_2abc', sub: 'user_2x', nbf: now() - 10, ...times() },
      ),
      401,
    );
  });
});

test('jwt({ jwksUrl }) takes the same provider settings as oidc()', async () => {
  const issuer = 'https://example.okta.com/oauth2/default';
  const entry = provider(issuer, `${issuer}/v1/keys`).jwt({
    jwksUrl: `${issuer}/v1/keys`,
    issuer,
    audience: 'api://agent',
  });
  assert.equal(await outcome(entry, {}, { iss: issuer, aud: 'api://agent', sub: 'ada', ...times() }), 'user:ada');
  assert.equal(await outcome(entry, {}, { iss: issuer, aud: '0oa1client', sub: 'ada', ...times() }), 401);
});
