/**
 * `durableObjectReplayStore` against real Durable Objects inside workerd (design §16, §29): the
 * replay set and the DPoP nonces every isolate shares, and two `jwt()` entries (two isolates of
 * one Worker) with `dpop: { nonce: true }` over it. tests/cloudflare/replay-store-workerd.node.test.ts
 * bundles it with `node:test` mapped to ./node-test-shim.ts; a request runs the declared tests
 * and answers their outcomes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { durableObjectReplayStore } from '../../../src/cloudflare/durable-object-replay.ts';
import { ReplayObject } from '../../../src/cloudflare/objects.ts';
import type { DurableObjectNamespaceLike } from '../../../src/cloudflare/durable-object-sessions.ts';
import { routeAuth, wwwAuthenticateLines, type AuthFn } from '../../../src/auth/index.ts';
import type { Refusal } from '../../../src/auth/refusals.ts';
import { jwtAt } from '../test-hook.ts';
import { AUDIENCE, ISSUER, NOW, claims, signToken, testKey } from '../jwt.ts';
import { dpopProof, thumbprint } from '../dpop.ts';
import { runDeclaredTests } from './node-test-shim.ts';

let namespace: DurableObjectNamespaceLike | undefined;
const URL_ = 'https://agent.example.com/agent';
/** Keys unique to this run: the objects' storage persists between tests of one worker. */
const run = `${Date.now()}-${Math.random().toString(36).slice(2)}`;

test('a key one store saw is seen through another over the same objects; another key is new', async () => {
  const one = durableObjectReplayStore(namespace!);
  const two = durableObjectReplayStore(namespace!);
  assert.equal(await one.seen(`a${run}`, NOW + 300, NOW), false);
  assert.equal(await two.seen(`a${run}`, NOW + 300, NOW + 1), true, 'replayed to another isolate');
  assert.equal(await two.seen(`b${run}`, NOW + 300, NOW + 1), false, 'another key');
  assert.equal(await one.seen(`a${run}`, NOW + 900, NOW + 301), false, 'expired: a new proof may take the key');
});

test('nonces: the first store to ask for a period makes its nonce, every other gets it; another period, another', async () => {
  const one = durableObjectReplayStore(namespace!);
  const two = durableObjectReplayStore(namespace!);
  const nonce = await one.nonce!(`300 ${run}`, NOW + 600, NOW);
  assert.match(nonce, /^[\w-]{22}$/);
  assert.equal(await two.nonce!(`300 ${run}`, NOW + 600, NOW + 10), nonce);
  assert.notEqual(await two.nonce!(`300 ${run}-next`, NOW + 900, NOW + 300), nonce);
});

test('two jwt() entries with nonces over the store: a nonce one offers is accepted by the other; a proof is accepted once', async () => {
  const tokenKey = await testKey('ES256');
  const proofKey = await testKey('ES256');
  const jkt = await thumbprint(proofKey.jwk);
  const token = await signToken({ alg: 'ES256' }, claims({ cnf: { jkt } }), tokenKey.sign);
  const isolate = (): AuthFn =>
    jwtAt(
      {
        publicKey: tokenKey.jwk,
        issuer: ISSUER,
        audience: AUDIENCE,
        dpop: { nonce: true },
        dpopReplay: durableObjectReplayStore(namespace!),
      },
      () => NOW,
    );
  const [one, two] = [isolate(), isolate()];
  const call = async (entry: AuthFn, proof: string) => {
    const reasons: Refusal['reason'][] = [];
    const result = await routeAuth([entry], { onRefused: (refusal) => void reasons.push(refusal.reason) })(
      new Request(URL_, { headers: { authorization: `DPoP ${token}`, dpop: proof } }),
    );
    return {
      ok: result.ok,
      nonce: result.ok ? result.dpopNonce : (result.response.headers.get('dpop-nonce') ?? undefined),
      lines: result.ok ? [] : (wwwAuthenticateLines(result.response) ?? []),
      reasons,
    };
  };
  const first = await call(one, await dpopProof(proofKey, { token, iat: NOW, htu: URL_ }));
  assert.equal(first.ok, false);
  assert.deepEqual(first.reasons, ['dpop-nonce']);
  assert.match(first.lines.join('\n'), /DPoP error="use_dpop_nonce"/);
  assert.match(first.nonce ?? '', /^[\w-]{22}$/);
  const proof = await dpopProof(proofKey, { token, iat: NOW, htu: URL_, claims: { nonce: first.nonce } });
  const other = await call(two, proof);
  assert.equal(other.ok, true, 'the other isolate accepts the nonce the first offered');
  assert.equal(other.nonce, first.nonce);
  const replayed = await call(one, proof);
  assert.equal(replayed.ok, false, 'the same proof to the first isolate is a replay');
  assert.deepEqual(replayed.reasons, ['dpop-replay']);
});

export { ReplayObject };

export default {
  async fetch(_request: Request, env: { REPLAY: DurableObjectNamespaceLike }): Promise<Response> {
    namespace = env.REPLAY;
    return Response.json(await runDeclaredTests());
  },
};
