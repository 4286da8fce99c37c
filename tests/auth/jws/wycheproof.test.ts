// Wycheproof primitive vectors (HMAC, ECDSA P1363 P-256/P-384/P-521, RSASSA-PKCS1-v1_5, RSASSA-PSS,
// Ed25519) run through the
// verifier's own key import (PEM SubjectPublicKeyInfo and JWK) and its verifySignature().
// Differences from the Wycheproof labels are named per tcId, with the reason, and checked
// against fixtures/vectors/wycheproof_webcrypto_notes.json.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { jwsAlgorithm, type JwsAlgorithm } from '../../../src/auth/jws/algorithms.ts';
import { encodeBase64url } from '../../../src/auth/jws/base64url.ts';
import { importHmacVerifyKey, importVerifyKey, type VerifyKey } from '../../../src/auth/jws/key-source.ts';
import { readPublicJwk, readSpki, readSpkiPem, type PublicKeySpec } from '../../../src/auth/jws/keys.ts';
import { verifySignature } from '../../../src/auth/jws/verify.ts';
import { hexBytes, readVectors, runtimeLacks, runtimeName } from '../../helpers/jwt.ts';

const notes = readVectors('wycheproof_webcrypto_notes.json').files as Record<
  string,
  { caveats?: { tcIds?: number[]; issue: string }[] }
>;

/** The tcIds of the note whose text matches `issue`. */
function notedTcIds(file: string, issue: RegExp): number[] {
  return (notes[file]?.caveats ?? [])
    .filter((c) => issue.test(c.issue))
    .flatMap((c) => c.tcIds ?? [])
    .sort((a, b) => a - b);
}

async function verifies(key: VerifyKey | null, sig: string, msg: string): Promise<boolean> {
  if (key === null) return false;
  try {
    return await verifySignature(key, hexBytes(sig), hexBytes(msg));
  } catch {
    return false;
  }
}

async function importSpec(spec: PublicKeySpec | string, algorithm: JwsAlgorithm): Promise<VerifyKey> {
  assert.equal(typeof spec, 'object', `key refused: ${String(spec)}`);
  return importVerifyKey(spec as PublicKeySpec, algorithm);
}

interface Mismatch {
  tcId: number;
  expected: boolean;
  got: boolean;
}

/** Runs a group's vectors with `key`, collecting every result that differs from the label; answers how many ran. */
async function runGroup(
  key: VerifyKey,
  tests: { tcId: number; result: string; sig: string; msg: string }[],
  mismatches: Mismatch[],
): Promise<number> {
  for (const t of tests) {
    const expected = t.result === 'valid';
    const got = await verifies(key, t.sig, t.msg);
    if (got !== expected) mismatches.push({ tcId: t.tcId, expected, got });
  }
  return tests.length;
}

function report(file: string, route: string, mismatches: Mismatch[], checked: number): void {
  assert.deepEqual(mismatches, [], `${file} via ${route}: ${mismatches.length} of ${checked} vectors disagree`);
  assert.ok(checked > 0);
}

describe('Wycheproof HMAC (HS256, HS384, HS512 primitive)', () => {
  for (const bits of [256, 384, 512]) {
    const file = `hmac_sha${bits}_test.json`;
    test(`${file}: every vector gives the expected result through importHmacVerifyKey and verifySignature`, async () => {
      const data = readVectors(`wycheproof/${file}`);
      const algorithm = jwsAlgorithm(`HS${bits}`)!;
      const truncated: number[] = [];
      const shorterThanHash: number[] = [];
      const mismatches: Mismatch[] = [];
      let checked = 0;
      for (const group of data.testGroups) {
        for (const t of group.tests) {
          // Exceptions, by reason:
          // - truncated tag (tagSize < hash size): JWS never truncates, so the verifier refuses it.
          // - key under 32 bytes: refused at import (spec: HMAC secret minimum 32 bytes).
          // Keys of 32 bytes or more but shorter than the hash (HS512 with 32-byte keys) are
          // accepted: the spec's minimum is 32 bytes for every HS algorithm, not RFC 7518 §3.2's hash size.
          let expected = t.result === 'valid';
          if (group.tagSize < bits) {
            truncated.push(t.tcId);
            if (t.result === 'valid') expected = false;
          }
          if (group.keySize < bits && group.tagSize === bits && t.result === 'valid') shorterThanHash.push(t.tcId);
          if (group.keySize < 256) expected = false;
          let key: VerifyKey | null = null;
          try {
            key = await importHmacVerifyKey(hexBytes(t.key), algorithm);
          } catch {
            assert.ok(group.keySize < 256, `tcId ${t.tcId}: a key of ${group.keySize} bits must import`);
          }
          const got = await verifies(key, t.tag, t.msg);
          checked++;
          if (got !== expected) mismatches.push({ tcId: t.tcId, expected, got });
        }
      }
      report(file, 'raw key', mismatches, checked);
      const validTruncated = data.testGroups
        .filter((g: any) => g.tagSize < bits)
        .flatMap((g: any) => g.tests.filter((t: any) => t.result === 'valid').map((t: any) => t.tcId));
      assert.deepEqual(validTruncated, notedTcIds(file, /truncated tags/));
      // The notes name the valid vectors whose key is shorter than the hash: refused here when under 32 bytes, accepted otherwise (HS512 with 32-byte keys).
      assert.deepEqual(shorterThanHash, notedTcIds(file, /key is shorter than the hash output/));
    });
  }
});

/** A JWK from Wycheproof `wx`/`wy`: strip the sign byte, left-pad to the field size (vectors README). */
function jwkFromCoordinates(publicKey: { curve: string; wx: string; wy: string }): JsonWebKey {
  const size = ({ secp256r1: 32, secp384r1: 48, secp521r1: 66 } as Record<string, number>)[publicKey.curve]!;
  const coordinate = (hex: string) => {
    const bytes = hexBytes(hex.length % 2 ? `0${hex}` : hex);
    const value = bytes.subarray(Math.max(0, bytes.length - size));
    const padded = new Uint8Array(size);
    padded.set(value, size - value.length);
    return encodeBase64url(padded);
  };
  return {
    kty: 'EC',
    crv: `P-${size === 66 ? 521 : size * 8}`,
    x: coordinate(publicKey.wx),
    y: coordinate(publicKey.wy),
  };
}

/** True when this runtime lacks `alg`: the test says so and checks that tokens of it skip elsewhere (tests/auth/jwt-algorithms.test.ts). */
async function lacking(alg: string, file: string): Promise<boolean> {
  const why = await runtimeLacks(alg);
  if (why !== undefined) console.log(`${runtimeName()} lacks ${alg} (${why}): ${file} is not run here`);
  return why !== undefined;
}

describe('Wycheproof ECDSA P1363 (ES256, ES384, ES512 primitive)', () => {
  const files = [
    ['ecdsa_secp256r1_sha256_p1363_test.json', 'ES256'],
    ['ecdsa_secp384r1_sha384_p1363_test.json', 'ES384'],
    ['ecdsa_secp521r1_sha512_p1363_test.json', 'ES512'],
  ] as const;
  for (const [file, alg] of files) {
    for (const route of ['PEM', 'DER', 'JWK'] as const) {
      test(`${file} via ${route}: every vector gives the expected result`, async () => {
        if (await lacking(alg, file)) return;
        const data = readVectors(`wycheproof/${file}`);
        const algorithm = jwsAlgorithm(alg)!;
        const mismatches: Mismatch[] = [];
        const builtJwk: number[] = [];
        let checked = 0;
        for (const group of data.testGroups) {
          let spec: PublicKeySpec | string;
          if (route === 'PEM') spec = readSpkiPem(group.publicKeyPem);
          else if (route === 'DER') spec = readSpki(hexBytes(group.publicKeyDer));
          else {
            // Groups without publicKeyJwk (vectors README): built from wx/wy.
            if (group.publicKeyJwk === undefined) builtJwk.push(...group.tests.map((t: any) => t.tcId));
            const { kid: _kid, ...jwk } = group.publicKeyJwk ?? jwkFromCoordinates(group.publicKey);
            spec = readPublicJwk(jwk);
          }
          const key = await importSpec(spec, algorithm);
          checked += await runGroup(key, group.tests, mismatches);
        }
        report(file, route, mismatches, checked);
        if (route === 'JWK' && alg !== 'ES512')
          assert.deepEqual(
            builtJwk.sort((a, b) => a - b),
            notedTcIds(file, /without publicKeyJwk/),
          );
      });
    }
  }
});

const RSA_FILES = [2048, 3072, 4096].flatMap((size) =>
  [256, 384, 512].map((hash) => [`rsa_signature_${size}_sha${hash}_test.json`, `RS${hash}`] as const),
);

describe('Wycheproof RSASSA-PKCS1-v1_5 (RS256, RS384, RS512 primitive), 2048 to 4096 bits', () => {
  for (const [file, alg] of RSA_FILES) {
    test(`${file} via PEM and JWK: every vector gives the expected result`, async () => {
      const data = readVectors(`wycheproof/${file}`);
      const algorithm = jwsAlgorithm(alg)!;
      const acceptable: number[] = [];
      for (const route of ['PEM', 'JWK'] as const) {
        const mismatches: Mismatch[] = [];
        let checked = 0;
        for (const group of data.testGroups) {
          const spec = route === 'PEM' ? readSpkiPem(group.publicKeyPem) : readPublicJwk(group.keyJwk);
          const key = await importSpec(spec, algorithm);
          for (const t of group.tests) {
            // "acceptable" (MissingNull: DigestInfo without NULL) is refused: Web Crypto rejects it on every runtime.
            if (t.result === 'acceptable' && route === 'PEM') acceptable.push(t.tcId);
            const expected = t.result === 'valid';
            const got = await verifies(key, t.sig, t.msg);
            checked++;
            if (got !== expected) mismatches.push({ tcId: t.tcId, expected, got });
          }
        }
        report(file, route, mismatches, checked);
      }
      assert.deepEqual(acceptable, notedTcIds(file, /acceptable/));
    });
  }
});

const PSS_FILES = [
  ['rsa_pss_2048_sha256_mgf1_32_test.json', 'PS256'],
  ['rsa_pss_2048_sha384_mgf1_48_test.json', 'PS384'],
  ['rsa_pss_3072_sha256_mgf1_32_test.json', 'PS256'],
  ['rsa_pss_4096_sha256_mgf1_32_test.json', 'PS256'],
  ['rsa_pss_4096_sha384_mgf1_48_test.json', 'PS384'],
  ['rsa_pss_4096_sha512_mgf1_64_test.json', 'PS512'],
] as const;

describe('Wycheproof RSASSA-PSS (PS256, PS384, PS512 primitive: MGF1 with the same hash, salt = hash length)', () => {
  for (const [file, alg] of PSS_FILES) {
    test(`${file} via PEM and JWK: every vector gives the expected result`, async () => {
      if (await lacking('PS256', file)) return;
      const data = readVectors(`wycheproof/${file}`);
      const algorithm = jwsAlgorithm(alg)!;
      for (const route of ['PEM', 'JWK'] as const) {
        const mismatches: Mismatch[] = [];
        let checked = 0;
        for (const group of data.testGroups) {
          // The JWS parameters of the algorithm, and nothing else, are what these files test.
          assert.equal(group.sLen, Number(alg.slice(2)) / 8);
          assert.equal(group.mgfSha, group.sha);
          const { kid: _kid, ...jwk } = group.publicKeyJwk;
          assert.equal(jwk.alg, alg);
          const key = await importSpec(
            route === 'PEM' ? readSpkiPem(group.publicKeyPem) : readPublicJwk(jwk),
            algorithm,
          );
          checked += await runGroup(key, group.tests, mismatches);
        }
        report(file, route, mismatches, checked);
      }
    });
  }
});

describe('Wycheproof Ed25519 (EdDSA primitive)', () => {
  const file = 'ed25519_test.json';
  for (const route of ['PEM', 'DER', 'JWK'] as const) {
    test(`${file} via ${route}: every vector gives the expected result`, async () => {
      if (await lacking('EdDSA', file)) return;
      const data = readVectors(`wycheproof/${file}`);
      const algorithm = jwsAlgorithm('EdDSA')!;
      const mismatches: Mismatch[] = [];
      let checked = 0;
      for (const group of data.testGroups) {
        const { kid: _kid, ...jwk } = group.publicKeyJwk;
        const spec =
          route === 'PEM'
            ? readSpkiPem(group.publicKeyPem)
            : route === 'DER'
              ? readSpki(hexBytes(group.publicKeyDer))
              : readPublicJwk(jwk);
        const key = await importSpec(spec, algorithm);
        checked += await runGroup(key, group.tests, mismatches);
      }
      report(file, route, mismatches, checked);
    });
  }
});
