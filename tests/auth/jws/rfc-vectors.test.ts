// Compact-JWS vectors through the verify path (parse, pick key, verify signature): Wycheproof
// json_web_signature_test and json_web_key_test (in-scope cases), the RFC 7515 and RFC 7520
// examples with the clock pinned. Every departure from a label is named per tcId with its reason.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createJwtEntry } from '../../../src/auth/jwt.ts';
import { jwtAt } from '../../helpers/test-hook.ts';
import { readEntryOptions } from '../../../src/auth/jwt-options.ts';
import {
  ALGORITHM_NAMES,
  algorithmsFor,
  jwsAlgorithm,
  type AlgorithmName,
  type JwsAlgorithm,
} from '../../../src/auth/jws/algorithms.ts';
import { decodeBase64url } from '../../../src/auth/jws/base64url.ts';
import type { JwsHeader } from '../../../src/auth/jws/compact.ts';
import {
  importHmacVerifyKey,
  importVerifyKey,
  staticKeySource,
  type KeySource,
  type VerifyKey,
} from '../../../src/auth/jws/key-source.ts';
import { readPublicJwk, type PublicKeySpec } from '../../../src/auth/jws/keys.ts';
import { readCompactJws, verifiedKey } from '../../../src/auth/jws/verify.ts';
import { b64json, bearer, readVectors, runtimeLacks, runtimeName } from '../../helpers/jwt.ts';

const _ASYMMETRIC = ALGORITHM_NAMES.filter((name) => !name.startsWith('HS'));
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'];
const notes = readVectors('wycheproof_webcrypto_notes.json').files;
const noted = (file: string, issue: RegExp): number[] =>
  notes[file].caveats.filter((c: any) => issue.test(c.issue)).flatMap((c: any) => c.tcIds ?? []);

/** A `secret`-style source: HMAC key bytes, imported per HS algorithm (the 32-byte minimum applies). */
function secretSource(k: string, algorithms: readonly AlgorithmName[]): KeySource {
  const bytes = decodeBase64url(k);
  assert.ok(bytes !== null);
  return staticKeySource(algorithms, (algorithm) => importHmacVerifyKey(bytes, algorithm));
}

/** A `publicKey`-style source, or the reason the key is refused. */
function publicSource(jwk: object): { source: KeySource; algorithms: readonly AlgorithmName[] } | string {
  const spec = readPublicJwk(jwk);
  if (typeof spec === 'string') return spec;
  return {
    source: staticKeySource(spec.algorithms, (algorithm) => importVerifyKey(spec, algorithm)),
    algorithms: spec.algorithms,
  };
}

/** A key-set-style source: each JWK checked by readPublicJwk (oct refused), picked by kid and alg. */
function keySetSource(jwks: readonly object[]): KeySource {
  const specs = jwks.map((jwk) => readPublicJwk(jwk)).filter((spec): spec is PublicKeySpec => typeof spec !== 'string');
  return {
    async keysFor(header: JwsHeader): Promise<readonly VerifyKey[]> {
      const algorithm = jwsAlgorithm(header.alg) as JwsAlgorithm;
      const fits = specs.filter(
        (spec) => spec.algorithms.includes(algorithm.name) && (header.kid === undefined || spec.kid === header.kid),
      );
      const keys: VerifyKey[] = [];
      for (const spec of fits) {
        try {
          keys.push(await importVerifyKey(spec, algorithm));
        } catch {
          // A key Web Crypto refuses (invalid point) cannot serve.
        }
      }
      return keys;
    },
  };
}

async function accepts(token: unknown, algorithms: readonly string[], source: KeySource): Promise<boolean> {
  const text = typeof token === 'string' ? token : JSON.stringify(token);
  const jws = readCompactJws(text, 0, { algorithms: new Set(algorithms), typ: undefined });
  return jws !== null && (await verifiedKey(jws, source)) !== null;
}

describe('Wycheproof json_web_signature_test.json', () => {
  const file = 'json_web_signature_test.json';
  // Data defects of this release, named in the vectors README and notes:
  const OVERRIDES: Record<number, [boolean, string]> = {
    367: [true, 'labelled invalid, but byte-identical to the valid tcId 357'],
    370: [true, 'labelled invalid, but byte-identical to the valid tcId 357'],
    372: [false, 'labelled valid, but a "?" is inserted into the header: strict base64url refuses it'],
    373: [false, 'labelled valid, but a "?" is inserted into the payload: strict base64url refuses it'],
  };
  // Valid JWS whose payload is the bytes E0..FF, not UTF-8: a JWT payload is UTF-8 JSON
  // (RFC 7519 §7.2 step 8-10), so the verifier refuses it before the signature.
  const BINARY_PAYLOAD = [263, 267, 271, 275, 323, 328];

  test('every compact JWS gives the expected result: PS* and ES512 verify; keys whose alg disagrees are refused', async () => {
    const data = readVectors(`wycheproof/${file}`);
    const outOfScope: number[] = [];
    const mismatches: unknown[] = [];
    let checked = 0;
    for (const group of data.testGroups) {
      let route: { source: KeySource; algorithms: readonly AlgorithmName[] } | string;
      if (group.public !== undefined) route = publicSource(group.public);
      else route = { source: secretSource(group.private.k, algorithmsFor('oct')), algorithms: algorithmsFor('oct') };
      for (const t of group.tests) {
        let expected = t.result === 'valid';
        const override = OVERRIDES[t.tcId];
        if (override !== undefined) expected = override[0];
        if (BINARY_PAYLOAD.includes(t.tcId)) {
          assert.throws(() => new TextDecoder('utf-8', { fatal: true }).decode(decodeBase64url(t.jws.split('.')[1])!));
          expected = false;
        }
        if (
          typeof route !== 'string' &&
          group.public?.alg !== undefined &&
          !t.jws.startsWith?.(b64json({ alg: group.public.alg }).slice(0, 16))
        ) {
          // The key names another alg than the header (Figure 20): a key serves only its own alg.
          if (expected) outOfScope.push(t.tcId);
          expected = false;
        } else if (typeof route === 'string') {
          // The group's key is refused ("alg": "ES521", use "enc", key_ops without verify): nothing verifies.
          if (expected) outOfScope.push(t.tcId);
          expected = false;
        } else if (
          expected &&
          (await runtimeLacks(t.jws.startsWith('eyJhbGciOiJQUz') ? 'PS256' : 'none')) !== undefined
        ) {
          expected = false;
        }
        const got = typeof route === 'string' ? false : await accepts(t.jws, route.algorithms, route.source);
        checked++;
        if (got !== expected) mismatches.push({ tcId: t.tcId, comment: t.comment, expected, got });
      }
    }
    assert.deepEqual(mismatches, []);
    assert.equal(checked, data.numberOfTests);
    // Figure 27's key says "alg": "ES521" (no such alg); Figure 20's says PS256 while the header says PS384 (README caveats).
    const refusedKeys = new Set([...noted(file, /Figure 27/), ...noted(file, /Figure 20/)]);
    assert.deepEqual(
      outOfScope.sort((a, b) => a - b),
      [...refusedKeys].sort((a, b) => a - b),
    );
    assert.ok(
      noted(file, /PS256\/PS384\/PS512/).length >= 14,
      'the notes list the valid PS* vectors, which verify here',
    );
  });
});

describe('Wycheproof json_web_key_test.json', () => {
  const file = 'json_web_key_test.json';
  const data = readVectors(`wycheproof/${file}`);
  /** Public members only: the test derives the public key from the private JWKs some groups give. */
  const publicJwks = (group: any): object[] =>
    (group.public ?? group.private).keys.map((jwk: Record<string, unknown>) =>
      jwk.kty === 'oct'
        ? jwk
        : Object.fromEntries(Object.entries(jwk).filter(([name]) => !PRIVATE_MEMBERS.includes(name))),
    );

  test('as a key set (jwksUrl/oidc policy): oct keys are never served; bad RSA/EC keys are dropped', async () => {
    // A key set never supplies an HMAC key (spec jwt() check 2): these valid HS* vectors are refused.
    const OCT_IN_KEY_SET = new Set([2, 13, 14, 15]);
    const mismatches: unknown[] = [];
    for (const group of data.testGroups) {
      const source = keySetSource(publicJwks(group));
      for (const t of group.tests) {
        const expected = t.result === 'valid' && !OCT_IN_KEY_SET.has(t.tcId);
        const got = await accepts(t.jws, ALGORITHM_NAMES, source);
        if (got !== expected) mismatches.push({ tcId: t.tcId, comment: t.comment, expected, got });
      }
    }
    assert.deepEqual(mismatches, []);
  });

  test('as a jwt() secret (single HS* oct key groups): the 32-byte minimum applies', async () => {
    // 11, 12: 47- and 63-byte keys for HS384/HS512 are labelled invalid (shorter than the hash,
    // RFC 7518 §3.2); the spec's minimum is 32 bytes for every HS algorithm, so they verify.
    const ACCEPTED_BY_32_BYTE_MINIMUM = new Set([11, 12]);
    const mismatches: unknown[] = [];
    let checked = 0;
    for (const group of data.testGroups) {
      const keys = (group.public ?? group.private).keys;
      if (keys.length !== 1 || keys[0].kty !== 'oct' || !String(keys[0].alg).startsWith('HS')) continue;
      const source = secretSource(keys[0].k, algorithmsFor('oct'));
      for (const t of group.tests) {
        const expected = t.result === 'valid' || ACCEPTED_BY_32_BYTE_MINIMUM.has(t.tcId);
        let got: boolean;
        try {
          got = await accepts(t.jws, algorithmsFor('oct'), source);
        } catch {
          got = false; // key refused at import: under 32 bytes
        }
        checked++;
        if (got !== expected) mismatches.push({ tcId: t.tcId, expected, got });
      }
    }
    assert.equal(checked, 9);
    assert.deepEqual(mismatches, []);
    assert.deepEqual(noted(file, /HMAC keys shorter/), [10, 11, 12]);
  });

  test('RSA e = 1, keys under 2048 bits, the ROCA fingerprint, a wrong use, alg or curve are refused as keys', () => {
    const reasons = new Map<number, string>();
    for (const group of data.testGroups) {
      for (const jwk of publicJwks(group)) {
        const spec = readPublicJwk(jwk);
        if (typeof spec === 'string') for (const t of group.tests) reasons.set(t.tcId, spec);
      }
    }
    assert.match(reasons.get(9)!, /exponent is even or under 3/);
    assert.match(reasons.get(8)!, /1024 bits/);
    assert.match(reasons.get(7)!, /ROCA/);
    assert.match(reasons.get(6)!, /"use" is not "sig"/);
    assert.match(reasons.get(19)!, /"alg" is not a supported algorithm/);
    assert.match(reasons.get(20)!, /"alg" is not a supported algorithm/);
    assert.match(reasons.get(21)!, /"use" is not "sig"/);
    assert.match(reasons.get(23)!, /not 48-byte/);
    assert.match(reasons.get(24)!, /RSA JWK without valid base64url "n" and "e"/);
    for (const tcId of [1, 2, 4, 10, 16, 25, 26]) assert.match(reasons.get(tcId)!, /private member "k"/);
  });
});

describe('RFC 7515 and RFC 7520 examples', () => {
  const { vectors } = readVectors('rfc/jws_examples.json');
  const PINNED = 1300819380 - 3600;

  test('every example gives the expected result for this verifier', async () => {
    const mismatches: unknown[] = [];
    for (const vector of vectors) {
      // ES512 and PS384 are supported now (design §12): valid where the runtime has them, whatever the notes said before.
      const supported = /^(ES512|PS384)$/.test(vector.alg)
        ? (await runtimeLacks(vector.alg === 'ES512' ? 'ES512' : 'PS256')) === undefined
        : undefined;
      if (supported === false)
        console.log(`${runtimeName()} lacks ${vector.alg}: ${vector.name} is expected to be refused`);
      const expected = supported ?? (vector.expected_for_this_verifier ?? vector.expected) === 'valid';
      let got = false;
      if (vector.jwk === null) {
        // alg none: no key verifies it, whatever the key type.
        const sources = [
          secretSource(vectors[0].jwk.k, algorithmsFor('oct')),
          (publicSource(vectors[1].jwk) as { source: KeySource }).source,
        ];
        for (const source of sources) got ||= await accepts(vector.compact, ALGORITHM_NAMES, source);
      } else if (vector.jwk.kty === 'oct') {
        got = await accepts(vector.compact, algorithmsFor('oct'), secretSource(vector.jwk.k, algorithmsFor('oct')));
      } else {
        const route = publicSource(vector.jwk);
        got = typeof route !== 'string' && (await accepts(vector.compact, route.algorithms, route.source));
      }
      if (got !== expected) mismatches.push({ name: vector.name, expected, got });
    }
    assert.deepEqual(mismatches, []);
    const names = vectors.map((v: any) => v.name);
    for (const name of [
      'RFC 7515 A.1 HS256',
      'RFC 7515 A.2 RS256',
      'RFC 7515 A.3 ES256',
      'RFC 7520 4.1 RSA v1.5 signature (RS256)',
    ])
      assert.ok(names.includes(name));
  });

  test('the RFC 7515 A.1-A.3 JWTs pass the whole jwt() path with the clock pinned before exp, and skip as expired with the real clock', async () => {
    const jwts = vectors.filter((v: any) => /^RFC 7515 A\.[123] /.test(v.name));
    assert.equal(jwts.length, 3);
    // The payloads have iss "joe", no sub and no aud: a mapper names the principal.
    const options = {
      issuer: 'joe',
      allowAnyAudience: true,
      principal: (c: Readonly<Record<string, unknown>>) => ({ id: String(c.iss), type: 'service' as const }),
    };
    for (const vector of jwts) {
      const entryAt = (now: () => number) =>
        vector.jwk.kty === 'oct'
          ? // The A.1 key is 64 random bytes, not text: the secret source takes the raw bytes.
            createJwtEntry({
              helper: 'jwt()',
              authenticator: 'jwt',
              source: secretSource(vector.jwk.k, ['HS256']),
              algorithms: ['HS256'],
              ...readEntryOptions('jwt()', { ...options, _internal: { now: () => now() * 1000 } }),
            })
          : jwtAt({ publicKey: vector.jwk, ...options }, now);
      const accepted = await entryAt(() => PINNED)(bearer(vector.compact));
      assert.equal(accepted?.id, 'joe', vector.name);
      assert.equal(accepted?.authenticator, 'jwt');
      assert.equal(await entryAt(() => Date.now() / 1000)(bearer(vector.compact)), null, vector.name);
      assert.equal(
        await entryAt(() => 1300819380 + 60)(bearer(vector.compact)),
        null,
        `${vector.name}: expired at exp + tolerance`,
      );
    }
  });
});
