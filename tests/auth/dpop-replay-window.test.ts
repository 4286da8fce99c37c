// Design §20: a DPoP proof accepted once is never accepted again, at any instant of its window.
// The entry reads its clock once, after the proof's signature, and judges the window and the
// replay store's expiry on that one reading; the store keeps the proof past the window with a
// margin for other instances' clocks. Replays fired in a tight loop across the end of the window
// (dpopMaxAgeSec: 1, clockToleranceSec: 0) are all refused. Runs on Node, Bun, Deno and inside
// workerd (tests/auth/jws/workerd.node.test.ts); tests/postgres/replay-store.node.test.ts runs the
// loop against two server processes sharing postgresReplayStore().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jwt, routeAuth } from '../../src/auth/index.ts';
import { memoryReplayStore, type DpopReplayStore } from '../../src/auth/dpop-replay.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { AUDIENCE, ISSUER, NOW, claims, signToken, testKey } from '../helpers/jwt.ts';
import { dpopProof, newJti, thumbprint } from '../helpers/dpop.ts';

const URL_ = 'https://agent.example.com/agent';
const tokenKey = await testKey('ES256');
const proofKey = await testKey('ES256');
const jkt = await thumbprint(proofKey.jwk);

const request = (token: string, proof: string) =>
  new Request(URL_, { headers: { authorization: `DPoP ${token}`, dpop: proof } });

test('the memory store judges expiry on the reading it is given: live until expiresAtSec, taken again from then on', () => {
  const store = memoryReplayStore(10);
  assert.equal(store.seen('k', 1000, 900), false, 'new');
  assert.equal(store.seen('k', 1000, 999.999), true, 'still live at the last instant before its expiry');
  assert.equal(store.seen('k', 2000, 1000), false, 'expired at 1000: taken again');
  assert.equal(store.seen('k', 2000, 1999), true);
});

test('the entry hands the store the one clock reading it judged iat by, and an expiry past the last instant any instance accepts the proof', async () => {
  const calls: { expiresAtSec: number; nowSec: number | undefined }[] = [];
  const recording: DpopReplayStore = {
    seen: (_key, expiresAtSec, nowSec) => (calls.push({ expiresAtSec, nowSec }), false),
  };
  let reading = NOW;
  const entry = jwtAt(
    {
      publicKey: tokenKey.jwk,
      issuer: ISSUER,
      audience: AUDIENCE,
      dpop: 'required',
      dpopMaxAgeSec: 30,
      clockToleranceSec: 5,
      dpopReplay: recording,
    },
    () => reading,
  );
  const token = await signToken({ alg: 'ES256' }, claims({ cnf: { jkt } }), tokenKey.sign);
  // The proof's last instant: iat + 30 + 5 on this instance's clock; another instance's clock may run 5 s ahead.
  const iat = NOW - 35;
  assert.equal(
    (await routeAuth(entry)(request(token, await dpopProof(proofKey, { token, iat, jti: newJti() })))).ok,
    true,
  );
  assert.deepEqual(calls, [{ expiresAtSec: iat + 30 + 2 * 5 + 1, nowSec: NOW }]);
  reading = NOW + 0.5;
  assert.equal(
    (await routeAuth(entry)(request(token, await dpopProof(proofKey, { token, iat, jti: newJti() })))).ok,
    false,
    'past the window on the same clock',
  );
  assert.equal(calls.length, 1, 'a proof outside its window never reaches the store');
});

/** Now, on the runtime's clock (workerd moves it only across I/O: a timer there lets it move between replays). */
const nowSec = () => Date.now() / 1000;
const inWorkerd = typeof navigator !== 'undefined' && navigator.userAgent === 'Cloudflare-Workers';
const letTimeMove = () => (inWorkerd ? new Promise((resolve) => setTimeout(resolve, 1)) : undefined);

test('replays fired in a tight loop across the end of the window (dpopMaxAgeSec: 1, clockToleranceSec: 0): none accepted, over many rounds', async () => {
  const store = memoryReplayStore(10_000);
  const entry = jwt({
    publicKey: tokenKey.jwk,
    issuer: ISSUER,
    audience: AUDIENCE,
    dpop: 'required',
    dpopMaxAgeSec: 1,
    clockToleranceSec: 0,
    dpopReplay: store,
  });
  const authenticate = routeAuth(entry);
  let rounds = 0;
  let replays = 0;
  const accepted: string[] = [];
  for (let batch = 0; batch < 3; batch++) {
    const now = nowSec();
    const token = await signToken(
      { alg: 'ES256' },
      claims({ cnf: { jkt }, iat: Math.floor(now), exp: Math.floor(now) + 600 }),
      tokenKey.sign,
    );
    // As clients write it: a whole second. The window ends at iat + 1 on every runtime's clock.
    const iat = Math.floor(now);
    const proofs = await Promise.all(
      Array.from({ length: 6 }, () => dpopProof(proofKey, { token, iat, jti: newJti() })),
    );
    const first = await Promise.all(proofs.map(async (proof) => (await authenticate(request(token, proof))).ok));
    if (first.some((ok) => !ok)) continue; // the second turned while signing: this batch has no window left
    rounds += proofs.length;
    // Replays until the window has surely ended, each round's proofs fired together, again and again.
    while (nowSec() < iat + 1.15) {
      const results = await Promise.all(proofs.map(async (proof) => (await authenticate(request(token, proof))).ok));
      replays += results.length;
      results.forEach((ok, i) => ok && accepted.push(`batch ${batch} proof ${i} at ${nowSec() - iat}s`));
      await letTimeMove();
    }
  }
  assert.ok(rounds >= 6, `${rounds} rounds ran`);
  assert.ok(replays > rounds, `${replays} replays fired`);
  assert.deepEqual(accepted, [], `a used proof was accepted again (${accepted.length} of ${replays} replays)`);
});
