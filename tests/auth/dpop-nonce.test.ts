// Design §29, RFC 9449 §8 and §9: DPoP server nonces on jwt() (opt-in, dpop: { nonce: true }):
// the first request gets one, a proof without the current nonce (or with a stale one) gets 401
// use_dpop_nonce with a DPoP-Nonce header, every answer carries the next nonce, nonces rotate every
// nonceRotateSec with the previous one accepted one period more, and the option is checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { routeAuth, wwwAuthenticateLines, type AuthFn } from '../../src/auth/index.ts';
import type { Refusal } from '../../src/auth/refusals.ts';
import type { JwtOptions } from '../../src/auth/jwt.ts';
import { memoryReplayStore, type DpopReplayStore } from '../../src/auth/dpop-replay.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { AUDIENCE, ISSUER, NOW, claims, signToken, testKey } from '../helpers/jwt.ts';
import { dpopProof, thumbprint } from '../helpers/dpop.ts';
import { assertConfigError } from '../helpers/config-error.ts';

const URL_ = 'https://agent.example.com/agent';
const tokenKey = await testKey('ES256');
const proofKey = await testKey('ES256');
const jkt = await thumbprint(proofKey.jwk);
const token = await signToken({ alg: 'ES256' }, claims({ cnf: { jkt }, scope: 'agent:chat' }), tokenKey.sign);

/** An entry with nonces on a clock the test moves, with a replay store of its own. */
function nonceEntry(options: Partial<JwtOptions> = {}, clock = { now: NOW }) {
  const entry = jwtAt(
    {
      publicKey: tokenKey.jwk,
      issuer: ISSUER,
      audience: AUDIENCE,
      dpop: { nonce: true },
      dpopReplay: memoryReplayStore(1000),
      ...options,
    },
    () => clock.now,
  );
  return { entry, clock };
}

async function call(entry: AuthFn, nonce: string | undefined, iat = NOW) {
  const proof = await dpopProof(proofKey, { token, iat, htu: URL_, claims: { nonce } });
  const refusals: Refusal[] = [];
  const result = await routeAuth([entry], { onRefused: (refusal) => void refusals.push(refusal) })(
    new Request(URL_, { headers: { authorization: `DPoP ${token}`, dpop: proof } }),
  );
  return {
    ok: result.ok,
    nonce: result.ok ? result.dpopNonce : (result.response.headers.get('dpop-nonce') ?? undefined),
    lines: result.ok ? [] : (wwwAuthenticateLines(result.response) ?? []),
    reasons: refusals.map((refusal) => refusal.reason),
  };
}

test('DPoP nonce (RFC 9449 §9): a first request without a nonce gets 401 error="use_dpop_nonce" and the nonce in DPoP-Nonce; the retry with it is accepted', async () => {
  const { entry } = nonceEntry();
  const first = await call(entry, undefined);
  assert.equal(first.ok, false);
  assert.match(first.nonce ?? '', /^[\w-]{22}$/, 'a DPoP-Nonce header of 128 random bits');
  assert.deepEqual(first.lines, ['Bearer', 'DPoP error="use_dpop_nonce", algs="ES256 EdDSA Ed25519 RS256 PS256"']);
  assert.deepEqual(first.reasons, ['dpop-nonce']);
  const retry = await call(entry, first.nonce);
  assert.equal(retry.ok, true);
  assert.equal(retry.nonce, first.nonce, 'a 2xx answer carries the nonce too');
});

test('DPoP nonce: a proof with a wrong nonce gets use_dpop_nonce; nonces are unpredictable (two entries with their own stores give two)', async () => {
  const { entry } = nonceEntry();
  const other = nonceEntry().entry;
  const first = await call(entry, undefined);
  const wrong = await call(entry, 'A'.repeat(22));
  assert.equal(wrong.ok, false);
  assert.match(wrong.lines.join('\n'), /error="use_dpop_nonce"/);
  assert.equal(wrong.nonce, first.nonce);
  assert.notEqual((await call(other, undefined)).nonce, first.nonce);
});

test('DPoP nonce rotation: a new nonce every nonceRotateSec, the previous one accepted for one period more and refused after', async () => {
  const { entry, clock } = nonceEntry({ dpop: { nonce: true, nonceRotateSec: 60 }, dpopMaxAgeSec: 3600 });
  clock.now = Math.floor(NOW / 60) * 60; // the start of a period
  const first = (await call(entry, undefined, clock.now)).nonce;
  assert.equal((await call(entry, first, clock.now)).ok, true);
  clock.now += 59;
  assert.equal((await call(entry, first, clock.now)).nonce, first, 'no rotation within a period');
  clock.now += 1;
  const previous = await call(entry, first, clock.now);
  assert.equal(previous.ok, true, 'the previous period nonce is still accepted');
  const second = previous.nonce;
  assert.notEqual(second, first, 'the answer offers the new nonce');
  clock.now += 60;
  const stale = await call(entry, first, clock.now);
  assert.equal(stale.ok, false, 'two periods later the first nonce is stale');
  assert.match(stale.lines.join('\n'), /error="use_dpop_nonce"/);
  assert.equal((await call(entry, second, clock.now)).ok, true);
});

test('DPoP nonce: refusals carry it too (invalid_dpop_proof, 403 insufficient_scope); an entry without nonce: true sends none', async () => {
  const { entry } = nonceEntry({ scopes: ['agent:admin'] });
  const nonce = (await call(entry, undefined)).nonce;
  const refused = await routeAuth([entry])(
    new Request(URL_, { headers: { authorization: `DPoP ${token}`, dpop: 'not-a-proof' } }),
  );
  assert.equal(refused.ok, false);
  if (!refused.ok) assert.equal(refused.response.headers.get('dpop-nonce'), nonce);
  const proof = await dpopProof(proofKey, { token, iat: NOW, htu: URL_, claims: { nonce } });
  const forbidden = await routeAuth([entry])(
    new Request(URL_, { headers: { authorization: `DPoP ${token}`, dpop: proof } }),
  );
  assert.equal(forbidden.ok, false);
  if (!forbidden.ok) {
    assert.equal(forbidden.response.status, 403);
    assert.equal(forbidden.response.headers.get('dpop-nonce'), nonce);
  }
  const plain = nonceEntry({ dpop: 'allowed' }).entry;
  const without = await call(plain, undefined);
  assert.equal(without.ok, true);
  assert.equal(without.nonce, undefined);
});

test("DPoP nonce: dpop: { required: true, nonce: true } refuses Bearer like 'required' and advertises DPoP alone", async () => {
  const { entry } = nonceEntry({ dpop: { required: true, nonce: true } });
  assert.deepEqual(
    entry.challenges?.map((challenge) => challenge.scheme),
    ['DPoP'],
  );
  const bearer = await routeAuth([entry])(new Request(URL_, { headers: { authorization: `Bearer ${token}` } }));
  assert.equal(bearer.ok, false);
});

test('DPoP nonce options are checked at creation: closed object, nonce: true, nonceRotateSec from 10 to 86400, a store with nonce()', () => {
  const base = { publicKey: tokenKey.jwk, issuer: ISSUER, audience: AUDIENCE } as const;
  const make = (options: Partial<JwtOptions>) => () => jwtAt({ ...base, ...options }, () => NOW);
  const refused = (options: Partial<JwtOptions>, message: RegExp) => {
    assertConfigError(make(options), 'jwt()', String(message));
    assert.throws(make(options), message);
  };
  refused({ dpop: { nonce: true, nonceRotate: 60 } as never }, /unknown option "nonceRotate".*nonceRotateSec/);
  refused(
    { dpop: { nonce: false } as never },
    /dpop must be 'allowed', 'required' or \{ nonce: true, required\?: boolean, nonceRotateSec\? \}/,
  );
  refused({ dpop: { nonce: true, required: 'yes' } as never }, /dpop must be 'allowed', 'required' or \{ nonce: true/);
  refused({ dpop: { nonce: true, nonceRotateSec: 5 } }, /nonceRotateSec must be a number of seconds from 10 to 86400/);
  refused({ dpop: 'sometimes' as never }, /dpop must be 'allowed', 'required' or \{ nonce: true/);
  const seenOnly: DpopReplayStore = { seen: () => false };
  refused({ dpop: { nonce: true }, dpopReplay: seenOnly }, /dpop nonces need a dpopReplay store with nonce/);
  make({ dpop: 'required', dpopReplay: seenOnly })();
});

test('DPoP nonce: a store that fails to give one refuses the proof (fails closed), and is asked again by the next request', async () => {
  let fail = true;
  const memory = memoryReplayStore(10);
  const store: DpopReplayStore = {
    seen: (key, at, now) => memory.seen(key, at, now),
    nonce: (key, at, now) => {
      if (fail) throw new Error('database down');
      return (memory.nonce as NonNullable<DpopReplayStore['nonce']>)(key, at, now);
    },
  };
  const { entry } = nonceEntry({ dpopReplay: store });
  const errors: unknown[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void errors.push(args);
  try {
    const refused = await call(entry, undefined);
    assert.equal(refused.ok, false);
    assert.deepEqual(refused.reasons, ['dpop-proof']);
  } finally {
    console.error = original;
  }
  assert.equal(errors.length, 1);
  fail = false;
  const nonce = (await call(entry, undefined)).nonce;
  assert.equal((await call(entry, nonce)).ok, true);
});
