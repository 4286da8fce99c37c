// tokenExchange() (design §27, RFC 8693): what it sends the token endpoint (subject_token: the
// token the principal presented; client_secret_basic or private_key_jwt), what it resolves to,
// discovery from `issuer` (RFC 8414, else OpenID discovery), the errors (the OAuth code and the
// status, never a token or the body), the bounds (no redirect, 64 KiB, the timeout), the cache,
// and the options checked at creation. The principals come from routeAuth with jwt() at NOW.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { importJWK, jwtVerify } from 'jose';
import { TokenExchangeError, type Principal } from '../../src/auth/index.ts';
import { tokenExchange, type TokenExchangeOptions } from '../../src/auth/token-exchange.ts';
import { NOW, testKey, toPem } from '../helpers/jwt.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import {
  ACCESS_TOKEN_TYPE,
  EXCHANGED,
  TOKEN_ENDPOINT,
  accessToken,
  exchangeWith,
  fakeEndpoint,
  issued,
  jwtEntry,
  principalOf,
} from '../helpers/token-endpoint.ts';

/** A principal tied to a fresh token; `exchangeWith` has been called before, so routeAuth keeps tokens. */
async function caller(extra: Record<string, unknown> = {}): Promise<{ principal: Principal; token: string }> {
  const token = await accessToken(extra);
  return { principal: await principalOf(jwtEntry(), `Bearer ${token}`), token };
}

const rejectsWith = (promise: Promise<unknown>, code: string, status?: number) =>
  assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof TokenExchangeError, String(error));
    assert.equal(error.code, code);
    assert.equal(error.status, status);
    return true;
  });

test('exchange(principal, { audience, resource, scope }) sends the token that principal presented as subject_token (RFC 8693 §2.1) and resolves to { accessToken, tokenType, expiresAt, scope, issuedTokenType }', async () => {
  const endpoint = fakeEndpoint();
  const exchange = exchangeWith(endpoint.fetch);
  const { principal, token } = await caller();
  const result = await exchange(principal, {
    audience: ['https://crm.example.com', 'crm'],
    resource: 'https://crm.example.com/api',
    scope: ['crm:read', 'crm:write'],
  });
  assert.deepEqual(result, {
    accessToken: EXCHANGED,
    tokenType: 'Bearer',
    expiresAt: NOW * 1000 + 600_000,
    scope: 'crm:read',
    issuedTokenType: ACCESS_TOKEN_TYPE,
  });
  assert.ok(Object.isFrozen(result));
  const [sent] = endpoint.seen;
  assert.equal(sent!.url, TOKEN_ENDPOINT);
  assert.equal(sent!.method, 'POST');
  assert.equal(sent!.headers.get('content-type'), 'application/x-www-form-urlencoded');
  assert.deepEqual(
    [...sent!.form],
    [
      ['grant_type', 'urn:ietf:params:oauth:grant-type:token-exchange'],
      ['subject_token', token],
      ['subject_token_type', ACCESS_TOKEN_TYPE],
      ['requested_token_type', ACCESS_TOKEN_TYPE],
      ['audience', 'https://crm.example.com'],
      ['audience', 'crm'],
      ['resource', 'https://crm.example.com/api'],
      ['scope', 'crm:read crm:write'],
    ],
  );
  assert.equal(sent!.init.redirect, 'manual', 'a redirect is never followed: the token would go with it');
});

test('client_secret_basic: the client id and secret are form-encoded, then joined for HTTP Basic (RFC 6749 §2.3.1)', async () => {
  const endpoint = fakeEndpoint();
  const exchange = exchangeWith(endpoint.fetch, { clientId: 'agent:one é', clientSecret: "p@ss word+/!'()*~" });
  await exchange((await caller()).principal);
  const authorization = endpoint.seen[0]!.headers.get('authorization')!;
  assert.equal(authorization, `Basic ${btoa('agent%3Aone+%C3%A9:p%40ss+word%2B%2F%21%27%28%29%2A%7E')}`);
  assert.equal(endpoint.seen[0]!.form.has('client_assertion'), false);
});

for (const [alg, form] of [
  ['ES256', 'a private JWK'],
  ['RS256', 'a private JWK'],
  ['EdDSA', 'a private JWK'],
  ['ES384', 'a CryptoKey'],
  ['PS256', 'a PKCS#8 PEM with algorithm'],
] as const) {
  test(`private_key_jwt (RFC 7523) with ${form} (${alg}): a client assertion signed with it, iss and sub the client, aud the issuer else the token endpoint, a fresh jti, a minute to live; no Authorization header`, async () => {
    const key = await testKey(alg);
    const pair = (await crypto.subtle.generateKey(
      alg === 'ES384'
        ? { name: 'ECDSA', namedCurve: 'P-384' }
        : { name: 'RSA-PSS', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
      true,
      ['sign', 'verify'],
    )) as CryptoKeyPair;
    const privateKey =
      form === 'a private JWK'
        ? key.privateJwk
        : form === 'a CryptoKey'
          ? pair.privateKey
          : toPem(new Uint8Array(await crypto.subtle.exportKey('pkcs8', pair.privateKey)), 'PRIVATE KEY');
    const publicJwk = form === 'a private JWK' ? key.jwk : await crypto.subtle.exportKey('jwk', pair.publicKey);
    // A JWK's own alg is the one signed with (Node exports Ed25519 keys with RFC 9864's alg "Ed25519").
    const signed = (form === 'a private JWK' && key.privateJwk.alg) || alg;
    for (const issuer of [undefined, 'https://id.example.com']) {
      const endpoint = fakeEndpoint();
      const exchange = exchangeWith(endpoint.fetch, {
        clientSecret: undefined,
        privateKey,
        keyId: 'agent-key-1',
        ...(form === 'a PKCS#8 PEM with algorithm' && { algorithm: 'PS256' }),
        ...(issuer !== undefined && { issuer }),
      });
      const { principal } = await caller();
      await exchange(principal);
      await exchange(principal, { audience: 'another' });
      const [first, second] = endpoint.exchanges();
      assert.equal(first!.headers.get('authorization'), null);
      assert.equal(first!.form.get('client_assertion_type'), 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      const assertion = first!.form.get('client_assertion')!;
      const verified = await jwtVerify(assertion, await importJWK(publicJwk, signed), {
        issuer: 'agent',
        subject: 'agent',
        audience: issuer ?? TOKEN_ENDPOINT,
        currentDate: new Date(NOW * 1000),
      });
      assert.deepEqual(verified.protectedHeader, { alg: signed, typ: 'JWT', kid: 'agent-key-1' });
      assert.equal(verified.payload.iat, NOW);
      const { iat, exp, jti } = verified.payload;
      assert.equal((exp as number) - (iat as number), 60);
      assert.ok(typeof jti === 'string' && jti.length >= 20);
      assert.notEqual(decodeJti(second!.form.get('client_assertion')!), jti, 'a fresh jti per call');
    }
  });
}

const decodeJti = (jws: string) => JSON.parse(atob(jws.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))).jti;

test('issuer alone: the token endpoint is discovered (RFC 8414 first, else OpenID discovery), only from a document of that exact issuer', async () => {
  const issuer = 'https://id.example.com/tenant';
  const documents: Record<string, unknown> = {
    'https://id.example.com/.well-known/oauth-authorization-server/tenant': {
      issuer: 'https://id.example.com/tenant/',
      token_endpoint: 'https://evil.example/token',
    },
    'https://id.example.com/tenant/.well-known/openid-configuration': {
      issuer,
      token_endpoint: 'https://id.example.com/tenant/token',
    },
  };
  const endpoint = fakeEndpoint(({ url, method }) =>
    method === 'GET' ? Response.json(documents[url] ?? {}, { status: url in documents ? 200 : 404 }) : issued(),
  );
  const exchange = exchangeWith(endpoint.fetch, { tokenEndpoint: undefined, issuer });
  await exchange((await caller()).principal);
  await exchange((await caller()).principal);
  assert.deepEqual(
    endpoint.seen.map(({ method, url }) => `${method} ${url}`),
    [
      'GET https://id.example.com/.well-known/oauth-authorization-server/tenant',
      'GET https://id.example.com/tenant/.well-known/openid-configuration',
      'POST https://id.example.com/tenant/token',
      'POST https://id.example.com/tenant/token',
    ],
    'the trailing-slash issuer is not this one; the endpoint is found once',
  );
});

test("issuer alone: no document naming a token endpoint (or one that is not https) fails with UNAVAILABLE; the caller's token goes nowhere", async () => {
  const warned: unknown[] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => void warned.push(args);
  try {
    const endpoint = fakeEndpoint(({ method }) =>
      method === 'GET'
        ? Response.json({ issuer: 'https://id.example.com', token_endpoint: 'http://id.example.com/token' })
        : issued(),
    );
    const exchange = exchangeWith(endpoint.fetch, { tokenEndpoint: undefined, issuer: 'https://id.example.com' });
    const { principal, token } = await caller();
    await rejectsWith(exchange(principal), 'UNAVAILABLE');
    assert.deepEqual(endpoint.exchanges(), []);
    assert.equal(warned.length, 1);
    assert.match(
      String((warned[0] as unknown[])[0]),
      /tokenExchange\(\): no metadata of .* names a usable token_endpoint for that issuer; exchanges fail with UNAVAILABLE/,
    );
    assert.doesNotMatch(JSON.stringify(warned), new RegExp(token));
  } finally {
    console.warn = original;
  }
});

test("errors carry the OAuth error code and the HTTP status, never a token or the endpoint's body", async () => {
  const { principal, token } = await caller();
  const cases: [Response | (() => never), string, number | undefined][] = [
    [issued({ error: 'invalid_grant', error_description: `bad token ${token}` }, 400), 'invalid_grant', 400],
    [Response.json({ error: 'invalid_client' }, { status: 401 }), 'invalid_client', 401],
    [Response.json({ error: 'invalid_target' }, { status: 400 }), 'invalid_target', 400],
    [Response.json({ error: `not"a code ${token}` }, { status: 400 }), 'INVALID_RESPONSE', 400],
    [new Response(`<html>${token}</html>`, { status: 500 }), 'INVALID_RESPONSE', 500],
    [Response.json({ token_type: 'Bearer', issued_token_type: ACCESS_TOKEN_TYPE }), 'INVALID_RESPONSE', 200],
    [issued({ issued_token_type: undefined }), 'INVALID_RESPONSE', 200],
    [issued({ expires_in: 'soon' }), 'INVALID_RESPONSE', 200],
    [new Response(null, { status: 302, headers: { location: 'https://evil.example/token' } }), 'INVALID_RESPONSE', 302],
    [new Response(`{"access_token":"${'x'.repeat(70_000)}"}`), 'INVALID_RESPONSE', 200],
    [
      () => {
        throw new TypeError(`connect ECONNREFUSED ${token}`);
      },
      'UNAVAILABLE',
      undefined,
    ],
  ];
  for (const [answer, code, status] of cases) {
    const endpoint = fakeEndpoint(() => (typeof answer === 'function' ? answer() : answer));
    const error = await exchangeWith(endpoint.fetch)(principal).catch((caught: unknown) => caught);
    assert.ok(error instanceof TokenExchangeError, `${code}: ${String(error)}`);
    assert.deepEqual([error.code, error.status], [code, status]);
    assert.equal(error.message, `token exchange failed: ${code}${status === undefined ? '' : ` (HTTP ${status})`}`);
    assert.equal(error.cause, undefined);
    assert.doesNotMatch(JSON.stringify({ ...error, message: error.message, stack: error.stack }), new RegExp(token));
    assert.equal(endpoint.seen.length, 1, 'a redirect is not followed');
  }
});

test('an endpoint that does not answer within timeoutMs (default 5 s) fails with UNAVAILABLE, and the call is aborted', async () => {
  let aborted = false;
  const endpoint = fakeEndpoint(
    ({ init }) =>
      new Promise<Response>((_, reject) =>
        init.signal!.addEventListener('abort', () => {
          aborted = true;
          reject(new Error('aborted'));
        }),
      ),
  );
  const started = Date.now();
  await rejectsWith(exchangeWith(endpoint.fetch, { timeoutMs: 100 })((await caller()).principal), 'UNAVAILABLE');
  assert.ok(Date.now() - started < 4_000);
  assert.equal(aborted, true);
});

test('results are kept per (subject token, audience, resource, scope) until 30 s before expiresAt; the cache is bounded (least recently used out first)', async () => {
  let now = NOW * 1000;
  const endpoint = fakeEndpoint(() => issued({ access_token: `exchanged-${endpoint.seen.length}`, expires_in: 120 }));
  const exchange = exchangeWith(endpoint.fetch, { cache: { maxEntries: 2 } }, () => now);
  const ada = await caller();
  const grace = await caller({ sub: 'grace' });
  const crm = { audience: 'crm' };
  const first = await exchange(ada.principal, crm);
  assert.equal(await exchange(ada.principal, crm), first, 'kept');
  assert.equal(endpoint.seen.length, 1);
  await exchange(ada.principal, { audience: 'crm', scope: 'crm:read' });
  await exchange(ada.principal, { audience: 'crm', resource: 'https://crm.example.com/' });
  assert.equal(endpoint.seen.length, 3, 'another scope or resource is another exchange');
  // The bound is two: the first entry went out.
  assert.notEqual(await exchange(ada.principal, crm), first);
  assert.equal(endpoint.seen.length, 4);
  const forGrace = await exchange(grace.principal, crm);
  assert.equal(
    endpoint.seen.at(-1)!.form.get('subject_token'),
    grace.token,
    "another caller's token is another exchange",
  );
  now += 89_000;
  assert.equal(await exchange(grace.principal, crm), forGrace, 'still kept 31 s before it expires');
  now += 2_000;
  assert.notEqual(await exchange(grace.principal, crm), forGrace, 'not within 30 s of expiresAt');
  // cache: false asks every time; a token without expires_in is never kept.
  const uncached = fakeEndpoint();
  const always = exchangeWith(uncached.fetch, { cache: false });
  await always(ada.principal);
  await always(ada.principal);
  const noExpiry = fakeEndpoint(() => issued({ expires_in: undefined }));
  const unkept = exchangeWith(noExpiry.fetch);
  assert.equal((await unkept(ada.principal)).expiresAt, undefined);
  await unkept(ada.principal);
  assert.deepEqual([uncached.seen.length, noExpiry.seen.length], [2, 2]);
});

test('NO_SUBJECT_TOKEN: no principal, a principal made in code, or one whose presented token has expired; the endpoint is never called', async () => {
  const endpoint = fakeEndpoint();
  const exchange = exchangeWith(endpoint.fetch);
  const made: Principal = Object.freeze({ id: 'user-1', type: 'user', authenticator: 'jwt' });
  // jwt() allows 60 s of skew: a token 30 s past its exp is accepted, and is not exchanged.
  const late = await caller({ exp: NOW - 30 });
  for (const principal of [undefined, made, late.principal]) await rejectsWith(exchange(principal), 'NO_SUBJECT_TOKEN');
  assert.deepEqual(endpoint.seen, []);
});

test('tokenExchange(): options are closed and checked at creation (AuthConfigError naming the option, never the secret)', async () => {
  const secret = 'agent-client-secret-do-not-print';
  const base = { tokenEndpoint: TOKEN_ENDPOINT, clientId: 'agent', clientSecret: secret };
  const make = (options: Record<string, unknown>) => () => tokenExchange(options as unknown as TokenExchangeOptions);
  const key = await testKey('ES256');
  const cases: [Record<string, unknown>, string][] = [
    [{ ...base, clientSecert: 'x' }, 'an unknown option (did you mean clientSecret?)'],
    [{ clientId: 'agent', clientSecret: secret }, 'neither tokenEndpoint nor issuer'],
    [{ ...base, clientId: '' }, 'an empty clientId'],
    [{ tokenEndpoint: TOKEN_ENDPOINT, clientId: 'agent' }, 'neither clientSecret nor privateKey'],
    [{ ...base, privateKey: key.privateJwk }, 'both clientSecret and privateKey'],
    [{ ...base, keyId: 'k' }, 'keyId with clientSecret'],
    [{ ...base, tokenEndpoint: 'http://id.example.com/token' }, 'an http endpoint off loopback'],
    [{ ...base, tokenEndpoint: 'https://user:pw@id.example.com/token' }, 'a URL with credentials'],
    [{ ...base, tokenEndpoint: undefined, issuer: 'not a url' }, 'an issuer that is no URL'],
    [{ ...base, cache: { maxEntrys: 3 } }, 'an unknown cache option'],
    [{ ...base, cache: { maxEntries: 0 } }, 'cache.maxEntries 0'],
    [{ ...base, timeoutMs: 0 }, 'timeoutMs 0'],
    [{ ...base, clientSecret: undefined, privateKey: key.jwk }, 'a public JWK as privateKey'],
    [{ ...base, clientSecret: undefined, privateKey: key.pem }, 'a public key PEM as privateKey'],
    [
      {
        ...base,
        clientSecret: undefined,
        privateKey: '-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----',
      },
      'a PKCS#1 PEM',
    ],
    [
      { ...base, clientSecret: undefined, privateKey: toPem(new Uint8Array(8), 'PRIVATE KEY') },
      'a PEM without algorithm',
    ],
    [
      { ...base, clientSecret: undefined, privateKey: key.privateJwk, algorithm: 'RS256' },
      'an algorithm the key cannot sign',
    ],
    [{ ...base, clientSecret: undefined, privateKey: key.privateJwk, algorithm: 'HS256' }, 'an HMAC algorithm'],
    [{ ...base, clientSecret: undefined, privateKey: key.publicKey }, 'a public CryptoKey'],
  ];
  for (const [options, what] of cases) assertConfigError(make(options), 'tokenExchange()', what, [secret]);
  const exchange = exchangeWith(fakeEndpoint().fetch);
  const { principal } = await caller();
  for (const [request, what] of [
    [{ audiance: 'crm' }, 'an unknown request key'],
    [{ resource: 'https://crm.example.com/#frag' }, 'a resource with a fragment'],
    [{ resource: 'crm' }, 'a relative resource'],
    [{ scope: ['crm read'] }, 'a scope that is not a scope token'],
    [{ audience: '' }, 'an empty audience'],
  ] as const)
    await assert.rejects(exchange(principal, request as never), (error: unknown) => {
      assert.match(String(error), /AuthConfigError: exchange\(\): /, what);
      return true;
    });
});

test('an endpoint that is not https is allowed on loopback only; the test hook _internal is taken', () => {
  for (const tokenEndpoint of ['http://127.0.0.1:8080/token', 'http://localhost/token', 'http://[::1]/token'])
    tokenExchange({ tokenEndpoint, clientId: 'a', clientSecret: 's' });
  tokenExchange({ tokenEndpoint: TOKEN_ENDPOINT, clientId: 'a', clientSecret: 's', _internal: {} });
});
