// Issue 14, items 3 and 6 and the log note: one key-set fetch per 30 s while fetches fail, in the
// Workers mode too; EC points checked on their curve at creation; a key the runtime refuses at
// first use is a skip with one warning; key-set and discovery URLs logged without their query.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { oidc } from '../../src/auth/index.ts';
import { keySetCache } from '../../src/auth/key-set.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { AUDIENCE, NOW, claims, signToken, statusOf, testKey } from '../helpers/jwt.ts';
import { encodeBase64url } from '../../src/auth/jws/base64url.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function quietly<T>(run: () => Promise<T>): Promise<{ value: T; warnings: string[] }> {
  const warn = console.warn;
  const warnings: string[] = [];
  console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(' '));
  try {
    return { value: await run(), warnings };
  } finally {
    console.warn = warn;
  }
}

for (const perRequestFetch of [false, true]) {
  test(`a key set that fails slowly is fetched once per 30 s, not once per request (${perRequestFetch ? 'Workers' : 'normal'} mode)`, async () => {
    let fetches = 0;
    let clock = 1_000_000;
    const fetch = async () => {
      fetches++;
      await sleep(100);
      return new Response('unavailable', { status: 503 });
    };
    const source = keySetCache('https://idp.example/jwks', ['RS256'], { fetch, now: () => clock, perRequestFetch });
    const { warnings } = await quietly(async () => {
      const pending: Promise<unknown>[] = [];
      // 30 requests 20 ms apart: the first fetch fails after 100 ms, while they keep coming.
      for (let i = 0; i < 30; i++) {
        pending.push(Promise.resolve(source.keysFor({ alg: 'RS256', kid: 'k1' })));
        await sleep(20);
        clock += 20;
      }
      await Promise.all(pending);
      const duringFailure = fetches;
      // Workers mode: the requests within the first fetch's 100 ms overlap theirs (design §3's cold start), no more.
      assert.ok(
        duringFailure >= 1 && duringFailure <= (perRequestFetch ? 6 : 1),
        `${duringFailure} fetches for 30 requests`,
      );
      // After the first failure, nothing more until 30 s after the last attempt.
      for (let i = 0; i < 10; i++) await source.keysFor({ alg: 'RS256', kid: 'k1' });
      assert.equal(fetches, duringFailure);
      clock += 30_000;
      await source.keysFor({ alg: 'RS256', kid: 'k1' });
      assert.equal(fetches, duringFailure + 1, 'retried after 30 s');
    });
    assert.ok(warnings.length >= 1);
  });
}

test('key-set and discovery URLs are logged without their query string', async () => {
  const secret = 'key-in-the-query-0123456789';
  const failing = async () => new Response('no', { status: 500 });
  const jwks = jwtAt(
    { jwksUrl: `https://idp.example/jwks?token=${secret}#frag`, audience: AUDIENCE, _internal: { fetch: failing } },
    () => NOW,
  );
  const discovery = oidc({
    issuer: 'https://idp.example',
    audience: AUDIENCE,
    discoveryUrl: `https://idp.example/.well-known/openid-configuration?key=${secret}`,
    _internal: { fetch: failing },
  });
  const token = await signToken({ alg: 'RS256', kid: 'k' }, claims(), (await testKey('RS256')).sign);
  const { warnings } = await quietly(async () => {
    assert.equal(await statusOf(jwks, token), 401);
    assert.equal(await statusOf(discovery, token), 401);
  });
  assert.equal(warnings.length, 2);
  for (const line of warnings) {
    assert.ok(!line.includes(secret) && !line.includes('frag'), line);
    assert.match(line, /https:\/\/idp\.example\/(jwks|\.well-known\/openid-configuration) /);
  }
});

test('an EC public key off its curve is a configuration error at creation (P-256, P-384, P-521; JWK and PEM)', async () => {
  for (const alg of ['ES256', 'ES384', 'ES512']) {
    const key = await testKey(alg).catch(() => undefined);
    if (key === undefined) continue;
    const size = { ES256: 32, ES384: 48, ES512: 66 }[alg]!;
    const y = Uint8Array.from(atob(key.jwk.y!.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
    y[size - 1]! ^= 1;
    assertConfigError(
      () => jwtAt({ publicKey: { ...key.jwk, y: encodeBase64url(y) }, audience: AUDIENCE }, () => NOW),
      'jwt()',
      `${alg} JWK off the curve`,
    );
    const spki = Uint8Array.from(key.spki);
    spki[spki.length - 1]! ^= 1;
    const pem = `-----BEGIN PUBLIC KEY-----\n${btoa(String.fromCharCode(...spki))}\n-----END PUBLIC KEY-----`;
    assertConfigError(
      () => jwtAt({ publicKey: pem, audience: AUDIENCE }, () => NOW),
      'jwt()',
      `${alg} PEM off the curve`,
    );
    // A coordinate at or above the field prime is not a point either.
    assertConfigError(
      () =>
        jwtAt(
          { publicKey: { ...key.jwk, x: encodeBase64url(new Uint8Array(size).fill(0xff)) }, audience: AUDIENCE },
          () => NOW,
        ),
      'jwt()',
      `${alg} x >= p`,
    );
  }
});

test('a key the runtime refuses at first use: every request skips (401), never 500, with one warning', async () => {
  const key = await testKey('ES256');
  const entry = jwtAt({ publicKey: key.jwk, audience: AUDIENCE }, () => NOW);
  const token = await signToken({ alg: 'ES256' }, claims(), key.sign);
  const original = crypto.subtle.importKey;
  crypto.subtle.importKey = (async () => {
    throw new DOMException('Invalid key', 'DataError');
  }) as typeof original;
  try {
    const { warnings } = await quietly(async () => {
      for (let i = 0; i < 5; i++) assert.equal(await statusOf(entry, token), 401);
    });
    assert.equal(warnings.length, 1);
  } finally {
    crypto.subtle.importKey = original;
  }
});
