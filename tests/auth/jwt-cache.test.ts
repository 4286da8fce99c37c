// Design §13: the verified-token cache of jwt() and oidc(), opt-in. Only tokens that passed
// everything enter; a hit re-checks exp/nbf with the clock and the tolerance, and that the key
// that verified it is still in the key set; a mapper runs on every hit; LRU, bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JwtOptions } from '../../src/auth/jwt.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { jwt } from '../../src/auth/index.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { AUDIENCE, ISSUER, NOW, SECRET, bearer, claims, hmacSigner, signToken, testKey } from '../helpers/jwt.ts';

/** Runs `body` counting the signatures Web Crypto verifies. */
async function countingVerify<T>(body: (count: () => number) => Promise<T>): Promise<T> {
  const original = crypto.subtle.verify;
  let calls = 0;
  crypto.subtle.verify = ((...args: Parameters<typeof original>) => {
    calls++;
    return original.apply(crypto.subtle, args);
  }) as typeof original;
  try {
    return await body(() => calls);
  } finally {
    crypto.subtle.verify = original;
  }
}

const base = { secret: SECRET, issuer: ISSUER, audience: AUDIENCE };
const idOf = async (entry: ReturnType<typeof jwtAt>, token: string) => (await entry(bearer(token)))?.id ?? null;

test('a hit answers the same principal without verifying the signature again', async () => {
  const sign = await hmacSigner(SECRET);
  const entry = jwtAt({ ...base, cache: true }, () => NOW);
  const token = await signToken({ alg: 'HS256' }, claims(), sign);
  await countingVerify(async (count) => {
    const first = await entry(bearer(token));
    assert.equal(count(), 1);
    for (let i = 0; i < 5; i++) assert.equal(await entry(bearer(token)), first, 'the same frozen principal');
    assert.equal(count(), 1);
  });
});

test('a cached token past exp + tolerance is refused, by the clock alone', async () => {
  const sign = await hmacSigner(SECRET);
  let now = NOW;
  const entry = jwtAt({ ...base, clockToleranceSec: 60, cache: true }, () => now);
  const token = await signToken({ alg: 'HS256' }, claims({ exp: NOW + 100 }), sign);
  assert.equal(await idOf(entry, token), 'user-1');
  now = NOW + 159;
  assert.equal(await idOf(entry, token), 'user-1');
  now = NOW + 160;
  assert.equal(await idOf(entry, token), null);
  now = NOW;
  assert.equal(await idOf(entry, token), 'user-1', 'refused only by the clock, not remembered as refused');
});

test('a token that failed any check never enters: each try verifies again', async () => {
  const sign = await hmacSigner(SECRET);
  const entry = jwtAt({ ...base, scopes: ['agent:invoke'], cache: true }, () => NOW);
  const forged = `${(await signToken({ alg: 'HS256' }, claims({ scope: 'agent:invoke' }), sign)).slice(0, -4)}AAAA`;
  const noScope = await signToken({ alg: 'HS256' }, claims(), sign);
  const wrongAudience = await signToken({ alg: 'HS256' }, claims({ aud: 'other', scope: 'agent:invoke' }), sign);
  await countingVerify(async (count) => {
    for (const token of [forged, noScope, wrongAudience]) {
      const before = count();
      for (let i = 0; i < 3; i++) await Promise.resolve(entry(bearer(token))).catch(() => undefined);
      assert.equal(count() - before, 3);
    }
  });
});

test('a custom principal mapper runs on every hit (only crypto and claims are cached)', async () => {
  const sign = await hmacSigner(SECRET);
  let calls = 0;
  const entry = jwtAt(
    { ...base, cache: true, principal: (c) => ({ id: `${String(c.sub)}#${++calls}`, type: 'user' }) },
    () => NOW,
  );
  const token = await signToken({ alg: 'HS256' }, claims(), sign);
  assert.equal(await idOf(entry, token), 'user-1#1');
  assert.equal(await idOf(entry, token), 'user-1#2');
  assert.equal(await idOf(entry, token), 'user-1#3');
});

test('a key rotated out of the key set evicts what it verified', async () => {
  const [oldKey, newKey] = await Promise.all([testKey('ES256'), testKey('ES256')]);
  let served = [{ ...oldKey.jwk, kid: 'old' }];
  let clock = 1_000_000;
  const fetch = async () => Response.json({ keys: served });
  const entry = jwt({
    ...({ jwksUrl: 'https://idp.example/jwks', issuer: ISSUER, audience: AUDIENCE, cache: true } as JwtOptions),
    _internal: { fetch, now: () => clock },
  });
  const live = { exp: Math.floor(Date.now() / 1000) + 3600, iat: undefined };
  const token = await signToken({ alg: 'ES256', kid: 'old' }, claims(live), oldKey.sign);
  assert.equal((await entry(bearer(token)))?.id, 'user-1');
  served = [{ ...newKey.jwk, kid: 'new' }];
  assert.equal((await entry(bearer(token)))?.id, 'user-1', 'still in the fresh set');
  clock += 10 * 60_000; // the set is refetched: the old key is gone
  assert.equal(await entry(bearer(token)), null);
  assert.equal(
    (await entry(bearer(await signToken({ alg: 'ES256', kid: 'new' }, claims(live), newKey.sign))))?.id,
    'user-1',
  );
});

test('two entries never share a cache', async () => {
  const sign = await hmacSigner(SECRET);
  const first = jwtAt({ ...base, cache: true }, () => NOW);
  const second = jwtAt({ ...base, issuer: 'https://other.example', cache: true }, () => NOW);
  const token = await signToken({ alg: 'HS256' }, claims(), sign);
  assert.equal(await idOf(first, token), 'user-1');
  assert.equal(await idOf(second, token), null);
});

/** A full collection where the runtime offers one: `--expose-gc`'s `gc`, `Bun.gc`, or V8's, exposed at run time. */
async function garbageCollector(): Promise<(() => void) | undefined> {
  const global = globalThis as { gc?: () => void; Bun?: { gc(force: boolean): void } };
  if (global.gc !== undefined) return global.gc;
  if (global.Bun !== undefined) return () => global.Bun!.gc(true);
  try {
    const [v8, vm] = await Promise.all([import('node:v8'), import('node:vm')]);
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

test('the LRU bound holds under 100,000 distinct valid tokens (memory measured where the runtime tells it)', async () => {
  const sign = await hmacSigner(SECRET);
  const entry = jwtAt({ ...base, cache: { maxEntries: 1000 } }, () => NOW);
  const memory = (globalThis as { process?: { memoryUsage?: () => { heapUsed: number } } }).process?.memoryUsage;
  const gc = await garbageCollector();
  const tokens: string[] = [];
  gc?.();
  const before = memory?.().heapUsed;
  await countingVerify(async (count) => {
    for (let i = 0; i < 100_000; i += 1000) {
      const batch = await Promise.all(
        Array.from({ length: 1000 }, (_, j) => signToken({ alg: 'HS256' }, claims({ sub: `user-${i + j}` }), sign)),
      );
      for (const token of batch) await entry(bearer(token));
      tokens.splice(0, tokens.length, ...batch);
    }
    assert.equal(count(), 100_000);
    await entry(bearer(tokens[999]!));
    assert.equal(count(), 100_000, 'the most recent token is a hit');
  });
  gc?.();
  if (before !== undefined && memory !== undefined && gc !== undefined) {
    const grown = memory().heapUsed - before;
    // 1,000 entries of a short token, its claims and its principal: far under a megabyte each way.
    assert.ok(grown < 8 * 1024 * 1024, `the heap grew ${grown} bytes`);
    console.log(`cache of 1,000 after 100,000 tokens: heap grew ${(grown / 1024).toFixed(0)} KiB`);
  } else {
    console.log(
      'this runtime offers no garbage collection to call: the heap was not measured (the verify count still bounds the cache)',
    );
  }
});

test('cache must be true, false or { maxEntries } from 1 to 100,000', () => {
  for (const cache of [0, 'yes', {}, { maxEntries: 0 }, { maxEntries: 1.5 }, { maxEntries: 100_001 }, null]) {
    assertConfigError(() => jwtAt({ ...base, cache: cache as never }, () => NOW), 'jwt()', JSON.stringify(cache), [
      SECRET,
    ]);
  }
});
