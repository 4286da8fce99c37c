// Property: for random valid tokens, flipping any single bit anywhere in the token never yields
// acceptance (and never a throw). Seeded; set JWT_PROPERTY_SEED to replay a printed seed.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { JwtOptions } from '../../src/auth/jwt.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import type { AuthFn } from '../../src/auth/types.ts';
import { decodeBase64url, encodeBase64url } from '../../src/auth/jws/base64url.ts';
import {
  AUDIENCE,
  ISSUER,
  NOW,
  SECRET,
  bearer,
  claims,
  hmacSigner,
  signToken,
  testKey,
  type Sign,
} from '../helpers/jwt.ts';

const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
const SEED = Number(env.JWT_PROPERTY_SEED ?? Math.floor(Math.random() * 2 ** 32)) >>> 0;

/** mulberry32: small, fast, good enough to pick test cases. */
function prng(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const TOKENS_PER_ALG = 5;
const STRING_FLIPS = 400;
const BYTE_FLIPS = 100;
let setups: { alg: string; sign: Sign; entry: AuthFn }[];

before(async () => {
  const base = { issuer: ISSUER, audience: AUDIENCE };
  const at = (options: JwtOptions) => jwtAt({ ...options, ...base }, () => NOW);
  const [hs, rs, es256, es384] = await Promise.all([
    hmacSigner(SECRET),
    testKey('RS256'),
    testKey('ES256'),
    testKey('ES384'),
  ]);
  setups = [
    { alg: 'HS256', sign: hs, entry: at({ secret: SECRET }) },
    { alg: 'RS256', sign: rs.sign, entry: at({ publicKey: rs.pem }) },
    { alg: 'ES256', sign: es256.sign, entry: at({ publicKey: es256.jwk }) },
    { alg: 'ES384', sign: es384.sign, entry: at({ publicKey: es384.pem }) },
  ];
});

function randomClaims(random: () => number): Record<string, unknown> {
  const text = (n: number) =>
    Array.from({ length: 1 + Math.floor(random() * n) }, () =>
      String.fromCharCode(32 + Math.floor(random() * 95)),
    ).join('');
  const extra: Record<string, unknown> = { sub: `user-${text(12)}`, jti: text(20) };
  if (random() < 0.5) extra.scope = text(40);
  if (random() < 0.3) extra.nbf = NOW - Math.floor(random() * 100);
  if (random() < 0.3) extra.aud = [text(8), AUDIENCE];
  if (random() < 0.3) extra.n = random() * 1e6;
  return claims(extra);
}

/** Flips bit `bit` of the decoded bytes of segment `index`, re-encoded canonically. */
function flipDecoded(token: string, index: number, bit: number): string {
  const segments = token.split('.');
  const bytes = decodeBase64url(segments[index]!)!;
  bytes[bit >> 3]! ^= 1 << (bit & 7);
  segments[index] = encodeBase64url(bytes);
  return segments.join('.');
}

test('flipping any single bit of a valid token never yields acceptance', async () => {
  const random = prng(SEED);
  let cases = 0;
  for (const { alg, sign, entry } of setups) {
    for (let n = 0; n < TOKENS_PER_ALG; n++) {
      const header: Record<string, unknown> = { alg, typ: 'JWT' };
      if (random() < 0.5) header.kid = `key-${Math.floor(random() * 1000)}`;
      const token = await signToken(header, randomClaims(random), sign);
      assert.ok(await entry(bearer(token)), `seed ${SEED}: the unflipped ${alg} token must be accepted`);
      const flips: { flipped: string; where: string }[] = [];
      for (let i = 0; i < STRING_FLIPS; i++) {
        const position = Math.floor(random() * token.length);
        const bit = Math.floor(random() * 8);
        const flipped =
          token.slice(0, position) +
          String.fromCharCode(token.charCodeAt(position) ^ (1 << bit)) +
          token.slice(position + 1);
        flips.push({ flipped, where: `character ${position} bit ${bit}` });
      }
      for (let i = 0; i < BYTE_FLIPS; i++) {
        const index = Math.floor(random() * 3);
        const length = decodeBase64url(token.split('.')[index]!)!.length;
        const bit = Math.floor(random() * length * 8);
        flips.push({ flipped: flipDecoded(token, index, bit), where: `segment ${index} decoded bit ${bit}` });
      }
      for (const { flipped, where } of flips) {
        let request: Request;
        try {
          request = bearer(flipped);
        } catch {
          continue; // not a valid header value at all (the runtime refuses to build the request)
        }
        cases++;
        let outcome: unknown;
        try {
          outcome = await entry(request);
        } catch (error) {
          assert.fail(`seed ${SEED}: ${alg} token, ${where}: the entry threw ${String(error)}`);
        }
        assert.ok(
          outcome === null || outcome === undefined,
          `seed ${SEED}: ${alg} token, ${where}: accepted a modified token`,
        );
      }
    }
  }
  assert.ok(cases >= 5000, `seed ${SEED}: only ${cases} cases ran`);
});
