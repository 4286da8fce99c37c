// Tenants of jwt() and oidc() (docs/design.md §12): an issuer template with one {tenantid} segment
// (Entra ID's multi-tenant apps), a tenant claim (Auth0 organizations' org_id), the tenants
// allowed, and principal.tenant. Tokens and documents are shaped exactly as Entra (v2.0 access
// tokens; the organizations/common discovery document, whose issuer is the template itself) and
// Auth0 (org_id, org_name; issuer https://<tenant>.auth0.com/) issue them, served by a fake fetch,
// and once over real HTTP on 127.0.0.1.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { jwt, oidc, routeAuth, type AuthFn, type Refusal } from '../../src/auth/index.ts';
import { completePrincipal } from '../../src/auth/principal.ts';
import { bearer, signToken, testKey, type TestKey } from '../helpers/jwt.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { startServer, type TestServer } from '../helpers/jwks.ts';

let key: TestKey;
before(async () => {
  key = await testKey('RS256');
});

const now = () => Math.floor(Date.now() / 1000);
const ENTRA = 'https://login.microsoftonline.com';
const TEMPLATE = `${ENTRA}/{tenantid}/v2.0`;
const ORGANIZATIONS = `${ENTRA}/organizations/v2.0/.well-known/openid-configuration`;
const COMMON_KEYS = `${ENTRA}/common/discovery/v2.0/keys`;
const CONTOSO = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const FABRIKAM = 'f8cdef31-a31e-4b4a-93e4-5f571e91255a';
const API = '6e74172b-be56-4843-9ff4-e66a39bb12e3';

/** Entra's organizations (and common) v2.0 document, as it is served: its issuer is the template itself. */
const entraDocument = (origin = ENTRA, keys = COMMON_KEYS) => ({
  token_endpoint: `${origin}/organizations/oauth2/v2.0/token`,
  token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
  jwks_uri: keys,
  response_modes_supported: ['query', 'fragment', 'form_post'],
  subject_types_supported: ['pairwise'],
  id_token_signing_alg_values_supported: ['RS256'],
  response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
  scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
  issuer: `${origin}/{tenantid}/v2.0`,
  request_uri_parameter_supported: false,
  userinfo_endpoint: 'https://graph.microsoft.com/oidc/userinfo',
  authorization_endpoint: `${origin}/organizations/oauth2/v2.0/authorize`,
  http_logout_supported: true,
  frontchannel_logout_supported: true,
  end_session_endpoint: `${origin}/organizations/oauth2/v2.0/logout`,
  claims_supported: ['sub', 'iss', 'cloud_instance_name', 'aud', 'exp', 'iat', 'auth_time', 'acr', 'nonce', 'tid'],
  kerberos_endpoint: `${origin}/organizations/kerberos`,
  tenant_region_scope: null,
  cloud_instance_name: 'microsoftonline.com',
  cloud_graph_host_name: 'graph.windows.net',
  msgraph_host: 'graph.microsoft.com',
  rbac_url: 'https://pas.windows.net',
});

/** An Entra v2.0 access token for the API, of `tenant`, as Entra issues it (claims in its order). */
const entraAccess = (tenant: string, extra: Record<string, unknown> = {}) => ({
  aud: API,
  iss: `${ENTRA}/${tenant}/v2.0`,
  iat: now() - 5,
  nbf: now() - 5,
  exp: now() + 3600,
  aio: 'AWQAm/8YAAAA',
  azp: 'c44b4083-3bb0-49c1-b47d-974e53cbdf3c',
  azpacr: '0',
  name: 'Ada Lovelace',
  oid: '00000000-0000-0000-66f3-3332eca7ea81',
  preferred_username: 'ada@contoso.com',
  rh: '0.AAAA',
  scp: 'agent.invoke',
  sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
  tid: tenant,
  uti: 'fqiBqXLPj0eQa82S-IYFAA',
  ver: '2.0',
  ...extra,
});

/** A fake fetch serving `documents` by URL and the key set at every `keys` URL. */
function serving(documents: Record<string, unknown>, keys: readonly string[] = [COMMON_KEYS]) {
  const fetched: string[] = [];
  const fetch = async (url: string) => {
    fetched.push(url);
    if (keys.includes(url)) return Response.json({ keys: [{ ...key.jwk, kid: 'kid-1', use: 'sig', alg: 'RS256' }] });
    const document = documents[url];
    return document === undefined ? new Response('not found', { status: 404 }) : Response.json(document);
  };
  return { fetch, fetched };
}

const entra = (options: Record<string, unknown>, document: unknown = entraDocument()) =>
  oidc({
    issuer: TEMPLATE,
    discovery: ORGANIZATIONS,
    audience: API,
    scopes: ['agent.invoke'],
    ...options,
    _internal: { fetch: serving({ [ORGANIZATIONS]: document }).fetch },
  } as never);

/** The outcome of `payload` signed with the test key: `tenant/id`, or the status and the reason onRefused heard. */
async function outcome(entry: AuthFn, payload: Record<string, unknown>, header: Record<string, unknown> = {}) {
  const token = await signToken({ typ: 'JWT', alg: 'RS256', kid: 'kid-1', ...header }, payload, key.sign);
  const heard: Refusal[] = [];
  const result = await routeAuth(entry, { onRefused: (refusal) => heard.push(refusal) })(bearer(token));
  if (result.ok) return `${result.principal.tenant}/${result.principal.id}`;
  return `${result.response.status} ${heard.map((refusal) => refusal.reason).join(',')}`;
}

const SUB = entraAccess(CONTOSO).sub;

describe('Entra ID multi-tenant app: issuer template, tid, tenants', () => {
  test('a v2.0 access token of an allowed tenant is accepted; principal.tenant is its tid, issuer its iss', async () => {
    const entry = entra({ tenants: [CONTOSO, FABRIKAM] });
    assert.equal(await outcome(entry, entraAccess(CONTOSO)), `${CONTOSO}/${SUB}`);
    assert.equal(await outcome(entry, entraAccess(FABRIKAM)), `${FABRIKAM}/${SUB}`);
    const token = await signToken({ typ: 'JWT', alg: 'RS256', kid: 'kid-1' }, entraAccess(CONTOSO), key.sign);
    const result = await routeAuth(entry)(bearer(token));
    assert.ok(result.ok);
    assert.equal(result.principal.tenant, CONTOSO);
    assert.equal(result.principal.issuer, `${ENTRA}/${CONTOSO}/v2.0`);
    assert.equal(result.principal.authenticator, 'oidc');
    assert.ok(Object.isFrozen(result.principal));
  });

  test('a tenant not in the list skips (reason "tenant"); so does every tenant of a list that names another', async () => {
    const entry = entra({ tenants: [CONTOSO] });
    assert.equal(await outcome(entry, entraAccess(FABRIKAM)), '401 tenant');
    assert.equal(await outcome(entry, entraAccess('9188040d-6c67-4c5b-b112-36a304b66dad')), '401 tenant');
  });

  test('a token whose iss and tid disagree skips (reason "issuer"), even with tenants: "any"', async () => {
    const entry = entra({ tenants: 'any' });
    assert.equal(await outcome(entry, entraAccess(CONTOSO, { tid: FABRIKAM })), '401 issuer');
    assert.equal(await outcome(entry, entraAccess(CONTOSO, { iss: `${ENTRA}/${FABRIKAM}/v2.0` })), '401 issuer');
    // The v1.0 issuer of the same tenant, the literal template, another host: not the template with its tid.
    for (const iss of [
      `https://sts.windows.net/${CONTOSO}/`,
      TEMPLATE,
      `${ENTRA}/${CONTOSO}/v2.0/`,
      `${ENTRA}/${CONTOSO}`,
    ])
      assert.equal(await outcome(entry, entraAccess(CONTOSO, { iss })), '401 issuer', iss);
    assert.equal(await outcome(entry, entraAccess(CONTOSO)), `${CONTOSO}/${SUB}`);
  });

  test('a tid that is not one path segment of [A-Za-z0-9._-]{1,64} skips per token, never a 500', async () => {
    const entry = entra({ tenants: 'any' });
    const bad: unknown[] = [
      '',
      '.',
      '..',
      '../x',
      'a/b',
      'a?b',
      'a#b',
      'a%2Fb',
      'a b',
      'x'.repeat(65),
      'é',
      42,
      null,
      ['a'],
      { a: 1 },
    ];
    for (const tid of bad) {
      const iss = typeof tid === 'string' ? `${ENTRA}/${tid}/v2.0` : `${ENTRA}/${String(tid)}/v2.0`;
      assert.equal(await outcome(entry, entraAccess(CONTOSO, { tid, iss })), '401 tenant', JSON.stringify(tid));
    }
    assert.equal(await outcome(entry, entraAccess(CONTOSO, { tid: undefined })), '401 tenant', 'no tid');
    const longest = 'a'.repeat(64);
    assert.equal(await outcome(entry, entraAccess(longest)), `${longest}/${SUB}`);
    assert.equal(await outcome(entry, entraAccess('a.b_c-D9')), `a.b_c-D9/${SUB}`);
  });

  test('tenants as a function of the id, sync or async: only true accepts; asked again for a cached token', async () => {
    const asked: string[] = [];
    let allowed = new Set([CONTOSO]);
    const sync = entra({ tenants: (tenant: string) => (asked.push(tenant), allowed.has(tenant)) });
    assert.equal(await outcome(sync, entraAccess(CONTOSO)), `${CONTOSO}/${SUB}`);
    assert.equal(await outcome(sync, entraAccess(FABRIKAM)), '401 tenant');
    assert.deepEqual(asked, [CONTOSO, FABRIKAM]);
    const async = entra({ tenants: async (tenant: string) => tenant === FABRIKAM });
    assert.equal(await outcome(async, entraAccess(FABRIKAM)), `${FABRIKAM}/${SUB}`);
    assert.equal(await outcome(async, entraAccess(CONTOSO)), '401 tenant');
    const truthy = entra({ tenants: () => 'yes' });
    assert.equal(await outcome(truthy, entraAccess(CONTOSO)), '401 tenant', 'a truthy answer that is not true refuses');

    // A tenant removed from the function's answer is refused at the next use of a cached token.
    const cached = entra({ tenants: (tenant: string) => allowed.has(tenant), cache: true });
    const token = await signToken({ typ: 'JWT', alg: 'RS256', kid: 'kid-1' }, entraAccess(CONTOSO), key.sign);
    assert.equal((await routeAuth(cached)(bearer(token))).ok, true);
    assert.equal((await routeAuth(cached)(bearer(token))).ok, true);
    allowed = new Set();
    assert.equal((await routeAuth(cached)(bearer(token))).ok, false);
  });

  test('a cached token keeps its tenant; the mapper runs with the tenant accepted, which the principal keeps', async () => {
    const cached = entra({ tenants: [CONTOSO], cache: true });
    for (let i = 0; i < 2; i++) assert.equal(await outcome(cached, entraAccess(CONTOSO)), `${CONTOSO}/${SUB}`);
    const mapped = entra({
      tenants: [CONTOSO],
      cache: true,
      principal: (claims: Record<string, unknown>) => ({ id: claims.oid as string, type: 'user', tenant: FABRIKAM }),
    });
    for (let i = 0; i < 2; i++)
      assert.equal(await outcome(mapped, entraAccess(CONTOSO)), `${CONTOSO}/00000000-0000-0000-66f3-3332eca7ea81`);
  });

  test('jwt() takes the template with a key set; its tid rule and tenants hold the same way', async () => {
    const entry = jwt({
      jwksUrl: COMMON_KEYS,
      issuer: TEMPLATE,
      tenants: [CONTOSO],
      audience: API,
      _internal: { fetch: serving({}).fetch },
    });
    assert.equal(await outcome(entry, entraAccess(CONTOSO)), `${CONTOSO}/${SUB}`);
    assert.equal(await outcome(entry, entraAccess(FABRIKAM)), '401 tenant');
    assert.equal(await outcome(entry, entraAccess(CONTOSO, { tid: FABRIKAM })), '401 issuer');
  });

  test('the discovery document: its issuer may be the template or a tenant of it; another issuer fails discovery', async () => {
    const tenantDocument = { ...entraDocument(), issuer: `${ENTRA}/${CONTOSO}/v2.0` };
    assert.equal(await outcome(entra({ tenants: 'any' }, tenantDocument), entraAccess(CONTOSO)), `${CONTOSO}/${SUB}`);
    const warned: unknown[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => warned.push(args);
    try {
      for (const issuer of ['https://sts.windows.net/{tenantid}/', `${ENTRA}/{tenantid}/v2.0/x`, `${ENTRA}/../v2.0`]) {
        const entry = entra({ tenants: 'any' }, { ...entraDocument(), issuer });
        assert.equal(await outcome(entry, entraAccess(CONTOSO)), '401 key-set-unavailable', issuer);
      }
    } finally {
      console.warn = warn;
    }
    assert.equal(warned.length, 3);
  });
});

describe('Auth0 organizations: tenantClaim org_id', () => {
  const issuer = 'https://example-tenant.us.auth0.com/';
  const keys = `${issuer}.well-known/jwks.json`;
  const documents = { [`${issuer}.well-known/openid-configuration`]: { issuer, jwks_uri: keys } };
  const ACME = 'org_9ybsU1dN2dKfDkBi';
  const GLOBEX = 'org_2bLtA8zD4xQe7WqP';
  /** An Auth0 access token issued in an organization: org_id and, when enabled, org_name. */
  const access = (extra: Record<string, unknown> = {}) => ({
    iss: issuer,
    sub: 'auth0|64f1c0ffee',
    aud: ['https://agent.example.com/api', `${issuer}userinfo`],
    iat: now() - 5,
    exp: now() + 600,
    scope: 'openid profile agent:invoke',
    azp: 'Xq3clientid',
    org_id: ACME,
    org_name: 'acme',
    ...extra,
  });
  const auth0 = (tenants: unknown) =>
    oidc({
      issuer,
      audience: 'https://agent.example.com/api',
      tenantClaim: 'org_id',
      tenants: tenants as never,
      _internal: { fetch: serving(documents, [keys]).fetch },
    });

  test('a token of an allowed organization is accepted with principal.tenant = org_id', async () => {
    assert.equal(await outcome(auth0([ACME]), access()), `${ACME}/auth0|64f1c0ffee`);
    assert.equal(await outcome(auth0('any'), access({ org_id: GLOBEX })), `${GLOBEX}/auth0|64f1c0ffee`);
  });

  test('another organization, no organization, or an org_id that is no tenant id skips (reason "tenant")', async () => {
    const entry = auth0([ACME]);
    assert.equal(await outcome(entry, access({ org_id: GLOBEX })), '401 tenant');
    assert.equal(await outcome(auth0('any'), access({ org_id: undefined, org_name: undefined })), '401 tenant');
    for (const org_id of ['org/../x', '', 7, ['org_1']])
      assert.equal(await outcome(auth0('any'), access({ org_id })), '401 tenant', JSON.stringify(org_id));
    // org_name is a display name, never the tenant.
    assert.equal(await outcome(entry, access({ org_id: undefined, org_name: ACME })), '401 tenant');
  });

  test('the issuer check is unchanged: another Auth0 tenant with the same org_id skips (reason "issuer")', async () => {
    assert.equal(await outcome(auth0([ACME]), access({ iss: 'https://other.us.auth0.com/' })), '401 issuer');
  });
});

test('a template with tenantClaim: the tid rule applies, and the claim must name the same tenant', async () => {
  const entry = entra({ tenants: [CONTOSO], tenantClaim: 'org_id' });
  assert.equal(await outcome(entry, entraAccess(CONTOSO, { org_id: CONTOSO })), `${CONTOSO}/${SUB}`);
  assert.equal(await outcome(entry, entraAccess(CONTOSO, { org_id: FABRIKAM })), '401 tenant');
  assert.equal(await outcome(entry, entraAccess(CONTOSO)), '401 tenant', 'no org_id');
  assert.equal(await outcome(entry, entraAccess(CONTOSO, { org_id: CONTOSO, tid: FABRIKAM })), '401 issuer');
});

test('the template over real HTTP: the organizations document and the common key set served on 127.0.0.1', async () => {
  let server: TestServer | undefined;
  try {
    server = await startServer();
    const origin = server.origin;
    const document = JSON.stringify(entraDocument(origin, `${origin}/common/discovery/v2.0/keys`));
    const jwks = JSON.stringify({ keys: [{ ...key.jwk, kid: 'kid-1', use: 'sig', alg: 'RS256' }] });
    server.answer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      const body =
        path === '/organizations/v2.0/.well-known/openid-configuration'
          ? document
          : path === '/common/discovery/v2.0/keys'
            ? jwks
            : undefined;
      response.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
      response.end(body ?? '');
    });
    const entry = oidc({
      issuer: `${origin}/{tenantid}/v2.0`,
      discovery: `${origin}/organizations/v2.0/.well-known/openid-configuration`,
      tenants: [CONTOSO],
      audience: API,
    });
    const iss = (tenant: string) => `${origin}/${tenant}/v2.0`;
    assert.equal(await outcome(entry, entraAccess(CONTOSO, { iss: iss(CONTOSO) })), `${CONTOSO}/${SUB}`);
    assert.equal(await outcome(entry, entraAccess(FABRIKAM, { iss: iss(FABRIKAM) })), '401 tenant');
    assert.equal(await outcome(entry, entraAccess(CONTOSO, { iss: iss(FABRIKAM) })), '401 issuer');
  } finally {
    await server?.close();
  }
});

test('bad tenant configuration is an AuthConfigError at creation', () => {
  const base = { jwksUrl: COMMON_KEYS, audience: API };
  assertConfigError(() => jwt({ ...base, issuer: TEMPLATE }), 'jwt()', 'a template without tenants');
  assertConfigError(
    () => jwt({ ...base, issuer: 'https://a.example/', tenantClaim: 'org_id' }),
    'jwt()',
    'tenantClaim without tenants',
  );
  assertConfigError(
    () => jwt({ ...base, issuer: `${ENTRA}/{tenantid}/{tenantid}/v2.0`, tenants: 'any' }),
    'jwt()',
    'two placeholders',
  );
  assertConfigError(() => jwt({ ...base, issuer: TEMPLATE, tenants: [] }), 'jwt()', 'an empty tenant list');
  for (const misspelt of [`${ENTRA}/{tenant}/v2.0`, `${ENTRA}/{TenantId}/v2.0`, `${ENTRA}/{tenantid}/{tid}/v2.0`])
    assert.throws(
      () => jwt({ ...base, issuer: misspelt, tenants: 'any' }),
      /jwt\(\): issuer's only placeholder is \{tenantid\}, once/,
      misspelt,
    );
  assertConfigError(() => jwt({ ...base, issuer: TEMPLATE, tenants: ['a/b'] }), 'jwt()', 'a tenant id with a slash');
  assertConfigError(() => jwt({ ...base, issuer: TEMPLATE, tenants: ['..'] }), 'jwt()', 'a tenant id ".."');
  assertConfigError(() => jwt({ ...base, issuer: TEMPLATE, tenants: 'all' as never }), 'jwt()', 'tenants "all"');
  assertConfigError(() => jwt({ ...base, issuer: TEMPLATE, tenants: true as never }), 'jwt()', 'tenants true');
  assertConfigError(
    () => jwt({ ...base, issuer: 'https://a.example/', tenants: 'any' }),
    'jwt()',
    'tenants with nothing to read',
  );
  assertConfigError(
    () => jwt({ ...base, issuer: [TEMPLATE, 'https://a.example/'], tenants: 'any' }),
    'jwt()',
    'a template in a list',
  );
  assertConfigError(
    () => jwt({ ...base, issuer: `${ENTRA}/t-{tenantid}/v2.0`, tenants: 'any' }),
    'jwt()',
    'part of a segment',
  );
  assertConfigError(
    () => jwt({ ...base, issuer: 'https://{tenantid}.example/', tenants: 'any' }),
    'jwt()',
    'in the host',
  );
  assertConfigError(
    () => jwt({ ...base, issuer: 'https://a.example/', tenantClaim: '', tenants: 'any' }),
    'jwt()',
    'an empty tenantClaim',
  );
  assertConfigError(
    () => oidc({ issuer: TEMPLATE, tenants: 'any', audience: API }),
    'oidc()',
    'a template without discovery',
  );
  assertConfigError(
    () =>
      oidc({ issuer: TEMPLATE, tenants: 'any', audience: API, discovery: ORGANIZATIONS, discoveryUrl: ORGANIZATIONS }),
    'oidc()',
    'discovery and discoveryUrl',
  );
  assertConfigError(
    () => oidc({ issuer: TEMPLATE, discovery: ORGANIZATIONS, audience: API }),
    'oidc()',
    'oidc() without tenants',
  );
  // The same options in the right shape are accepted.
  assert.equal(
    typeof oidc({ issuer: TEMPLATE, discoveryUrl: ORGANIZATIONS, tenants: 'any', audience: API }),
    'function',
  );
  assert.equal(
    typeof jwt({ ...base, issuer: 'https://a.example/', tenantClaim: 'org_id', tenants: ['org_1'] }),
    'function',
  );
});

test('a principal made in code may carry a tenant only in the tenant id form', () => {
  assert.equal(completePrincipal({ id: 'u', type: 'user', tenant: 'acme' })?.tenant, 'acme');
  for (const tenant of ['', '..', 'a/b', 7]) assert.equal(completePrincipal({ id: 'u', type: 'user', tenant }), null);
  assert.equal('tenant' in (completePrincipal({ id: 'u', type: 'user' }) as object), false);
});
