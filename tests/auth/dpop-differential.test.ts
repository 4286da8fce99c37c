// Design §16: our DPoP verdict against a reference nobody here wrote, oauth4webapi's
// validateJwtAccessToken (RFC 6750, RFC 9068, RFC 9449), on the same tokens and proofs: a table of
// valid proofs and of proofs with one defect each, where both define the outcome (the reference
// checks no replay and allows an iat up to 300 s ahead: those cases are left out). Then the proof's
// own signature against Project Wycheproof's vectors (fixtures/vectors), through the proof key path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import { routeAuth } from '../../src/auth/index.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { proofSignatureVerifies } from '../../src/auth/dpop.ts';
import { jwsAlgorithm } from '../../src/auth/jws/algorithms.ts';
import { decodeBase64url, encodeBase64url } from '../../src/auth/jws/base64url.ts';
import { AUDIENCE, ISSUER, NOW, hexBytes, readVectors, signToken, testKey } from '../helpers/jwt.ts';
import { dpopProof, newJti, thumbprint } from '../helpers/dpop.ts';

const URL_ = 'https://agent.example.com/agent';
const tokenKey = await testKey('ES256');
const proofKey = await testKey('ES256');
const otherKey = await testKey('ES256');
const jkt = await thumbprint(proofKey.jwk);
const jwks = { keys: [{ ...tokenKey.jwk, kid: 'at', alg: 'ES256', use: 'sig' }] };
const as: oauth.AuthorizationServer = { issuer: ISSUER, jwks_uri: 'https://issuer.example.com/jwks' };

const accessToken = (extra: Record<string, unknown> = {}) =>
  signToken(
    { alg: 'ES256', typ: 'at+jwt', kid: 'at' },
    {
      iss: ISSUER,
      aud: AUDIENCE,
      sub: 'user-1',
      client_id: 'client-1',
      jti: newJti(),
      iat: NOW - 10,
      exp: NOW + 600,
      cnf: { jkt },
      ...extra,
    },
    tokenKey.sign,
  );

async function theirs(request: Request): Promise<boolean> {
  try {
    await oauth.validateJwtAccessToken(as, request, AUDIENCE, {
      [oauth.customFetch]: async () => Response.json(jwks),
      [oauth.clockSkew]: NOW - Math.floor(Date.now() / 1000),
      signingAlgorithms: ['ES256', 'EdDSA', 'RS256', 'PS256'],
    });
    return true;
  } catch {
    return false;
  }
}

const ours = async (request: Request) =>
  (
    await routeAuth(
      jwtAt({ publicKey: tokenKey.jwk, issuer: ISSUER, audience: AUDIENCE, typ: 'at+jwt', dpop: 'allowed' }, () => NOW),
    )(request)
  ).ok;

function request(
  scheme: string,
  token: string,
  proof: string | string[] | undefined,
  method = 'GET',
  url = URL_,
): Request {
  const headers = new Headers({ authorization: `${scheme} ${token}` });
  for (const value of proof === undefined ? [] : Array.isArray(proof) ? proof : [proof]) headers.append('dpop', value);
  return new Request(url, { method, headers });
}

test("differential: our accept/refuse equals oauth4webapi.validateJwtAccessToken's on valid and defective proofs", async () => {
  const table: [string, boolean, (token: string) => Promise<Request>][] = [
    ['a valid ES256 proof', true, async (t) => request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW }))],
    [
      'a valid EdDSA proof (a token bound to that key)',
      true,
      async () => {
        const key = await testKey('EdDSA');
        const t = await accessToken({ cnf: { jkt: await thumbprint(key.jwk) } });
        return request('DPoP', t, await dpopProof(key, { token: t, iat: NOW }));
      },
    ],
    [
      'a valid proof, POST',
      true,
      async (t) => request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW, htm: 'POST' }), 'POST'),
    ],
    [
      'htu with a query and fragment',
      true,
      async (t) => request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW, htu: `${URL_}?a=1#b` })),
    ],
    [
      'htu with upper-case host and the default port',
      true,
      async (t) =>
        request(
          'DPoP',
          t,
          await dpopProof(proofKey, { token: t, iat: NOW, htu: 'https://AGENT.example.com:443/agent' }),
        ),
    ],
    ['iat 100 s ago', true, async (t) => request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW - 100 }))],
    ['no DPoP header', false, async (t) => request('DPoP', t, undefined)],
    [
      'two DPoP headers',
      false,
      async (t) =>
        request('DPoP', t, [
          await dpopProof(proofKey, { token: t, iat: NOW }),
          await dpopProof(proofKey, { token: t, iat: NOW }),
        ]),
    ],
    ['the bound token as Bearer, without a proof', false, async (t) => request('Bearer', t, undefined)],
    [
      'the bound token as Bearer, with a proof',
      false,
      async (t) => request('Bearer', t, await dpopProof(proofKey, { token: t, iat: NOW })),
    ],
    [
      'an unbound token with the DPoP scheme',
      false,
      async () => {
        const t = await accessToken({ cnf: undefined });
        return request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW }));
      },
    ],
    [
      'typ JWT',
      false,
      async (t) => request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW, header: { typ: 'JWT' } })),
    ],
    [
      'alg none',
      false,
      async (t) => {
        const [h, p] = (await dpopProof(proofKey, { token: t, iat: NOW, header: { alg: 'none' } })).split('.');
        return request('DPoP', t, `${h}.${p}.`);
      },
    ],
    [
      'a jwk with its private member d',
      false,
      async (t) =>
        request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW, header: { jwk: proofKey.privateJwk } })),
    ],
    [
      'no jwk',
      false,
      async (t) => request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW, header: { jwk: undefined } })),
    ],
    [
      'a signature by another key',
      false,
      async (t) => request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW, signWith: otherKey })),
    ],
    [
      'a corrupted signature',
      false,
      async (t) => {
        const proof = await dpopProof(proofKey, { token: t, iat: NOW });
        const signature = decodeBase64url(proof.split('.')[2]!)!;
        signature[10]! ^= 1;
        return request('DPoP', t, `${proof.split('.').slice(0, 2).join('.')}.${encodeBase64url(signature)}`);
      },
    ],
    [
      'htm POST on a GET',
      false,
      async (t) => request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW, htm: 'POST' })),
    ],
    [
      'htm in lower case',
      false,
      async (t) => request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW, htm: 'get' })),
    ],
    [
      'htu another path',
      false,
      async (t) => request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW, htu: `${URL_}/chat` })),
    ],
    [
      'htu another origin',
      false,
      async (t) =>
        request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW, htu: 'https://evil.example/agent' })),
    ],
    [
      'iat 1,000 s ago',
      false,
      async (t) => request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW - 1000 })),
    ],
    [
      'iat 1,000 s ahead',
      false,
      async (t) => request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW + 1000 })),
    ],
    ['iat missing', false, async (t) => request('DPoP', t, await dpopProof(proofKey, { token: t }))],
    [
      'jti missing',
      false,
      async (t) => request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW, claims: { jti: undefined } })),
    ],
    ['ath missing', false, async (t) => request('DPoP', t, await dpopProof(proofKey, { iat: NOW }))],
    [
      'ath of another token',
      false,
      async (t) => request('DPoP', t, await dpopProof(proofKey, { iat: NOW, token: `${t}x` })),
    ],
    [
      'a proof key that is not the bound one',
      false,
      async (t) => request('DPoP', t, await dpopProof(otherKey, { token: t, iat: NOW })),
    ],
    [
      'a header with crit',
      false,
      async (t) =>
        request('DPoP', t, await dpopProof(proofKey, { token: t, iat: NOW, header: { crit: ['b64'], b64: true } })),
    ],
  ];
  const rows: string[] = [];
  for (const [name, expected, make] of table) {
    const token = await accessToken();
    const built = await make(token);
    const [mine, reference] = [await ours(built.clone()), await theirs(built.clone())];
    rows.push(`${name}: ours ${mine ? 'accept' : 'refuse'}, oauth4webapi ${reference ? 'accept' : 'refuse'}`);
    assert.equal(reference, expected, `oauth4webapi on "${name}"`);
    assert.equal(mine, reference, `"${name}": ours and oauth4webapi's disagree`);
  }
  assert.equal(rows.length, table.length);
});

/** A Wycheproof group's public key as the proof's `jwk` header would carry it: its JWK's public members. */
function groupJwk(group: any): Record<string, unknown> | undefined {
  const jwk = group.publicKeyJwk ?? group.keyJwk;
  if (jwk === undefined) return undefined;
  return Object.fromEntries(
    ['kty', 'crv', 'x', 'y', 'n', 'e'].filter((name) => jwk[name] !== undefined).map((name) => [name, jwk[name]]),
  );
}

test('the proof signature path against Project Wycheproof: ES256, EdDSA, RS256 and PS256 vectors give their expected result', async () => {
  const files: [string, string][] = [
    ['wycheproof/ecdsa_secp256r1_sha256_p1363_test.json', 'ES256'],
    ['wycheproof/ed25519_test.json', 'EdDSA'],
    ['wycheproof/rsa_signature_2048_sha256_test.json', 'RS256'],
    ['wycheproof/rsa_pss_2048_sha256_mgf1_32_test.json', 'PS256'],
  ];
  for (const [file, alg] of files) {
    const vectors = readVectors(file);
    let checked = 0;
    let invalidRefused = 0;
    for (const group of vectors.testGroups) {
      const jwk = groupJwk(group);
      if (jwk === undefined) continue;
      for (const vector of group.tests) {
        // "acceptable" vectors (legacy encodings) have no single expected answer.
        if (vector.result === 'acceptable') continue;
        const verified = await proofSignatureVerifies(
          jwk,
          jwsAlgorithm(alg)!,
          hexBytes(vector.sig),
          hexBytes(vector.msg),
        );
        assert.equal(verified, vector.result === 'valid', `${file} #${vector.tcId} (${vector.comment})`);
        checked++;
        if (vector.result === 'invalid') invalidRefused++;
      }
    }
    assert.ok(
      checked > 50 && invalidRefused > 20,
      `${file}: ${checked} vectors, ${invalidRefused} invalid ones refused`,
    );
  }
});
