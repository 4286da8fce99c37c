// idJag() (design §27, enterprise-managed authorization; the Identity Assertion JWT Authorization
// Grant): leg 1 exchanges the token the principal presented at the IdP for an ID-JAG (RFC 8693,
// requested_token_type id-jag, audience the authorization server's issuer), leg 2 presents the
// ID-JAG at the authorization server (RFC 7523 jwt-bearer). What each leg sends, what it resolves
// to, the caller's own token only and never passed through, the errors naming their leg (never a
// token or a body), the cache, and the options checked at creation. Both token endpoints sit
// behind one fake fetch given through the test hook; the principals come from routeAuth at NOW.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { importJWK, jwtVerify } from 'jose';
import { idJag, TokenExchangeError, type IdJagOptions, type Principal } from '../../src/auth/index.ts';
import { NOW, testKey } from '../helpers/jwt.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import {
  ACCESS_TOKEN_TYPE,
  accessToken,
  fakeEndpoint,
  jwtEntry,
  principalOf,
  type Seen,
} from '../helpers/token-endpoint.ts';

const IDP_TOKEN = 'https://login.example.com/oauth2/token';
const AS_ISSUER = 'https://auth.crm.example.com';
const AS_TOKEN = 'https://auth.crm.example.com/token';
const ID_JAG_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';
const ID_JAG = 'eyJ0eXAiOiJvYXV0aC1pZC1qYWcrand0In0.the-id-jag.signature';
const FINAL = 'crm-access-token-0123456789';
const IDP_SECRET = 'idp-client-secret-0123456789';
const AS_SECRET = 'as-client-secret-0123456789';

type Answer = (seen: Seen) => Response | Promise<Response>;
/** The IdP's usual answer: an ID-JAG (RFC 8693 §2.2.1, token_type N_A). */
const idJagIssued = (overrides: Record<string, unknown> = {}, status = 200) =>
  Response.json(
    { access_token: ID_JAG, issued_token_type: ID_JAG_TYPE, token_type: 'N_A', expires_in: 300, ...overrides },
    { status },
  );
/** The authorization server's usual answer (RFC 6749 §5.1: no issued_token_type). */
const accessIssued = (overrides: Record<string, unknown> = {}, status = 200) =>
  Response.json(
    { access_token: FINAL, token_type: 'Bearer', expires_in: 600, scope: 'crm:read', ...overrides },
    { status },
  );

/** One fetch for both token endpoints (and any discovery document): `idp` and `server` answer their own. */
function endpoints(idp: Answer = () => idJagIssued(), server: Answer = () => accessIssued(), other?: Answer) {
  return fakeEndpoint((seen) =>
    seen.url === IDP_TOKEN
      ? idp(seen)
      : seen.url === AS_TOKEN
        ? server(seen)
        : (other?.(seen) ?? new Response(null, { status: 404 })),
  );
}

type Options = { idp?: Record<string, unknown>; authorizationServer?: Record<string, unknown>; cache?: unknown };
/** `idJag()` talking to `fetch`, its clock at NOW (milliseconds), with both legs' options merged over the usual. */
const idJagWith = (
  fetch: (url: string, init: RequestInit) => Promise<Response>,
  options: Options = {},
  now = () => NOW * 1000,
) =>
  idJag({
    idp: { tokenEndpoint: IDP_TOKEN, clientId: 'agent', clientSecret: IDP_SECRET, ...options.idp },
    authorizationServer: {
      issuer: AS_ISSUER,
      tokenEndpoint: AS_TOKEN,
      clientId: 'agent-at-crm',
      clientSecret: AS_SECRET,
      ...options.authorizationServer,
    },
    ...(options.cache !== undefined && { cache: options.cache }),
    _internal: { fetch, now },
  } as IdJagOptions);

/** A principal tied to a fresh token (an idJag() exists, so routeAuth keeps tokens). */
async function caller(extra: Record<string, unknown> = {}): Promise<{ principal: Principal; token: string }> {
  idJagWith(fakeEndpoint().fetch);
  const token = await accessToken(extra);
  return { principal: await principalOf(jwtEntry(), `Bearer ${token}`), token };
}

const rejectsWith = (promise: Promise<unknown>, code: string, status: number | undefined, leg: string) =>
  assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof TokenExchangeError, String(error));
    assert.deepEqual([error.code, error.status, error.leg], [code, status, leg]);
    return true;
  });

test("leg 1 exchanges the caller's presented token at the IdP for an ID-JAG (RFC 8693: requested_token_type id-jag, audience the authorization server's issuer, resource and scope); leg 2 presents the ID-JAG at the authorization server (RFC 7523 jwt-bearer); it resolves to the access token", async () => {
  const endpoint = endpoints();
  const exchange = idJagWith(endpoint.fetch);
  const { principal, token } = await caller();
  const result = await exchange(principal, {
    resource: 'https://crm.example.com/mcp',
    scope: ['crm:read', 'crm:write'],
  });
  assert.deepEqual(result, {
    accessToken: FINAL,
    tokenType: 'Bearer',
    expiresAt: NOW * 1000 + 600_000,
    scope: 'crm:read',
    issuedTokenType: ACCESS_TOKEN_TYPE,
  });
  assert.ok(Object.isFrozen(result));
  const [first, second, ...more] = endpoint.seen;
  assert.equal(more.length, 0);
  assert.deepEqual([first!.method, first!.url], ['POST', IDP_TOKEN]);
  assert.deepEqual(
    [...first!.form],
    [
      ['grant_type', 'urn:ietf:params:oauth:grant-type:token-exchange'],
      ['requested_token_type', ID_JAG_TYPE],
      ['audience', AS_ISSUER],
      ['subject_token', token],
      ['subject_token_type', ACCESS_TOKEN_TYPE],
      ['resource', 'https://crm.example.com/mcp'],
      ['scope', 'crm:read crm:write'],
    ],
  );
  assert.equal(first!.headers.get('authorization'), `Basic ${btoa(`agent:${IDP_SECRET}`)}`);
  assert.deepEqual([second!.method, second!.url], ['POST', AS_TOKEN]);
  assert.deepEqual(
    [...second!.form],
    [
      ['grant_type', 'urn:ietf:params:oauth:grant-type:jwt-bearer'],
      ['assertion', ID_JAG],
    ],
  );
  assert.equal(second!.headers.get('authorization'), `Basic ${btoa(`agent-at-crm:${AS_SECRET}`)}`);
  for (const sent of [first!, second!]) {
    assert.equal(sent.headers.get('content-type'), 'application/x-www-form-urlencoded');
    assert.equal(sent.init.redirect, 'manual', 'a redirect is never followed: the token would go with it');
  }
  // Without resource and scope, leg 1 names neither.
  await exchange(principal);
  assert.deepEqual(
    [...endpoint.seen[2]!.form.keys()],
    ['grant_type', 'requested_token_type', 'audience', 'subject_token', 'subject_token_type'],
  );
});

test("never passthrough: the caller's token goes to the IdP only; the authorization server sees the ID-JAG, and an IdP answer that is not an ID-JAG stops there (INVALID_RESPONSE, leg idp)", async () => {
  const { principal, token } = await caller();
  const sent = endpoints();
  await idJagWith(sent.fetch)(principal);
  const atServer = sent.seen.filter(({ url }) => url === AS_TOKEN);
  assert.equal(atServer.length, 1);
  for (const { form, headers } of atServer)
    assert.doesNotMatch(
      `${form} ${JSON.stringify([...headers])}`,
      new RegExp(token),
      'the caller token never reaches the authorization server',
    );
  // An IdP that answers an access token (or names no type) instead of an ID-JAG: nothing goes on to leg 2.
  for (const overrides of [
    { issued_token_type: ACCESS_TOKEN_TYPE, access_token: token },
    { issued_token_type: undefined },
  ]) {
    const endpoint = endpoints(() => idJagIssued(overrides));
    await rejectsWith(idJagWith(endpoint.fetch)(principal), 'INVALID_RESPONSE', 200, 'idp');
    assert.deepEqual(
      endpoint.seen.map(({ url }) => url),
      [IDP_TOKEN],
    );
  }
});

test('idp.subjectTokenType names what the caller presented for an IdP that asks for another type (an ID token)', async () => {
  const endpoint = endpoints();
  const idToken = 'urn:ietf:params:oauth:token-type:id_token';
  await idJagWith(endpoint.fetch, { idp: { subjectTokenType: idToken } })((await caller()).principal);
  assert.equal(endpoint.seen[0]!.form.get('subject_token_type'), idToken);
});

test("private_key_jwt at each leg: a client assertion of that leg's client, its audience the IdP's issuer (else its token endpoint) and the authorization server's issuer", async () => {
  const idpKey = await testKey('ES256');
  const serverKey = await testKey('EdDSA');
  for (const idpIssuer of [undefined, 'https://login.example.com']) {
    const endpoint = endpoints();
    const exchange = idJagWith(endpoint.fetch, {
      idp: {
        clientSecret: undefined,
        privateKey: idpKey.privateJwk,
        keyId: 'idp-key',
        ...(idpIssuer && { issuer: idpIssuer }),
      },
      authorizationServer: { clientSecret: undefined, privateKey: serverKey.privateJwk, keyId: 'crm-key' },
    });
    await exchange((await caller()).principal);
    const [first, second] = endpoint.seen;
    const checks = [
      [first!, idpKey, 'ES256', 'agent', idpIssuer ?? IDP_TOKEN, 'idp-key'],
      [second!, serverKey, serverKey.privateJwk.alg ?? 'EdDSA', 'agent-at-crm', AS_ISSUER, 'crm-key'],
    ] as const;
    for (const [sent, key, alg, client, audience, kid] of checks) {
      assert.equal(sent.headers.get('authorization'), null);
      assert.equal(sent.form.get('client_assertion_type'), 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      const verified = await jwtVerify(sent.form.get('client_assertion')!, await importJWK(key.jwk, alg), {
        issuer: client,
        subject: client,
        audience,
        currentDate: new Date(NOW * 1000),
      });
      assert.equal(verified.protectedHeader.kid, kid);
    }
  }
});

test('issuer alone: each leg discovers its own token endpoint (RFC 8414); a leg whose metadata names none fails UNAVAILABLE with that leg, and says so once without a token', async () => {
  const documents: Record<string, unknown> = {
    'https://login.example.com/.well-known/oauth-authorization-server': {
      issuer: 'https://login.example.com',
      token_endpoint: IDP_TOKEN,
    },
    'https://auth.crm.example.com/.well-known/oauth-authorization-server': {
      issuer: AS_ISSUER,
      token_endpoint: AS_TOKEN,
    },
  };
  const document = ({ url }: Seen) => Response.json(documents[url] ?? {}, { status: url in documents ? 200 : 404 });
  const endpoint = endpoints(undefined, undefined, document);
  const options = {
    idp: { tokenEndpoint: undefined, issuer: 'https://login.example.com' },
    authorizationServer: { tokenEndpoint: undefined },
  };
  const { principal, token } = await caller();
  await idJagWith(endpoint.fetch, options)(principal);
  assert.deepEqual(
    endpoint.seen.map(({ method, url }) => `${method} ${url}`),
    [
      'GET https://login.example.com/.well-known/oauth-authorization-server',
      `POST ${IDP_TOKEN}`,
      'GET https://auth.crm.example.com/.well-known/oauth-authorization-server',
      `POST ${AS_TOKEN}`,
    ],
  );
  const warned: unknown[] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => void warned.push(args);
  try {
    delete documents['https://auth.crm.example.com/.well-known/oauth-authorization-server'];
    const broken = endpoints(undefined, undefined, document);
    await rejectsWith(idJagWith(broken.fetch, options)(principal), 'UNAVAILABLE', undefined, 'authorization-server');
    assert.equal(warned.length, 1);
    assert.match(
      String((warned[0] as unknown[])[0]),
      /idJag\(\): authorizationServer: no metadata of .* names a usable token_endpoint/,
    );
    assert.doesNotMatch(JSON.stringify(warned), new RegExp(`${token}|${ID_JAG}`));
  } finally {
    console.warn = original;
  }
});

test("errors carry the OAuth error code, the HTTP status and the leg, never a token or the endpoint's body; a leg 1 failure never reaches the authorization server", async () => {
  const { principal, token } = await caller();
  const secrets = new RegExp(`${token}|${ID_JAG}|${IDP_SECRET}|${AS_SECRET}`);
  const refuse = (error: string, status: number) => () =>
    Response.json({ error, error_description: `about ${token} and ${ID_JAG}` }, { status });
  const cases: [Answer | undefined, Answer | undefined, string, number | undefined, 'idp' | 'authorization-server'][] =
    [
      [refuse('invalid_grant', 400), undefined, 'invalid_grant', 400, 'idp'],
      [refuse('invalid_target', 400), undefined, 'invalid_target', 400, 'idp'],
      [refuse('invalid_client', 401), undefined, 'invalid_client', 401, 'idp'],
      [() => new Response(`<html>${token}</html>`, { status: 500 }), undefined, 'INVALID_RESPONSE', 500, 'idp'],
      [
        () => new Response(null, { status: 307, headers: { location: AS_TOKEN } }),
        undefined,
        'INVALID_RESPONSE',
        307,
        'idp',
      ],
      [
        () => {
          throw new TypeError(`connect ECONNREFUSED ${token}`);
        },
        undefined,
        'UNAVAILABLE',
        undefined,
        'idp',
      ],
      [undefined, refuse('invalid_grant', 400), 'invalid_grant', 400, 'authorization-server'],
      [undefined, refuse('invalid_client', 401), 'invalid_client', 401, 'authorization-server'],
      [undefined, () => accessIssued({ access_token: undefined }), 'INVALID_RESPONSE', 200, 'authorization-server'],
      [undefined, () => accessIssued({ expires_in: 'soon' }), 'INVALID_RESPONSE', 200, 'authorization-server'],
      [
        undefined,
        () => new Response(null, { status: 302, headers: { location: 'https://evil.example/' } }),
        'INVALID_RESPONSE',
        302,
        'authorization-server',
      ],
    ];
  for (const [idp, server, code, status, leg] of cases) {
    const endpoint = endpoints(idp, server);
    const error = await idJagWith(endpoint.fetch)(principal).catch((caught: unknown) => caught);
    assert.ok(error instanceof TokenExchangeError, `${code}: ${String(error)}`);
    assert.deepEqual([error.code, error.status, error.leg], [code, status, leg]);
    const at = leg === 'idp' ? 'the IdP' : 'the authorization server';
    assert.equal(
      error.message,
      `token exchange failed at ${at}: ${code}${status === undefined ? '' : ` (HTTP ${status})`}`,
    );
    assert.equal(error.cause, undefined);
    assert.doesNotMatch(JSON.stringify({ ...error, message: error.message, stack: error.stack }), secrets);
    assert.deepEqual(
      endpoint.seen.map(({ url }) => url),
      leg === 'idp' ? [IDP_TOKEN] : [IDP_TOKEN, AS_TOKEN],
      'no redirect followed; no leg 2 after a failed leg 1',
    );
  }
});

test('each leg has its own timeoutMs: a leg that does not answer in time fails UNAVAILABLE with its leg, and its call is aborted', async () => {
  let aborted = 0;
  const hang: Answer = ({ init }) =>
    new Promise<Response>((_, reject) =>
      init.signal!.addEventListener('abort', () => {
        aborted++;
        reject(new Error('aborted'));
      }),
    );
  const { principal } = await caller();
  const timeouts = { idp: { timeoutMs: 50 }, authorizationServer: { timeoutMs: 50 } };
  await rejectsWith(idJagWith(endpoints(hang).fetch, timeouts)(principal), 'UNAVAILABLE', undefined, 'idp');
  await rejectsWith(
    idJagWith(endpoints(undefined, hang).fetch, timeouts)(principal),
    'UNAVAILABLE',
    undefined,
    'authorization-server',
  );
  assert.equal(aborted, 2);
});

test('access tokens are kept per (subject token, resource, scope) until 30 s before they expire; the cache is bounded (least recently used out first); cache: false runs both legs every time', async () => {
  let now = NOW * 1000;
  let issued = 0;
  const endpoint = endpoints(undefined, () => accessIssued({ access_token: `crm-token-${++issued}`, expires_in: 120 }));
  const exchange = idJagWith(endpoint.fetch, { cache: { maxEntries: 2 } }, () => now);
  const ada = await caller();
  const grace = await caller({ sub: 'grace' });
  const legs = () => endpoint.seen.length / 2;
  const first = await exchange(ada.principal);
  assert.equal(await exchange(ada.principal), first, 'kept');
  assert.equal(legs(), 1);
  await exchange(ada.principal, { scope: 'crm:read' });
  await exchange(ada.principal, { resource: 'https://crm.example.com/mcp' });
  assert.equal(legs(), 3, 'another scope or resource is another pair of calls');
  assert.notEqual(await exchange(ada.principal), first, 'the bound is two: the first went out');
  const forGrace = await exchange(grace.principal);
  assert.equal(
    endpoint.seen.at(-2)!.form.get('subject_token'),
    grace.token,
    "another caller's token is another exchange",
  );
  now += 89_000;
  assert.equal(await exchange(grace.principal), forGrace, 'still kept 31 s before it expires');
  now += 2_000;
  assert.notEqual(await exchange(grace.principal), forGrace, 'not within 30 s of expiresAt');
  const uncached = endpoints();
  const always = idJagWith(uncached.fetch, { cache: false });
  await always(ada.principal);
  await always(ada.principal);
  const noExpiry = endpoints(undefined, () => accessIssued({ expires_in: undefined }));
  const unkept = idJagWith(noExpiry.fetch);
  assert.equal((await unkept(ada.principal)).expiresAt, undefined);
  await unkept(ada.principal);
  assert.deepEqual([uncached.seen.length, noExpiry.seen.length], [4, 4]);
});

test('NO_SUBJECT_TOKEN (leg idp): no principal, a principal made in code, or one whose presented token has expired; neither endpoint is called', async () => {
  const endpoint = endpoints();
  const exchange = idJagWith(endpoint.fetch);
  const made: Principal = Object.freeze({ id: 'user-1', type: 'user', authenticator: 'jwt' });
  const late = await caller({ exp: NOW - 30 });
  for (const principal of [undefined, made, late.principal])
    await rejectsWith(exchange(principal), 'NO_SUBJECT_TOKEN', undefined, 'idp');
  assert.deepEqual(endpoint.seen, []);
});

test('nothing is logged: a whole exchange, and its failures, write no line', async () => {
  const lines: unknown[] = [];
  const originals = { ...console };
  for (const name of ['log', 'info', 'warn', 'error', 'debug'] as const)
    console[name] = (...args: unknown[]) => void lines.push(args);
  try {
    const { principal } = await caller();
    await idJagWith(endpoints().fetch)(principal);
    await idJagWith(endpoints(undefined, () => Response.json({ error: 'invalid_grant' }, { status: 400 })).fetch)(
      principal,
    ).catch(() => undefined);
  } finally {
    Object.assign(console, originals);
  }
  assert.deepEqual(lines, []);
});

test('idJag(): options are closed and checked at creation (AuthConfigError naming the leg and the option, never a secret)', async () => {
  const idp = { tokenEndpoint: IDP_TOKEN, clientId: 'agent', clientSecret: IDP_SECRET };
  const server = { issuer: AS_ISSUER, clientId: 'agent-at-crm', clientSecret: AS_SECRET };
  const make = (options: unknown) => () => idJag(options as IdJagOptions);
  const key = await testKey('ES256');
  const cases: [unknown, string, string][] = [
    [undefined, 'idJag()', 'no options'],
    [{ idp, authorizationServer: server, idpp: {} }, 'idJag()', 'an unknown option'],
    [{ authorizationServer: server }, 'idJag(): idp', 'no idp'],
    [{ idp }, 'idJag(): authorizationServer', 'no authorizationServer'],
    [{ idp: { ...idp, clientSecert: 'x' }, authorizationServer: server }, 'idJag(): idp', 'an unknown idp option'],
    [
      { idp, authorizationServer: { ...server, subjectTokenType: ACCESS_TOKEN_TYPE } },
      'idJag(): authorizationServer',
      'subjectTokenType at the authorization server',
    ],
    [
      { idp, authorizationServer: { ...server, issuer: undefined, tokenEndpoint: AS_TOKEN } },
      'idJag(): authorizationServer',
      'no issuer at the authorization server',
    ],
    [
      { idp, authorizationServer: { ...server, issuer: 'http://auth.crm.example.com' } },
      'idJag(): authorizationServer',
      'an http issuer off loopback',
    ],
    [
      { idp: { ...idp, subjectTokenType: 'access token' }, authorizationServer: server },
      'idJag(): idp',
      'a subjectTokenType that is no URI',
    ],
    [
      { idp: { ...idp, subjectTokenType: 42 }, authorizationServer: server },
      'idJag(): idp',
      'a subjectTokenType that is no string',
    ],
    [
      { idp: { clientId: 'agent', clientSecret: IDP_SECRET }, authorizationServer: server },
      'idJag(): idp',
      'neither tokenEndpoint nor issuer',
    ],
    [
      { idp: { ...idp, clientSecret: undefined }, authorizationServer: server },
      'idJag(): idp',
      'neither clientSecret nor privateKey',
    ],
    [
      { idp: { ...idp, privateKey: key.privateJwk }, authorizationServer: server },
      'idJag(): idp',
      'both clientSecret and privateKey',
    ],
    [{ idp, authorizationServer: { ...server, clientId: '' } }, 'idJag(): authorizationServer', 'an empty clientId'],
    [
      { idp, authorizationServer: { ...server, keyId: 'k' } },
      'idJag(): authorizationServer',
      'keyId with clientSecret',
    ],
    [
      { idp, authorizationServer: { ...server, clientSecret: undefined, privateKey: key.jwk } },
      'idJag(): authorizationServer',
      'a public JWK',
    ],
    [{ idp, authorizationServer: { ...server, timeoutMs: 0 } }, 'idJag(): authorizationServer', 'timeoutMs 0'],
    [
      { idp: { ...idp, tokenEndpoint: 'http://login.example.com/token' }, authorizationServer: server },
      'idJag(): idp',
      'an http endpoint off loopback',
    ],
    [{ idp, authorizationServer: server, cache: { maxEntries: 0 } }, 'idJag()', 'cache.maxEntries 0'],
    [
      { idp, authorizationServer: server, _internal: { clock: 1 } },
      'idJag(): _internal',
      'an unknown test hook option',
    ],
  ];
  for (const [options, helper, what] of cases) assertConfigError(make(options), helper, what, [IDP_SECRET, AS_SECRET]);
  const exchange = idJagWith(endpoints().fetch);
  const { principal } = await caller();
  for (const [request, what] of [
    [{ audience: AS_ISSUER }, 'an audience (the authorization server is the audience)'],
    [{ resource: 'https://crm.example.com/#frag' }, 'a resource with a fragment'],
    [{ resource: 'crm' }, 'a relative resource'],
    [{ scope: ['crm read'] }, 'a scope that is not a scope token'],
  ] as const)
    await assert.rejects(exchange(principal, request as never), (error: unknown) => {
      assert.match(String(error), /AuthConfigError: exchange\(\): /, what);
      return true;
    });
});
