// jwt() with static keys: one test per numbered check of spec "jwt()", the principal, the
// challenge, and every configuration error of design §3 for the secret and publicKey sources.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { jwt, AuthError, AuthConfigError } from '../../src/auth/index.ts';
import type { JwtOptions } from '../../src/auth/jwt.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { jwsAlgorithm } from '../../src/auth/jws/algorithms.ts';
import { importVerifyKey, type KeySource } from '../../src/auth/jws/key-source.ts';
import { readPublicKey, type PublicKeySpec } from '../../src/auth/jws/keys.ts';
import { readCompactJws, verifiedKey } from '../../src/auth/jws/verify.ts';
import {
  AUDIENCE,
  ISSUER,
  NOW,
  SECRET,
  authenticate,
  bearer,
  capturingErrors,
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
let hs384: Sign;
let rsa: TestKey;
let es256: TestKey;
let es384: TestKey;

before(async () => {
  [hs256, hs384, rsa, es256, es384] = await Promise.all([
    hmacSigner(SECRET, 'HS256'),
    hmacSigner(SECRET, 'HS384'),
    testKey('RS256'),
    testKey('ES256'),
    testKey('ES384'),
  ]);
});

const hsToken = (payload: unknown = claims(), header: unknown = { alg: 'HS256', typ: 'JWT' }) =>
  signToken(header, payload, hs256);

describe('jwt() check 1: the header alg must be in algorithms; none and crit are refused', () => {
  test('an alg outside the configured algorithms skips (401); an allowed alg is accepted', async () => {
    const entry = at({ secret: SECRET, algorithms: ['HS256'], ...base });
    assert.equal(await statusOf(entry, await hsToken()), 200);
    assert.equal(await statusOf(entry, await signToken({ alg: 'HS384' }, claims(), hs384)), 401);
    assert.equal(
      await statusOf(at({ secret: SECRET, ...base }), await signToken({ alg: 'HS384' }, claims(), hs384)),
      200,
    );
  });

  test('alg is compared exactly: "hs256" is not HS256', async () => {
    const entry = at({ secret: SECRET, ...base });
    assert.equal(await statusOf(entry, await hsToken(claims(), { alg: 'hs256' })), 401);
  });

  test('alg none is always refused', async () => {
    const entry = at({ secret: SECRET, ...base });
    assert.equal(await statusOf(entry, await signToken({ alg: 'none' }, claims())), 401);
    assert.equal(await statusOf(entry, await hsToken(claims(), { alg: 'none' })), 401);
  });

  test('a header that marks an extension crit is refused', async () => {
    const entry = at({ secret: SECRET, ...base });
    assert.equal(await statusOf(entry, await hsToken(claims(), { alg: 'HS256', exp: 1, crit: ['exp'] })), 401);
    assert.equal(await statusOf(entry, await hsToken(claims(), { alg: 'HS256', crit: [] })), 401);
    assert.equal(await statusOf(entry, await hsToken(claims(), { alg: 'HS256' })), 200);
  });
});

describe('jwt() check 2: the algorithm must fit the key', () => {
  test('a public key is never used as an HMAC secret whatever the header says', async () => {
    const entry = at({ publicKey: rsa.pem, ...base });
    assert.equal(await statusOf(entry, await signToken({ alg: 'RS256' }, claims(), rsa.sign)), 200);
    for (const material of [rsa.pem, rsa.spki, new TextEncoder().encode(JSON.stringify(rsa.jwk))]) {
      const forged = await signToken({ alg: 'HS256' }, claims(), await hmacSigner(material as Uint8Array<ArrayBuffer>));
      assert.equal(await statusOf(entry, forged), 401);
    }
  });

  test('a token of another key family or curve skips', async () => {
    const rsaEntry = at({ publicKey: rsa.jwk, ...base });
    const p256Entry = at({ publicKey: es256.jwk, ...base });
    assert.equal(await statusOf(rsaEntry, await signToken({ alg: 'ES256' }, claims(), es256.sign)), 401);
    assert.equal(await statusOf(p256Entry, await signToken({ alg: 'ES384' }, claims(), es384.sign)), 401);
    assert.equal(await statusOf(p256Entry, await signToken({ alg: 'RS256' }, claims(), rsa.sign)), 401);
    assert.equal(await statusOf(p256Entry, await signToken({ alg: 'ES256' }, claims(), es256.sign)), 200);
  });
});

describe('jwt() check 3: exp is required; nbf and iat are honored; all allow clockToleranceSec', () => {
  const entry = () => at({ secret: SECRET, ...base });

  test('a token without exp skips', async () => {
    assert.equal(await statusOf(entry(), await hsToken(claims({ exp: undefined }))), 401);
    assert.equal(await statusOf(entry(), await hsToken(claims())), 200);
  });

  test('exp in the past beyond the tolerance skips; within the default 60 s it is accepted', async () => {
    assert.equal(await statusOf(entry(), await hsToken(claims({ exp: NOW - 60 }))), 401);
    assert.equal(await statusOf(entry(), await hsToken(claims({ exp: NOW - 59 }))), 200);
  });

  test('nbf in the future beyond the tolerance skips; within it is accepted', async () => {
    assert.equal(await statusOf(entry(), await hsToken(claims({ nbf: NOW + 61 }))), 401);
    assert.equal(await statusOf(entry(), await hsToken(claims({ nbf: NOW + 60 }))), 200);
  });

  test('iat in the future beyond the tolerance skips; within it is accepted', async () => {
    assert.equal(await statusOf(entry(), await hsToken(claims({ iat: NOW + 61 }))), 401);
    assert.equal(await statusOf(entry(), await hsToken(claims({ iat: NOW + 60 }))), 200);
  });

  test('clockToleranceSec sets the skew for exp, nbf and iat', async () => {
    const strict = at({ secret: SECRET, clockToleranceSec: 0, ...base });
    assert.equal(await statusOf(strict, await hsToken(claims({ exp: NOW }))), 401);
    assert.equal(await statusOf(strict, await hsToken(claims({ exp: NOW + 1 }))), 200);
    assert.equal(await statusOf(strict, await hsToken(claims({ nbf: NOW + 1 }))), 401);
    assert.equal(await statusOf(strict, await hsToken(claims({ iat: NOW + 1 }))), 401);
    const loose = at({ secret: SECRET, clockToleranceSec: 300, ...base });
    assert.equal(await statusOf(loose, await hsToken(claims({ exp: NOW - 299, nbf: NOW + 300, iat: NOW + 300 }))), 200);
  });
});

describe('jwt() check 4: when issuer is set, iss must equal one of its values exactly', () => {
  test('another issuer, a trailing slash or a missing iss skips; an exact one is accepted', async () => {
    const entry = at({ secret: SECRET, ...base });
    assert.equal(await statusOf(entry, await hsToken(claims())), 200);
    assert.equal(await statusOf(entry, await hsToken(claims({ iss: `${ISSUER}/` }))), 401);
    assert.equal(await statusOf(entry, await hsToken(claims({ iss: 'https://ISSUER.example.com' }))), 401);
    assert.equal(await statusOf(entry, await hsToken(claims({ iss: undefined }))), 401);
  });

  test('a list of issuers accepts each of them', async () => {
    const entry = at({ secret: SECRET, issuer: ['https://a.example', 'https://b.example'], audience: AUDIENCE });
    assert.equal(await statusOf(entry, await hsToken(claims({ iss: 'https://a.example' }))), 200);
    assert.equal(await statusOf(entry, await hsToken(claims({ iss: 'https://b.example' }))), 200);
    assert.equal(await statusOf(entry, await hsToken(claims({ iss: 'https://c.example' }))), 401);
  });

  test('without issuer any string iss is accepted', async () => {
    const entry = at({ secret: SECRET, audience: AUDIENCE });
    assert.equal(await statusOf(entry, await hsToken(claims({ iss: 'https://anyone.example' }))), 200);
  });
});

describe('jwt() check 5: aud (string or list) must contain one of audience, unless allowAnyAudience', () => {
  test('aud as a string or a list containing a configured audience is accepted; others skip', async () => {
    const entry = at({ secret: SECRET, issuer: ISSUER, audience: ['agent-api', 'other-api'] });
    assert.equal(await statusOf(entry, await hsToken(claims({ aud: 'other-api' }))), 200);
    assert.equal(await statusOf(entry, await hsToken(claims({ aud: ['x', 'agent-api'] }))), 200);
    assert.equal(await statusOf(entry, await hsToken(claims({ aud: 'x' }))), 401);
    assert.equal(await statusOf(entry, await hsToken(claims({ aud: ['x', 'y'] }))), 401);
    assert.equal(await statusOf(entry, await hsToken(claims({ aud: [] }))), 401);
    assert.equal(await statusOf(entry, await hsToken(claims({ aud: undefined }))), 401);
  });

  test('allowAnyAudience: true skips the audience check', async () => {
    const entry = at({ secret: SECRET, issuer: ISSUER, allowAnyAudience: true });
    assert.equal(await statusOf(entry, await hsToken(claims({ aud: 'someone-else' }))), 200);
    assert.equal(await statusOf(entry, await hsToken(claims({ aud: undefined }))), 200);
  });
});

describe('jwt() check 7: the default principal, and the principal mapper', () => {
  test('default principal: id = sub, type user, authenticator jwt, issuer = iss, claims = verified claims, frozen', async () => {
    const payload = claims({ scope: 'read', nested: { roles: ['a'] } });
    const result = await authenticate(at({ secret: SECRET, ...base }), await hsToken(payload));
    assert.ok(result.ok);
    const { principal } = result;
    assert.deepEqual(
      { ...principal, claims: { ...principal.claims } },
      {
        id: 'user-1',
        type: 'user',
        authenticator: 'jwt',
        issuer: ISSUER,
        claims: payload,
      },
    );
    assert.ok(Object.isFrozen(principal) && Object.isFrozen(principal.claims));
    assert.ok(Object.isFrozen((principal.claims as any).nested.roles));
  });

  test('a token without sub (or an empty or non-string sub) skips', async () => {
    const entry = at({ secret: SECRET, ...base });
    assert.equal(await statusOf(entry, await hsToken(claims({ sub: undefined }))), 401);
    assert.equal(await statusOf(entry, await hsToken(claims({ sub: '' }))), 401);
    assert.equal(await statusOf(entry, await hsToken(claims({ sub: 42 }))), 401);
  });

  test('a principal mapper replaces the default principal; its authenticator defaults to jwt', async () => {
    const entry = at({
      secret: SECRET,
      ...base,
      principal: (c) => ({ id: `svc:${String(c.client_id)}`, type: 'service' }),
    });
    const result = await authenticate(entry, await hsToken(claims({ sub: undefined, client_id: 'ci' })));
    assert.ok(result.ok);
    assert.deepEqual(result.principal, { id: 'svc:ci', type: 'service', authenticator: 'jwt' });
  });

  test('an asynchronous mapper works; a mapper returning null skips', async () => {
    const asyncEntry = at({
      secret: SECRET,
      ...base,
      principal: async (c) => ({ id: String(c.sub), type: 'user', authenticator: 'corp' }),
    });
    const result = await authenticate(asyncEntry, await hsToken());
    assert.ok(result.ok);
    assert.equal(result.principal.authenticator, 'corp');
    const skipping = at({ secret: SECRET, ...base, principal: () => null });
    assert.equal(await statusOf(skipping, await hsToken()), 401);
  });

  test('a mapper throwing AuthError(403) stops the list with 403', async () => {
    const entry = at({
      secret: SECRET,
      ...base,
      principal: () => {
        throw new AuthError(403);
      },
    });
    assert.equal(await statusOf([entry, () => ({ id: 'later', type: 'user' })], await hsToken()), 403);
  });

  test('a mapper throwing anything else, or returning an invalid principal, is a 500', async () => {
    const throwing = at({
      secret: SECRET,
      ...base,
      principal: () => {
        throw new Error('bug');
      },
    });
    const invalid = at({ secret: SECRET, ...base, principal: () => ({ id: '', type: 'user' }) });
    const { value, logged } = await capturingErrors(async () => [
      await statusOf(throwing, await hsToken()),
      await statusOf(invalid, await hsToken()),
    ]);
    assert.deepEqual(value, [500, 500]);
    assert.equal(logged.length, 2);
  });

  test('the mapper is not called for a token that fails a check', async () => {
    let calls = 0;
    const entry = at({ secret: SECRET, ...base, principal: (c) => (calls++, { id: String(c.sub), type: 'user' }) });
    assert.equal(await statusOf(entry, await hsToken(claims({ exp: NOW - 3600 }))), 401);
    assert.equal(calls, 0);
  });
});

describe('jwt() keys', () => {
  test('a JWK alg restricts the key to that algorithm', async () => {
    const entry = at({ publicKey: { ...rsa.jwk, alg: 'RS256' }, ...base });
    assert.equal(await statusOf(entry, await signToken({ alg: 'RS256' }, claims(), rsa.sign)), 200);
    const rs384 = await testKey('RS384');
    const other = at({ publicKey: { ...rs384.jwk, alg: 'RS256' }, ...base });
    assert.equal(await statusOf(other, await signToken({ alg: 'RS384' }, claims(), rs384.sign)), 401);
    assert.throws(
      () => jwt({ publicKey: { ...rsa.jwk, alg: 'RS256' }, algorithms: ['RS384'], ...base }),
      AuthConfigError,
    );
  });

  test('keys are imported once, on first use, never per request', async () => {
    const original = crypto.subtle.importKey;
    let imports = 0;
    crypto.subtle.importKey = function (this: SubtleCrypto, ...args: Parameters<SubtleCrypto['importKey']>) {
      imports++;
      return original.apply(this, args);
    } as SubtleCrypto['importKey'];
    try {
      const entry = at({ publicKey: es256.pem, ...base });
      const hs = at({ secret: SECRET, ...base });
      assert.equal(imports, 0, 'creation does no async work (Workers forbid it at start-up)');
      const token = await signToken({ alg: 'ES256' }, claims(), es256.sign);
      await Promise.all([statusOf(entry, token), statusOf(entry, token)]);
      for (let i = 0; i < 5; i++) assert.equal(await statusOf(entry, token), 200);
      assert.equal(imports, 1);
      for (let i = 0; i < 3; i++) assert.equal(await statusOf(hs, await hsToken()), 200);
      assert.equal(await statusOf(hs, await signToken({ alg: 'HS384' }, claims(), hs384)), 200);
      assert.equal(imports, 3, 'one import per HMAC algorithm used');
    } finally {
      crypto.subtle.importKey = original;
    }
  });
});

describe('jwt(): requests in flight together', () => {
  // The parser keeps a token's bytes in buffers the next token overwrites; Web Crypto must have
  // copied them when verify() returned. Every request below starts before any is awaited.
  test('each of many concurrent tokens, valid and tampered, RS256, ES256 and HS256 mixed, gets its own answer', async () => {
    const entries = {
      RS256: at({ publicKey: rsa.jwk, ...base }),
      ES256: at({ publicKey: es256.jwk, ...base }),
      HS256: at({ secret: SECRET, ...base }),
    };
    const signers: Record<keyof typeof entries, Sign> = { RS256: rsa.sign, ES256: es256.sign, HS256: hs256 };
    const cases = await Promise.all(
      Array.from({ length: 90 }, async (_, i) => {
        const alg = (['RS256', 'ES256', 'HS256'] as const)[i % 3]!;
        const token = await signToken({ alg, typ: 'JWT' }, claims({ sub: `user-${i}` }), signers[alg]);
        // Every fourth token has its signature's first character changed: it must skip.
        const tampered = i % 4 === 3;
        const sent = tampered
          ? token.replace(/\.(.)([^.]*)$/, (_, c: string, rest: string) => `.${c === 'A' ? 'B' : 'A'}${rest}`)
          : token;
        return { alg, sent, expected: tampered ? null : `user-${i}` };
      }),
    );
    for (let round = 0; round < 3; round++) {
      const pending = cases.map(({ alg, sent }) => entries[alg](bearer(sent)));
      const results = await Promise.all(pending);
      results.forEach((result, i) =>
        assert.equal(result?.id ?? null, cases[i]!.expected, `token ${i} (${cases[i]!.alg}), round ${round}`),
      );
    }
  });

  test('a key list tried in order: the bytes are loaded again for the second key after other tokens were parsed', async () => {
    const other = await testKey('RS256');
    const algorithm = jwsAlgorithm('RS256')!;
    const [wrong, right] = await Promise.all(
      [other, rsa].map((key) => importVerifyKey(readPublicKey(key.jwk) as PublicKeySpec, algorithm)),
    );
    const source: KeySource = { keysFor: () => [wrong!, right!] };
    const tokens = await Promise.all(
      Array.from({ length: 40 }, (_, i) => signToken({ alg: 'RS256' }, { sub: `user-${i}` }, rsa.sign)),
    );
    const policy = { algorithms: new Set(['RS256']), typ: undefined };
    // Each token parsed, then all verified at once: each await finds the shared buffers holding another token.
    const parsed = tokens.map((token) => readCompactJws(token, 0, policy)!);
    const results = await Promise.all(
      parsed.map(async (jws) => ((await verifiedKey(jws, source)) === right ? JSON.parse(jws.payload).sub : null)),
    );
    assert.deepEqual(
      results,
      tokens.map((_, i) => `user-${i}`),
    );
    const forged = await signToken({ alg: 'RS256' }, { sub: 'mallory' }, (await testKey('RS256')).sign);
    assert.equal(await verifiedKey(readCompactJws(forged, 0, policy)!, source), null);
  });
});

describe('jwt(): failures, challenges and two issuers', () => {
  test('every failed check ends in the same 401: JSON body, Bearer challenge, Cache-Control no-store', async () => {
    const entry = at({ secret: SECRET, ...base });
    const failures = [
      await hsToken(claims({ exp: NOW - 3600 })),
      await hsToken(claims({ aud: 'other' })),
      await hsToken(claims({ iss: 'https://other.example' })),
      `${(await hsToken()).slice(0, -2)}AA`,
      'not-a-jwt',
    ];
    const seen = new Set<string>();
    for (const token of failures) {
      const result = await authenticate(entry, token);
      assert.ok(!result.ok);
      assert.equal(result.response.status, 401);
      assert.equal(
        result.response.headers.get('www-authenticate'),
        'Bearer error="invalid_token"',
        'a presented bearer token that failed: invalid_token, never which check',
      );
      assert.equal(result.response.headers.get('cache-control'), 'no-store');
      seen.add(await result.response.text());
    }
    assert.deepEqual([...seen], ['{"error":"Unauthorized"}']);
  });

  test('the entry advertises the Bearer challenge', () => {
    assert.deepEqual(jwt({ secret: SECRET, ...base }).challenges, [{ scheme: 'Bearer' }]);
  });

  test('a request without a bearer token skips', async () => {
    const entry = at({ secret: SECRET, ...base });
    assert.equal(await entry(new Request('https://agent.example/')), null);
    assert.equal(
      await entry(new Request('https://agent.example/', { headers: { authorization: `Basic ${btoa('a:b')}` } })),
      null,
    );
  });

  test('the Bearer scheme is case-insensitive (ASCII only) and may be followed by several spaces; anything else around the token skips', async () => {
    const entry = at({ secret: SECRET, ...base });
    const token = await hsToken();
    const read = (value: string) => entry(new Request('https://agent.example/', { headers: { authorization: value } }));
    for (const value of [`Bearer ${token}`, `bearer ${token}`, `BEARER ${token}`, `bEaReR    ${token}`]) {
      assert.equal((await read(value))?.id, 'user-1', value.slice(0, 12));
    }
    const [h, p, s] = token.split('.') as [string, string, string];
    const bad = [
      `Bearer\t${token}`,
      `Bearer${token}`,
      `Bearer ${token} x`,
      `Bearer  `,
      `Bearers ${token}`,
      `\u00c2earer ${token}`,
      `\u00e2earer ${token}`,
      `Bearer ${token}=`,
      `Bearer ${h}.${p}.${s}.`,
      `Bearer .${h}.${p}.${s}`,
      `Bearer ${h}.${p}.~${s}`,
      `Bearer ${h}.${p}`,
      `Bearer ${token.replace('.', '..')}`,
    ];
    for (const value of bad) assert.equal(await read(value), null, JSON.stringify(value.slice(0, 24)));
  });

  test('two jwt() entries for two issuers in one list both work; anything else ends in the same 401', async () => {
    const first = at({ secret: SECRET, issuer: 'https://one.example', audience: AUDIENCE });
    const second = at({ publicKey: es256.pem, issuer: 'https://two.example', audience: AUDIENCE });
    const list = [first, second];
    const one = await authenticate(list, await hsToken(claims({ iss: 'https://one.example', sub: 'ada' })));
    const two = await authenticate(
      list,
      await signToken({ alg: 'ES256' }, claims({ iss: 'https://two.example', sub: 'ada' }), es256.sign),
    );
    assert.ok(one.ok && two.ok);
    assert.deepEqual([one.principal.issuer, two.principal.issuer], ['https://one.example', 'https://two.example']);
    assert.equal(one.principal.id, two.principal.id);
    const crossed = [
      await hsToken(claims({ iss: 'https://two.example' })),
      await signToken({ alg: 'ES256' }, claims({ iss: 'https://one.example' }), es256.sign),
      await signToken({ alg: 'ES256' }, claims({ iss: 'https://two.example' }), es384.sign),
    ];
    for (const token of crossed) {
      const result = await authenticate(list, token);
      assert.ok(!result.ok);
      assert.equal(result.response.status, 401);
      assert.equal(await result.response.text(), '{"error":"Unauthorized"}');
    }
  });

  test('jwt() with the real clock accepts a fresh token and skips an expired one', async () => {
    const now = Math.floor(Date.now() / 1000);
    const entry = jwt({ secret: SECRET, ...base });
    assert.equal(await statusOf(entry, await hsToken(claims({ exp: now + 600, iat: now }))), 200);
    assert.equal(await statusOf(entry, await hsToken(claims({ exp: now - 600, iat: now - 1200 }))), 401);
  });
});

describe('jwt() configuration errors (AGENT_AUTH_CONFIG_INVALID at creation)', () => {
  function refuses(options: unknown, option: RegExp, secret?: string): void {
    assert.throws(
      () => jwt(options as JwtOptions),
      (error: unknown) => {
        assert.ok(error instanceof AuthConfigError);
        assert.equal(error.code, 'AGENT_AUTH_CONFIG_INVALID');
        assert.match(error.message, /^jwt\(\): /);
        assert.match(error.message, option);
        if (secret !== undefined) assert.ok(!error.message.includes(secret), 'the message must not echo the secret');
        return true;
      },
    );
  }

  test('no key source, or more than one', () => {
    refuses({ ...base }, /key source.*got none/);
    refuses({ secret: SECRET, publicKey: es256.pem, ...base }, /got secret and publicKey/, SECRET);
  });

  test('an HMAC secret under 32 bytes (UTF-8 bytes of the string)', () => {
    refuses({ secret: 'short-secret', ...base }, /secret must be at least 32 bytes \(got 12\)/, 'short-secret');
    const fifteenChars = 'é'.repeat(15); // 30 bytes
    refuses({ secret: fifteenChars, ...base }, /secret .*\(got 30\)/, fifteenChars);
    assert.doesNotThrow(() => jwt({ secret: 'é'.repeat(16), ...base }));
    refuses({ secret: 42, ...base }, /secret must be a string or a Uint8Array/);
    refuses({ secret: new Uint8Array(31), ...base }, /secret must be at least 32 bytes \(got 31\)/);
  });

  test('an algorithms entry outside the key family or curve', () => {
    refuses(
      { secret: SECRET, algorithms: ['RS256'], ...base },
      /algorithms entry "RS256" does not fit the secret/,
      SECRET,
    );
    refuses(
      { publicKey: rsa.pem, algorithms: ['HS256'], ...base },
      /algorithms entry "HS256" does not fit the publicKey/,
    );
    refuses({ publicKey: rsa.jwk, algorithms: ['ES256'], ...base }, /"ES256" does not fit the publicKey/);
    refuses(
      { publicKey: es256.pem, algorithms: ['ES384'], ...base },
      /"ES384" does not fit the publicKey \(a P-256 EC key\)/,
    );
    refuses({ publicKey: es384.jwk, algorithms: ['ES256'], ...base }, /"ES256" does not fit/);
    refuses(
      { publicKey: es256.pem, algorithms: ['PS256'], ...base },
      /algorithms entry "PS256" does not fit the publicKey \(a P-256 EC key\)/,
    );
    refuses(
      { publicKey: rsa.pem, algorithms: ['EdDSA'], ...base },
      /"EdDSA" does not fit the publicKey \(an RSA key\)/,
    );
    refuses({ publicKey: es256.pem, algorithms: ['ES512'], ...base }, /"ES512" does not fit/);
    refuses({ publicKey: rsa.pem, algorithms: ['PS257'], ...base }, /algorithms entry "PS257" is not supported/);
    refuses({ publicKey: es256.pem, algorithms: [], ...base }, /algorithms must be a non-empty list/);
  });

  test('none in algorithms, in any letter case', () => {
    for (const none of ['none', 'None', 'NONE'])
      refuses({ secret: SECRET, algorithms: ['HS256', none], ...base }, /algorithms must not contain "none"/, SECRET);
  });

  test('an RSA key under 2048 bits', async () => {
    const small = await testKey('RS256', 1024);
    refuses({ publicKey: small.pem, ...base }, /publicKey is an RSA key of 1024 bits; at least 2048/);
    refuses({ publicKey: small.jwk, ...base }, /publicKey is an RSA key of 1024 bits/);
  });

  test('an RSA public exponent that is even or under 3', () => {
    for (const e of ['AQ', 'Ag', 'AAE', 'BA', 'AQAA']) {
      refuses(
        { publicKey: { ...rsa.jwk, e }, ...base },
        /publicKey is an RSA key whose public exponent is even or under 3/,
      );
    }
    assert.doesNotThrow(() => jwt({ publicKey: { ...rsa.jwk, e: 'Aw' }, ...base }));
  });

  test('a PEM that is not a public key or a certificate names what was given', () => {
    const pem = (label: string) =>
      `-----BEGIN ${label}-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END ${label}-----\n`;
    refuses({ publicKey: pem('CERTIFICATE'), ...base }, /publicKey is not a DER X.509 certificate/);
    refuses({ publicKey: pem('RSA PUBLIC KEY'), ...base }, /publicKey is not a DER PKCS#1 RSAPublicKey/);
    refuses({ publicKey: pem('X509 CRL'), ...base }, /publicKey must be a PEM public key .*got BEGIN X509 CRL/);
    for (const label of ['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY', 'ENCRYPTED PRIVATE KEY']) {
      refuses({ publicKey: pem(label), ...base }, /got a private key/, 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA');
    }
    refuses({ publicKey: 'not a key', ...base }, /publicKey must be a PEM public key/);
    refuses({ publicKey: rsa.pem.replace('M', '*'), ...base }, /publicKey is not one well-formed PEM block/);
    refuses({ publicKey: rsa.pem + rsa.pem, ...base }, /publicKey is not one well-formed PEM block/);
  });

  test('a JWK with private members', () => {
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) {
      refuses(
        { publicKey: { ...rsa.jwk, [member]: 'AQAB' }, ...base },
        new RegExp(`publicKey is a JWK with the private member "${member}"`),
      );
    }
    refuses({ publicKey: es256.privateJwk, ...base }, /private member "d"/, es256.privateJwk.d);
    refuses(
      { publicKey: { kty: 'oct', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA' }, ...base },
      /private member "k"/,
      'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA',
    );
    refuses({ publicKey: { ...rsa.jwk, d: null }, ...base }, /private member "d"/);
  });

  test('a private member set to undefined is absent, as in a public JWK that workerd exports', async () => {
    const absent = Object.fromEntries(
      ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'].map((member) => [member, undefined]),
    );
    const entry = at({ publicKey: { ...rsa.jwk, ...absent }, ...base });
    assert.equal((await entry(bearer(await signToken({ alg: 'RS256' }, claims(), rsa.sign))))?.id, claims().sub);
  });

  test('other unusable public keys: wrong kty, curve, coordinates, alg, use', () => {
    refuses(
      { publicKey: { ...es256.jwk, crv: 'P-224' }, ...base },
      /publicKey is an EC JWK on a curve other than P-256, P-384 or P-521/,
    );
    refuses({ publicKey: { ...es256.jwk, crv: 'P-521' }, ...base }, /coordinates are not 66-byte/);
    refuses({ publicKey: { ...es256.jwk, x: es256.jwk.x!.slice(2) }, ...base }, /coordinates are not 32-byte/);
    refuses(
      { publicKey: { kty: 'OKP', crv: 'Ed25519', x: 'AAAA' }, ...base },
      /OKP JWK whose coordinates are not 32-byte/,
    );
    refuses({ publicKey: { kty: 'OKP', crv: 'Ed448', x: 'AAAA' }, ...base }, /OKP JWK whose "crv" is not "Ed25519"/);
    refuses({ publicKey: { kty: 'OKP', crv: 'X25519', x: 'AAAA' }, ...base }, /OKP JWK whose "crv" is not "Ed25519"/);
    refuses({ publicKey: { kty: 'oct2' }, ...base }, /"kty" is not "RSA", "EC" or "OKP"/);
    refuses({ publicKey: { ...rsa.jwk, alg: 'RS1' }, ...base }, /"alg" is not a supported algorithm/);
    refuses(
      { publicKey: { ...rsa.jwk, alg: 'EdDSA' }, ...base },
      /"alg": "EdDSA", which does not fit its key type \(an RSA key\)/,
    );
    refuses({ publicKey: { ...es256.jwk, alg: 'ES384' }, ...base }, /"alg": "ES384", which does not fit/);
    refuses({ publicKey: { ...es256.jwk, use: 'enc' }, ...base }, /"use" is not "sig"/);
    refuses({ publicKey: 42, ...base }, /publicKey must be a PEM public key/);
  });

  test('audience missing without allowAnyAudience: true, or both given', () => {
    refuses({ secret: SECRET, issuer: ISSUER }, /audience is required; set allowAnyAudience: true/, SECRET);
    refuses({ secret: SECRET, issuer: ISSUER, allowAnyAudience: false }, /audience is required/);
    refuses(
      { secret: SECRET, audience: AUDIENCE, allowAnyAudience: true },
      /audience or allowAnyAudience: true, not both/,
    );
    refuses({ secret: SECRET, audience: '' }, /audience must be a non-empty string/);
    refuses({ secret: SECRET, audience: [AUDIENCE, 7] }, /audience must be/);
    refuses({ secret: SECRET, allowAnyAudience: 'yes' }, /allowAnyAudience must be a boolean/);
  });

  test('clockToleranceSec negative, not finite, or over 300', () => {
    for (const value of [-1, Number.NaN, Number.POSITIVE_INFINITY, 301, '60']) {
      refuses(
        { secret: SECRET, ...base, clockToleranceSec: value },
        /clockToleranceSec must be a number from 0 to 300/,
        SECRET,
      );
    }
    assert.doesNotThrow(() => jwt({ secret: SECRET, ...base, clockToleranceSec: 300 }));
    assert.doesNotThrow(() => jwt({ secret: SECRET, ...base, clockToleranceSec: 0 }));
  });

  test('an issuer that is not a non-empty string or list, and a principal that is not a function', () => {
    refuses({ secret: SECRET, audience: AUDIENCE, issuer: [] }, /issuer must be a non-empty string/);
    refuses({ secret: SECRET, ...base, principal: 'admin' }, /principal must be a function/);
    refuses(undefined, /options must be an object/);
  });
});
