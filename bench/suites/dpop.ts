// Suite `dpop` (design §16, issue 29): one request with an ES256 access token, as Bearer and as
// DPoP with an ES256 proof, through the jwt() entry on a prebuilt Request, beside the floor (raw
// crypto.subtle.verify of the token on an imported key). A DPoP request is two verifies and a
// hash: target ≤ 2.3x the cost of the Bearer one. With the token cache on, the token's verify is
// skipped and the proof's stays: target ≥ 1.8x faster than without. The proof's replay check
// here is a store that forgets (one proof serves every iteration); `replay-memory` measures the
// default store on its own, with a fresh key per call.
import { jwt } from '../../src/auth/index.ts';
import { jwkThumbprint } from '../../src/auth/dpop.ts';
import { memoryReplayStore } from '../../src/auth/dpop-replay.ts';
import { encodeBase64url } from '../../src/auth/jws/base64url.ts';
import type { SuiteSpec } from '../lib.ts';

const ISSUER = 'https://issuer.example.com';
const AUDIENCE = 'agent-api';
const URL_ = 'https://agent.example/agent';
const encoder = new TextEncoder();
const b64json = (value: unknown) => encodeBase64url(encoder.encode(JSON.stringify(value)));
const ES256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;

async function keyPair() {
  const pair = (await crypto.subtle.generateKey(ES256, true, ['sign', 'verify'])) as CryptoKeyPair;
  const { key_ops: _ops, ext: _ext, ...jwk } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  return { pair, jwk };
}

async function signed(
  header: unknown,
  payload: unknown,
  key: CryptoKey,
): Promise<{ jws: string; input: Uint8Array<ArrayBuffer>; signature: Uint8Array<ArrayBuffer> }> {
  const text = `${b64json(header)}.${b64json(payload)}`;
  const input = encoder.encode(text);
  const signature = new Uint8Array(await crypto.subtle.sign(SIGN, key, input));
  return { jws: `${text}.${encodeBase64url(signature)}`, input, signature };
}

export default async function suites(): Promise<SuiteSpec[]> {
  const tokenKey = await keyPair();
  const proofKey = await keyPair();
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub: 'user-1234', iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 24 * 3600 };
  const bearer = await signed({ alg: 'ES256', typ: 'JWT' }, claims, tokenKey.pair.privateKey);
  const bound = await signed(
    { alg: 'ES256', typ: 'JWT' },
    { ...claims, cnf: { jkt: await jwkThumbprint(proofKey.jwk as Record<string, unknown>) } },
    tokenKey.pair.privateKey,
  );
  const ath = encodeBase64url(new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(bound.jws))));
  const proof = await signed(
    { typ: 'dpop+jwt', alg: 'ES256', jwk: proofKey.jwk },
    { jti: 'bench-proof', htm: 'GET', htu: URL_, iat: now, ath },
    proofKey.pair.privateKey,
  );
  const verifyKey = await crypto.subtle.importKey(
    'spki',
    await crypto.subtle.exportKey('spki', tokenKey.pair.publicKey),
    ES256,
    false,
    ['verify'],
  );

  const forgets = { seen: () => false };
  const entry = (cache: boolean) =>
    jwt({ publicKey: tokenKey.jwk, issuer: ISSUER, audience: AUDIENCE, dpop: 'allowed', dpopReplay: forgets, cache });
  const bearerRequest = new Request(URL_, { headers: { authorization: `Bearer ${bearer.jws}` } });
  const dpopRequest = new Request(URL_, { headers: { authorization: `DPoP ${bound.jws}`, dpop: proof.jws } });
  const [plain, cached] = [entry(false), entry(true)];
  for (const [auth, request] of [
    [plain, bearerRequest],
    [plain, dpopRequest],
    [cached, bearerRequest],
    [cached, dpopRequest],
  ] as const) {
    if ((await auth(request))?.id !== 'user-1234') throw new Error('dpop suite: a fixture request is not accepted');
  }
  const replay = memoryReplayStore(100_000);
  let n = 0;

  return [
    {
      suite: 'dpop',
      baseline: 'floor-es256-verify',
      cases: {
        'floor-es256-verify': () => crypto.subtle.verify(SIGN, verifyKey, bearer.signature, bearer.input),
        'bearer-es256': () => plain(bearerRequest),
        'dpop-es256-es256': () => plain(dpopRequest),
        'bearer-es256-cached': () => cached(bearerRequest),
        'dpop-es256-es256-cached': () => cached(dpopRequest),
        'replay-memory': () => replay.seen(`key-${n++}`, now + 3600),
      },
      note: 'dpop-*: an ES256 access token with an ES256 proof (two verifies, a SHA-256 of the token, a thumbprint); *-cached: the token cache on (the proof is checked on every request)',
      verdict: (ops) => {
        const cost = ops['bearer-es256']! / ops['dpop-es256-es256']!;
        const gain = ops['dpop-es256-es256-cached']! / ops['dpop-es256-es256']!;
        return `a DPoP request costs ${cost.toFixed(2)}x the Bearer one (target ≤ 2.3x: ${cost <= 2.3 ? 'met' : 'MISSED'}); with the cache on it is ${gain.toFixed(2)}x faster (target ≥ 1.8x: ${gain >= 1.8 ? 'met' : 'MISSED'})`;
      },
    },
  ];
}
