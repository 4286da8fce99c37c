// Design §16, RFC 9449: DPoP on jwt() (and oidc()): every proof check of §4.3, the binding to
// cnf.jkt (RFC 7638), no downgrade in any mode, replay, the challenges and refusal reasons,
// dpopOrigin, the options checked at creation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthConfigError, oidc, routeAuth, wwwAuthenticateLines, type AuthFn } from '../../src/auth/index.ts';
import type { Refusal } from '../../src/auth/refusals.ts';
import type { JwtOptions } from '../../src/auth/jwt.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { jwkThumbprint } from '../../src/auth/dpop.ts';
import { memoryReplayStore } from '../../src/auth/dpop-replay.ts';
import { AUDIENCE, ISSUER, NOW, claims, signToken, testKey, type TestKey } from '../helpers/jwt.ts';
import { dpopProof, newJti, thumbprint } from '../helpers/dpop.ts';
import { assertConfigError } from '../helpers/config-error.ts';

const URL_ = 'https://agent.example.com/agent';
const tokenKey = await testKey('ES256');
const proofKey = await testKey('ES256');
const otherKey = await testKey('ES256');
const jkt = await thumbprint(proofKey.jwk);

const entry = (options: Partial<JwtOptions> = {}) =>
  jwtAt({ publicKey: tokenKey.jwk, issuer: ISSUER, audience: AUDIENCE, ...options }, () => NOW);
const boundToken = (extra: Record<string, unknown> = {}) =>
  signToken({ alg: 'ES256', typ: 'at+jwt' }, claims({ cnf: { jkt }, ...extra }), tokenKey.sign);
const plainToken = () => signToken({ alg: 'ES256' }, claims(), tokenKey.sign);

function request(authorization: string | undefined, proof?: string | string[], method = 'GET', url = URL_): Request {
  const headers = new Headers();
  if (authorization !== undefined) headers.set('authorization', authorization);
  for (const value of proof === undefined ? [] : Array.isArray(proof) ? proof : [proof]) headers.append('dpop', value);
  return new Request(url, { method, headers });
}

async function outcome(auth: AuthFn | AuthFn[], req: Request) {
  const refusals: Refusal[] = [];
  const result = await routeAuth(auth, { onRefused: (refusal) => void refusals.push(refusal) })(req);
  return {
    ok: result.ok,
    principal: result.ok ? result.principal : undefined,
    lines: result.ok ? [] : (wwwAuthenticateLines(result.response) ?? []),
    refusals,
  };
}

test("RFC 7638 §3.1: the thumbprint of the RFC's RSA key", async () => {
  const n =
    '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw';
  assert.equal(
    await jwkThumbprint({ kty: 'RSA', n, e: 'AQAB', alg: 'RS256', kid: '2011-04-29' }),
    'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs',
  );
  assert.equal(await jwkThumbprint({ kty: 'oct', k: 'abc' }), undefined);
});

test('a DPoP-bound token with a valid proof is accepted over the DPoP scheme: ES256, EdDSA, Ed25519, RS256 and PS256 proofs', async () => {
  for (const [alg, header] of [
    ['ES256', {}],
    ['EdDSA', {}],
    ['EdDSA', { alg: 'Ed25519' }],
    ['RS256', {}],
    ['PS256', {}],
  ] as const) {
    const key: TestKey = alg === 'ES256' ? proofKey : await testKey(alg);
    const token = await signToken({ alg: 'ES256' }, claims({ cnf: { jkt: await thumbprint(key.jwk) } }), tokenKey.sign);
    const proof = await dpopProof(key, { token, iat: NOW, header });
    const { ok, principal } = await outcome(entry(), request(`DPoP ${token}`, proof));
    assert.equal(ok, true, `${alg} ${JSON.stringify(header)}`);
    assert.equal(principal?.id, 'user-1');
    assert.deepEqual((principal?.claims as { cnf?: unknown }).cnf, { jkt: await thumbprint(key.jwk) });
  }
});

test('every proof check of RFC 9449 §4.3: each defect is refused with 401, DPoP error="invalid_dpop_proof", and onRefused hears dpop-proof', async () => {
  const token = await boundToken();
  const good = { token, iat: NOW };
  const hmacJwk = { kty: 'oct', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA' };
  const cases: [string, () => Promise<string | string[] | undefined>, string?][] = [
    ['no DPoP header', async () => undefined],
    ['two DPoP headers', async () => [await dpopProof(proofKey, good), await dpopProof(proofKey, good)]],
    ['not a JWS (two segments)', async () => (await dpopProof(proofKey, good)).split('.').slice(0, 2).join('.')],
    ['non-canonical base64url in the signature', async () => `${await dpopProof(proofKey, good)}x`],
    ['typ missing', async () => dpopProof(proofKey, { ...good, header: { typ: undefined } })],
    ['typ JWT', async () => dpopProof(proofKey, { ...good, header: { typ: 'JWT' } })],
    ['alg not among dpopAlgorithms (ES384)', async () => dpopProof(await testKey('ES384'), good)],
    [
      'alg none, no signature',
      async () => {
        const [h, p] = (await dpopProof(proofKey, { ...good, header: { alg: 'none' } })).split('.');
        return `${h}.${p}.`;
      },
    ],
    ['alg HS256 with an oct jwk', async () => dpopProof(proofKey, { ...good, header: { alg: 'HS256', jwk: hmacJwk } })],
    ['no jwk', async () => dpopProof(proofKey, { ...good, header: { jwk: undefined } })],
    [
      'a jwk with its private member d',
      async () => dpopProof(proofKey, { ...good, header: { jwk: proofKey.privateJwk } }),
    ],
    [
      'a jwk of another family than alg (EdDSA with an EC key)',
      async () => dpopProof(proofKey, { ...good, header: { alg: 'EdDSA' } }),
    ],
    ['a header with crit', async () => dpopProof(proofKey, { ...good, header: { crit: ['exp'] } })],
    ['a signature by another key', async () => dpopProof(proofKey, { ...good, signWith: otherKey })],
    ['jti missing', async () => dpopProof(proofKey, { ...good, claims: { jti: undefined } })],
    ['jti empty', async () => dpopProof(proofKey, { ...good, jti: '' })],
    ['jti of 257 characters', async () => dpopProof(proofKey, { ...good, jti: 'j'.repeat(257) })],
    ['jti a number', async () => dpopProof(proofKey, { ...good, claims: { jti: 7 } })],
    ['htm POST on a GET', async () => dpopProof(proofKey, { ...good, htm: 'POST' })],
    ['htm lower case', async () => dpopProof(proofKey, { ...good, htm: 'get' })],
    ['htu another path', async () => dpopProof(proofKey, { ...good, htu: 'https://agent.example.com/agent/chat' })],
    ['htu another host', async () => dpopProof(proofKey, { ...good, htu: 'https://evil.example.com/agent' })],
    ['htu another scheme', async () => dpopProof(proofKey, { ...good, htu: 'http://agent.example.com/agent' })],
    ['htu not a URL', async () => dpopProof(proofKey, { ...good, htu: '/agent' })],
    [
      'iat older than dpopMaxAgeSec + clockToleranceSec',
      async () => dpopProof(proofKey, { ...good, iat: NOW - 300 - 60 - 1 }),
    ],
    ['iat in the future beyond the tolerance', async () => dpopProof(proofKey, { ...good, iat: NOW + 61 })],
    ['iat missing', async () => dpopProof(proofKey, { token })],
    ['iat a string', async () => dpopProof(proofKey, { token, claims: { iat: String(NOW) } })],
    ['iat not finite', async () => dpopProof(proofKey, { token, claims: { iat: 1e400 } })],
    ['ath missing', async () => dpopProof(proofKey, { iat: NOW })],
    ['ath of another token', async () => dpopProof(proofKey, { iat: NOW, token: await plainToken() })],
    ["a proof key whose thumbprint is not the token's cnf.jkt", async () => dpopProof(otherKey, good)],
    ['a proof over 16 KiB', async () => dpopProof(proofKey, { ...good, claims: { pad: 'p'.repeat(16 * 1024) } })],
  ];
  for (const [what, make] of cases) {
    const { ok, lines, refusals } = await outcome(entry({ dpop: 'allowed' }), request(`DPoP ${token}`, await make()));
    assert.equal(ok, false, what);
    assert.deepEqual(
      lines,
      ['Bearer', 'DPoP error="invalid_dpop_proof", algs="ES256 EdDSA Ed25519 RS256 PS256"'],
      what,
    );
    assert.deepEqual(
      refusals.map((r) => r.reason),
      ['dpop-proof'],
      what,
    );
  }
});

test("the edges of the proof checks that hold: iat at the window's ends, htu with query and fragment, htu normalized, one DPoP header among others", async () => {
  const token = await boundToken();
  for (const fields of [
    { iat: NOW - 360 },
    { iat: NOW + 60 },
    { iat: NOW, htu: `${URL_}?x=1#f` },
    { iat: NOW, htu: 'HTTPS://Agent.Example.COM:443/agent' },
  ]) {
    const { ok } = await outcome(entry(), request(`DPoP ${token}`, await dpopProof(proofKey, { token, ...fields })));
    assert.equal(ok, true, JSON.stringify(fields));
  }
  const withQuery = request(
    `DPoP ${token}`,
    await dpopProof(proofKey, { token, iat: NOW }),
    'GET',
    `${URL_}?sessionId=s1`,
  );
  assert.equal((await outcome(entry(), withQuery)).ok, true, "the request's query is ignored too");
  const posted = request(`DPoP ${token}`, await dpopProof(proofKey, { token, iat: NOW, htm: 'POST' }), 'POST');
  assert.equal((await outcome(entry(), posted)).ok, true);
});

test('no downgrade (RFC 9449 §7.2): a bound token presented as Bearer is refused in every mode, with or without a proof; an unbound one with DPoP too', async () => {
  const token = await boundToken();
  const proof = await dpopProof(proofKey, { token, iat: NOW });
  for (const options of [{}, { dpop: 'allowed' as const }, { dpop: 'required' as const }]) {
    for (const proofHeader of [undefined, proof]) {
      const { ok, refusals } = await outcome(entry(options), request(`Bearer ${token}`, proofHeader));
      assert.equal(ok, false, JSON.stringify(options));
      assert.ok(['dpop-binding', 'dpop-required'].includes(refusals[0]!.reason));
    }
  }
  const unbound = await plainToken();
  const { ok, refusals } = await outcome(
    entry(),
    request(`DPoP ${unbound}`, await dpopProof(proofKey, { token: unbound, iat: NOW })),
  );
  assert.deepEqual([ok, refusals.map((r) => r.reason)], [false, ['dpop-binding']]);
  // Bound some other way (a certificate's x5t#S256): never usable here.
  const mtls = await signToken({ alg: 'ES256' }, claims({ cnf: { 'x5t#S256': 'abc' } }), tokenKey.sign);
  assert.equal((await outcome(entry(), request(`Bearer ${mtls}`))).ok, false);
  assert.equal(
    (await outcome(entry(), request(`DPoP ${mtls}`, await dpopProof(proofKey, { token: mtls, iat: NOW })))).ok,
    false,
  );
  // An unbound token as Bearer is as before, unless DPoP is required.
  assert.equal((await outcome(entry(), request(`Bearer ${unbound}`))).ok, true);
  const required = await outcome(entry({ dpop: 'required' }), request(`Bearer ${unbound}`));
  assert.deepEqual(
    [required.ok, required.refusals.map((r) => r.reason), required.lines],
    [false, ['dpop-required'], ['DPoP algs="ES256 EdDSA Ed25519 RS256 PS256"']],
  );
});

test('replay: a proof is accepted once; its second use is refused (dpop-replay, invalid_dpop_proof), with the token cache on or off', async () => {
  for (const cache of [false, true]) {
    const auth = entry({ dpop: 'allowed', cache });
    const token = await boundToken();
    const proof = await dpopProof(proofKey, { token, iat: NOW });
    assert.equal((await outcome(auth, request(`DPoP ${token}`, proof))).ok, true);
    const again = await outcome(auth, request(`DPoP ${token}`, proof));
    assert.deepEqual([again.ok, again.refusals.map((r) => r.reason)], [false, ['dpop-replay']], `cache ${cache}`);
    assert.match(again.lines.at(-1)!, /^DPoP error="invalid_dpop_proof"/);
    // A fresh proof for the same (cached) token: accepted; the proof is never cached.
    assert.equal(
      (await outcome(auth, request(`DPoP ${token}`, await dpopProof(proofKey, { token, iat: NOW })))).ok,
      true,
    );
    assert.equal(
      (await outcome(auth, request(`DPoP ${token}`, await dpopProof(proofKey, { token, iat: NOW, htm: 'POST' })))).ok,
      false,
      'a cached token still needs a proof that holds',
    );
    assert.equal(
      (await outcome(auth, request(`Bearer ${token}`))).ok,
      false,
      'a cached bound token is no bearer token',
    );
  }
});

test('one default replay store per process: a proof one entry accepted is refused by every other, two jwt() entries for two audiences in one list or in two handlers (design §26)', async () => {
  const token = await signToken({ alg: 'ES256' }, claims({ aud: ['api', 'mcp'], cnf: { jkt } }), tokenKey.sign);
  const forAudience = (audience: string) => entry({ audience, dpop: 'allowed' });
  // Two handlers, one for each audience: the proof is sent to both, twice.
  const [api, mcp] = [forAudience('api'), forAudience('mcp')];
  const proof = await dpopProof(proofKey, { token, iat: NOW });
  const answers: { ok: boolean; reasons: string[] }[] = [];
  for (const auth of [api, mcp, api, mcp]) {
    const { ok, refusals } = await outcome(auth, request(`DPoP ${token}`, proof));
    answers.push({ ok, reasons: refusals.map((r) => r.reason) });
  }
  assert.deepEqual(answers, [
    { ok: true, reasons: [] },
    { ok: false, reasons: ['dpop-replay'] },
    { ok: false, reasons: ['dpop-replay'] },
    { ok: false, reasons: ['dpop-replay'] },
  ]);
  // One list of both: the second entry does not take the proof the first already used.
  const list = [forAudience('api'), forAudience('mcp')];
  const again = await dpopProof(proofKey, { token, iat: NOW });
  const accepted = [];
  for (let i = 0; i < 4; i++) accepted.push((await outcome(list, request(`DPoP ${token}`, again))).ok);
  assert.deepEqual(accepted, [true, false, false, false]);
  // The token cache's path shares it too; an entry with a store of its own keeps its own.
  const cached = entry({ audience: 'mcp', cache: true });
  const third = await dpopProof(proofKey, { token, iat: NOW });
  assert.equal((await outcome(forAudience('api'), request(`DPoP ${token}`, third))).ok, true);
  assert.equal((await outcome(cached, request(`DPoP ${token}`, third))).ok, false);
  const own = entry({ audience: 'mcp', dpopReplay: memoryReplayStore(10) });
  assert.equal((await outcome(own, request(`DPoP ${token}`, third))).ok, true, 'its own store has not seen it');
});

test('the default replay store fails closed when full: new proofs refused, one warning; a store of your own is used', async () => {
  const store = memoryReplayStore(2);
  const warnings: unknown[] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => void warnings.push(args);
  try {
    const far = Date.now() / 1000 + 600;
    assert.deepEqual(
      [store.seen('a', far), store.seen('b', far), store.seen('c', far), store.seen('d', far), store.seen('a', far)],
      [false, false, true, true, true],
    );
    assert.equal(warnings.length, 1);
    assert.equal(store.seen('old', Date.now() / 1000 - 1), true, 'still full');
  } finally {
    console.warn = original;
  }
  const expiring = memoryReplayStore(1);
  assert.equal(expiring.seen('x', Date.now() / 1000 - 1), false);
  assert.equal(expiring.seen('y', Date.now() / 1000 + 60), false, 'an expired key leaves room');
  const seen: [string, number, number | undefined][] = [];
  const auth = entry({ dpopReplay: { seen: async (key, at, now) => (seen.push([key, at, now]), false) } });
  const token = await boundToken();
  assert.equal(
    (await outcome(auth, request(`DPoP ${token}`, await dpopProof(proofKey, { token, iat: NOW })))).ok,
    true,
  );
  assert.equal(seen.length, 1);
  assert.match(seen[0]![0], /^[A-Za-z0-9_-]{43}$/, 'the key is a digest: the store never holds the jti itself');
  // Past the last instant any instance accepts it (iat + 300 + 60 on a clock up to 60 s ahead), and the entry's own reading.
  assert.equal(seen[0]![1], NOW + 300 + 2 * 60 + 1);
  assert.equal(seen[0]![2], NOW);
});

test('dpopOrigin: behind a proxy, the proof names the origin the client called', async () => {
  const token = await boundToken();
  const proof = await dpopProof(proofKey, { token, iat: NOW, htu: 'https://api.example/agent' });
  const inner = request(`DPoP ${token}`, proof, 'GET', 'http://127.0.0.1:3000/agent');
  assert.equal((await outcome(entry(), inner)).ok, false);
  const behind = request(
    `DPoP ${token}`,
    await dpopProof(proofKey, { token, iat: NOW, htu: 'https://api.example/agent' }),
    'GET',
    'http://127.0.0.1:3000/agent',
  );
  assert.equal((await outcome(entry({ dpopOrigin: 'https://api.example' }), behind)).ok, true);
});

test('challenges: dpop set advertises DPoP algs="…" after Bearer (only DPoP when required), both with resource_metadata and scope; unset, the spec\'s Bearer', () => {
  const md = 'https://agent.example.com/.well-known/oauth-protected-resource/agent';
  assert.deepEqual(entry().challenges, [{ scheme: 'Bearer' }]);
  assert.deepEqual(entry({ dpop: 'allowed', dpopAlgorithms: ['ES256', 'EdDSA'] }).challenges, [
    { scheme: 'Bearer' },
    { scheme: 'DPoP', params: { algs: 'ES256 EdDSA' } },
  ]);
  assert.deepEqual(entry({ dpop: 'required', resourceMetadata: md, scopes: ['a'] }).challenges, [
    { scheme: 'DPoP', params: { algs: 'ES256 EdDSA Ed25519 RS256 PS256', resource_metadata: md, scope: 'a' } },
  ]);
  assert.deepEqual(
    oidc({ issuer: 'https://id.example.com', audience: AUDIENCE, dpop: 'allowed' }).challenges?.map((c) => c.scheme),
    ['Bearer', 'DPoP'],
  );
});

test('a DPoP request lacking scopes gets the insufficient_scope challenge with the DPoP scheme', async () => {
  const token = await boundToken({ scope: 'agent:chat' });
  const result = await routeAuth(entry({ dpop: 'allowed', scopes: ['agent:approve'] }))(
    request(`DPoP ${token}`, await dpopProof(proofKey, { token, iat: NOW })),
  );
  assert.ok(!result.ok);
  assert.equal(result.response.status, 403);
  assert.deepEqual(wwwAuthenticateLines(result.response), ['DPoP error="insufficient_scope", scope="agent:approve"']);
});

test('the DPoP options are checked at creation', () => {
  const base = { publicKey: tokenKey.jwk, audience: AUDIENCE };
  for (const [what, options] of [
    ['dpop neither allowed nor required', { dpop: 'maybe' }],
    ['a symmetric algorithm', { dpopAlgorithms: ['HS256'] }],
    ['none', { dpopAlgorithms: ['none'] }],
    ['no algorithm', { dpopAlgorithms: [] }],
    ['an unknown algorithm', { dpopAlgorithms: ['ES999'] }],
    ['a max age of 0', { dpopMaxAgeSec: 0 }],
    ['a max age that is not a number', { dpopMaxAgeSec: Number.NaN }],
    ['a max age over an hour', { dpopMaxAgeSec: 4000 }],
    ['an origin with a path', { dpopOrigin: 'https://api.example/agent' }],
    ['an origin with user info', { dpopOrigin: 'https://user@api.example' }],
    ['an origin that is not http(s)', { dpopOrigin: 'ftp://api.example' }],
    ['a replay store without seen()', { dpopReplay: {} }],
  ] as const) {
    assertConfigError(() => jwtAt({ ...base, ...options } as JwtOptions, () => NOW), 'jwt()', what);
  }
  assert.throws(
    () => jwtAt({ ...base, dpopp: 'required' } as never, () => NOW),
    (error) => error instanceof AuthConfigError && /did you mean "dpop"/.test(error.message),
  );
  assertConfigError(
    () => oidc({ issuer: 'https://id.example.com', audience: AUDIENCE, dpopAlgorithms: ['HS256'] }),
    'oidc()',
    'oidc too',
  );
});

test('the refusal reasons in order of progress: dpop-required, dpop-binding, dpop-proof, dpop-replay', async () => {
  const token = await boundToken();
  const unbound = await plainToken();
  const proof = await dpopProof(proofKey, { token, iat: NOW });
  const auth = entry({ dpop: 'required' });
  const heard = async (req: Request) => (await outcome(auth, req)).refusals.map((r) => r.reason);
  assert.deepEqual(await heard(request(`Bearer ${token}`)), ['dpop-required']);
  assert.deepEqual(await heard(request(`DPoP ${unbound}`, await dpopProof(proofKey, { token: unbound, iat: NOW }))), [
    'dpop-binding',
  ]);
  assert.deepEqual(await heard(request(`DPoP ${token}`, await dpopProof(proofKey, { token, iat: NOW, htm: 'PUT' }))), [
    'dpop-proof',
  ]);
  assert.deepEqual(await heard(request(`DPoP ${token}`, proof)), []);
  assert.deepEqual(await heard(request(`DPoP ${token}`, proof)), ['dpop-replay']);
  assert.equal(newJti() === newJti(), false);
});
