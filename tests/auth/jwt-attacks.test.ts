// Attacks on jwt(), each its own test: every one must end in the same 401 (a skip), never a 500 or an accept.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import type { JwtOptions } from '../../src/auth/jwt.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { encodeBase64url } from '../../src/auth/jws/base64url.ts';
import {
  AUDIENCE,
  ISSUER,
  NOW,
  SECRET,
  b64,
  b64json,
  claims,
  encoder,
  hmacSigner,
  signToken,
  statusOf,
  testKey,
  type Sign,
  type TestKey,
} from '../helpers/jwt.ts';

const at = (options: JwtOptions) => jwtAt(options, () => NOW);
const base = { issuer: ISSUER, audience: AUDIENCE };
let hs256: Sign;
let rsa: TestKey;
let es256: TestKey;
let es384: TestKey;
let attacker: TestKey;

before(async () => {
  [hs256, rsa, es256, es384, attacker] = await Promise.all([
    hmacSigner(SECRET),
    testKey('RS256'),
    testKey('ES256'),
    testKey('ES384'),
    testKey('ES256'),
  ]);
});

const hsEntry = () => at({ secret: SECRET, ...base });
/** Signs raw header and payload JSON text with HS256. */
const hsRaw = (header: string, payload: string) => signToken(header, payload, hs256);

describe('attacks on the header', () => {
  test('alg none in any letter case, with or without a signature, is refused by every key type', async () => {
    const entries = [hsEntry(), at({ publicKey: rsa.pem, ...base }), at({ publicKey: es256.jwk, ...base })];
    for (const alg of ['none', 'None', 'NONE', 'nOnE', 'none ']) {
      const unsigned = await signToken({ alg }, claims());
      const signed = await signToken({ alg }, claims(), hs256);
      for (const entry of entries) {
        assert.equal(await statusOf(entry, unsigned), 401, `${alg} unsigned`);
        assert.equal(await statusOf(entry, signed), 401, `${alg} signed`);
      }
    }
  });

  test('an RS256 public key given as an HS256 secret (PEM text, DER, JWK JSON) is refused', async () => {
    const entries = [at({ publicKey: rsa.pem, ...base }), at({ publicKey: rsa.jwk, ...base })];
    const materials = [
      encoder.encode(rsa.pem),
      encoder.encode(rsa.pem.trim()),
      rsa.spki,
      encoder.encode(JSON.stringify(rsa.jwk)),
    ];
    for (const entry of entries) {
      for (const material of materials) {
        for (const alg of ['HS256', 'HS384', 'HS512']) {
          const token = await signToken({ alg }, claims(), await hmacSigner(material as Uint8Array<ArrayBuffer>, alg));
          assert.equal(await statusOf(entry, token), 401);
        }
      }
    }
  });

  test('every other key/alg confusion is refused', async () => {
    const cases: [JwtOptions, string, Sign][] = [
      [{ secret: SECRET }, 'RS256', rsa.sign],
      [{ secret: SECRET }, 'ES256', es256.sign],
      [{ publicKey: es256.pem }, 'HS256', await hmacSigner(es256.spki)],
      [{ publicKey: es256.pem }, 'ES384', es384.sign],
      [{ publicKey: es256.pem }, 'RS256', rsa.sign],
      [{ publicKey: es384.jwk }, 'ES256', es256.sign],
      [{ publicKey: rsa.pem }, 'ES256', es256.sign],
      [{ publicKey: rsa.pem }, 'RS384', rsa.sign],
      [{ publicKey: rsa.pem, algorithms: ['RS256'] }, 'RS512', rsa.sign],
    ];
    for (const [options, alg, sign] of cases) {
      assert.equal(
        await statusOf(at({ ...options, ...base }), await signToken({ alg }, claims(), sign)),
        401,
        `${alg} against ${Object.keys(options)}`,
      );
    }
  });

  test('crit in the header is refused, whatever it lists', async () => {
    for (const crit of [['exp'], ['b64'], [], 'b64', null]) {
      const token = await signToken({ alg: 'HS256', crit, exp: 1, b64: true }, claims(), hs256);
      assert.equal(await statusOf(hsEntry(), token), 401);
    }
  });

  test('jku, x5u, jwk and x5c headers pointing at attacker keys are ignored', async () => {
    const originalFetch = globalThis.fetch;
    let fetches = 0;
    globalThis.fetch = (async () => {
      fetches++;
      throw new Error('no fetch expected');
    }) as typeof fetch;
    try {
      const entry = at({ publicKey: es256.pem, ...base });
      const headers = [
        { jwk: attacker.jwk },
        { jku: 'https://attacker.example/jwks.json' },
        { x5u: 'https://attacker.example/cert.pem' },
        { x5c: [encodeBase64url(attacker.spki)] },
        { jwk: attacker.jwk, jku: 'https://attacker.example/jwks.json', kid: 'attacker' },
      ];
      for (const extra of headers) {
        assert.equal(await statusOf(entry, await signToken({ alg: 'ES256', ...extra }, claims(), attacker.sign)), 401);
        // The same headers on a token signed by the configured key change nothing: they are not read.
        assert.equal(await statusOf(entry, await signToken({ alg: 'ES256', ...extra }, claims(), es256.sign)), 200);
      }
      assert.equal(fetches, 0);
    } finally {
      globalThis.fetch = originalFetch;
    }
  });

  test('a duplicated header member is refused, whichever copy is the real one', async () => {
    for (const header of [
      '{"alg":"HS256","alg":"none"}',
      '{"alg":"none","alg":"HS256"}',
      '{"alg":"HS256","alg":"HS256"}',
      '{"alg":"HS256","kid":"a","kid":"b"}',
    ]) {
      assert.equal(await statusOf(hsEntry(), await hsRaw(header, JSON.stringify(claims()))), 401, header);
    }
    assert.equal(await statusOf(hsEntry(), await hsRaw('{"alg":"HS256","kid":"a"}', JSON.stringify(claims()))), 200);
  });

  test('a header that is not a JSON object, or has a non-string alg or kid, is refused', async () => {
    for (const header of [
      '[]',
      '"HS256"',
      '{"alg":["HS256"]}',
      '{"alg":"HS256","kid":7}',
      '{"alg":"HS256"',
      '\uFEFF{"alg":"HS256"}',
      '{"alg":"HS256"} x',
    ]) {
      assert.equal(await statusOf(hsEntry(), await hsRaw(header, JSON.stringify(claims()))), 401, header);
    }
  });
});

describe('attacks on the signature and the serialization', () => {
  test('ECDSA r = s = 0 (and other psychic signatures) is refused', async () => {
    const entry = at({ publicKey: es256.jwk, ...base });
    const input = `${b64json({ alg: 'ES256' })}.${b64json(claims())}`;
    const n = 'ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551';
    const hex = (h: string) => Uint8Array.from(h.match(/../g)!, (x) => parseInt(x, 16));
    const zero = '00'.repeat(32);
    for (const [r, s] of [
      [zero, zero],
      [zero, n],
      [n, n],
      [n, zero],
    ]) {
      assert.equal(await statusOf(entry, `${input}.${encodeBase64url(hex(r! + s!))}`), 401);
    }
  });

  test('a DER-encoded ECDSA signature is refused (JWS uses raw r||s)', async () => {
    const entry = at({ publicKey: es256.jwk, ...base });
    const input = `${b64json({ alg: 'ES256' })}.${b64json(claims())}`;
    const raw = await es256.sign(encoder.encode(input));
    assert.equal(await statusOf(entry, `${input}.${encodeBase64url(raw)}`), 200);
    const integer = (bytes: Uint8Array) => {
      let start = 0;
      while (start < bytes.length - 1 && bytes[start] === 0) start++;
      const value = bytes[start]! >= 0x80 ? [0, ...bytes.subarray(start)] : [...bytes.subarray(start)];
      return [0x02, value.length, ...value];
    };
    const body = [...integer(raw.subarray(0, 32)), ...integer(raw.subarray(32))];
    const der = Uint8Array.from([0x30, body.length, ...body]);
    assert.equal(await statusOf(entry, `${input}.${encodeBase64url(der)}`), 401);
  });

  test('a JWE (five segments), and two or four segments, are refused', async () => {
    const valid = await signToken({ alg: 'HS256' }, claims(), hs256);
    const [h, p, s] = valid.split('.');
    const jwe = `${b64json({ alg: 'dir', enc: 'A256GCM' })}..${b64('iv')}.${b64('ciphertext')}.${b64('tag')}`;
    for (const token of [jwe, `${h}.${p}.${s}.${s}.${s}`, `${h}.${p}`, `${h}.${p}.${s}.`, `${h}.${p}.${s}.${s}`]) {
      assert.equal(await statusOf(hsEntry(), token), 401, token.slice(0, 30));
    }
    assert.equal(await statusOf(hsEntry(), valid), 200);
  });

  test('an empty signature is refused', async () => {
    const valid = await signToken({ alg: 'HS256' }, claims(), hs256);
    assert.equal(await statusOf(hsEntry(), valid.slice(0, valid.lastIndexOf('.') + 1)), 401);
    const es = await signToken({ alg: 'ES256' }, claims(), es256.sign);
    assert.equal(await statusOf(at({ publicKey: es256.pem, ...base }), es.slice(0, es.lastIndexOf('.') + 1)), 401);
  });

  test('padding, or + and / instead of - and _, in base64url is refused', async () => {
    let token = '';
    for (let i = 0; !/[-_]/.test(token.split('.')[2] ?? ''); i++)
      token = await signToken({ alg: 'HS256' }, claims({ jti: String(i) }), hs256);
    assert.equal(await statusOf(hsEntry(), token), 200);
    const [h, p, s] = token.split('.') as [string, string, string];
    const standard = (text: string) => text.replace(/-/g, '+').replace(/_/g, '/');
    const padded = (text: string) => text + '='.repeat((4 - (text.length % 4)) % 4 || 4);
    for (const forged of [
      `${h}.${p}.${standard(s)}`,
      `${h}.${p}.${padded(s)}`,
      `${h}.${p}.${s}=`,
      `${h}.${p}.${s}==`,
    ]) {
      assert.equal(await statusOf(hsEntry(), forged), 401, forged.slice(-8));
    }
    // A header with padding, re-signed: refused by the parser, not by the signature.
    const paddedHeader = `${b64json({ alg: 'HS256', typ: 'JWT' })}==`;
    const input = `${paddedHeader}.${p}`;
    const resigned = `${input}.${encodeBase64url(await hs256(encoder.encode(input)))}`;
    assert.equal(await statusOf(hsEntry(), resigned), 401);
  });

  test('a non-canonical base64url character (unused bits set) is refused', async () => {
    const token = await signToken({ alg: 'HS256' }, claims(), hs256);
    const [h, p, s] = token.split('.') as [string, string, string];
    // A 32-byte tag is 43 characters: the last one carries 2 unused bits.
    const last = s.charCodeAt(s.length - 1);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = alphabet[alphabet.indexOf(String.fromCharCode(last)) | 1]!;
    assert.notEqual(sibling, s.at(-1));
    assert.equal(await statusOf(hsEntry(), `${h}.${p}.${s.slice(0, -1)}${sibling}`), 401);
  });

  test('a token over 16 KiB is refused; one just under it is accepted', async () => {
    const header = { alg: 'HS256' };
    const overhead = (await signToken(header, claims({ pad: '' }), hs256)).length;
    const underBytes = Math.floor(((16 * 1024 - overhead - 16) * 3) / 4);
    const under = await signToken(header, claims({ pad: 'x'.repeat(underBytes) }), hs256);
    const over = await signToken(header, claims({ pad: 'x'.repeat(underBytes + 100) }), hs256);
    assert.ok(under.length <= 16 * 1024 - 7 && over.length > 16 * 1024);
    assert.equal(await statusOf(hsEntry(), under), 200);
    assert.equal(await statusOf(hsEntry(), over), 401);
  });
});

describe('attacks on the claims', () => {
  const payloadStatus = async (payload: string) => statusOf(hsEntry(), await hsRaw('{"alg":"HS256"}', payload));
  const withExp = (exp: string) => `{"sub":"user-1","iss":"${ISSUER}","aud":"${AUDIENCE}","exp":${exp}}`;

  test('exp as a string is refused', async () => {
    assert.equal(await payloadStatus(withExp(`"${NOW + 600}"`)), 401);
    assert.equal(await payloadStatus(withExp(String(NOW + 600))), 200);
  });

  test('exp of 1e400 (Infinity once parsed) is refused', async () => {
    assert.equal(await payloadStatus(withExp('1e400')), 401);
    assert.equal(await payloadStatus(withExp('-1e400')), 401);
  });

  test('NaN-producing and non-number time claims are refused', async () => {
    for (const exp of ['NaN', 'null', 'true', '[]', '{}', `[${NOW + 600}]`, '"abc"', '0x7fffffff']) {
      assert.equal(await payloadStatus(withExp(exp)), 401, exp);
    }
    for (const claim of ['nbf', 'iat']) {
      for (const value of ['"1"', 'null', '1e400', '[]']) {
        assert.equal(await payloadStatus(withExp(`${NOW + 600},"${claim}":${value}`)), 401, `${claim} ${value}`);
      }
    }
  });

  test('a negative exp is refused; a huge finite exp is a far-future expiry, not wrapped into the past', async () => {
    assert.equal(await payloadStatus(withExp('-1')), 401);
    assert.equal(await payloadStatus(withExp('0')), 401);
    assert.equal(await payloadStatus(withExp(String(-(2 ** 63)))), 401);
    assert.equal(await payloadStatus(withExp(String(2 ** 64))), 200);
    assert.equal(await payloadStatus(withExp('1e300')), 200);
  });

  test('nbf or iat in the future beyond the tolerance is refused, however far', async () => {
    for (const value of [NOW + 61, NOW + 86_400, 2 ** 64, 1e300]) {
      assert.equal(await payloadStatus(withExp(`${NOW + 600},"nbf":${value}`)), 401);
      assert.equal(await payloadStatus(withExp(`${NOW + 600},"iat":${value}`)), 401);
    }
  });

  test('aud of mixed types, or of another type, is refused', async () => {
    for (const aud of [[AUDIENCE, 1], [AUDIENCE, null], [[AUDIENCE]], 1, null, { aud: AUDIENCE }, true]) {
      assert.equal(
        await statusOf(hsEntry(), await signToken({ alg: 'HS256' }, claims({ aud }), hs256)),
        401,
        JSON.stringify(aud),
      );
    }
    const anyAudience = at({ secret: SECRET, issuer: ISSUER, allowAnyAudience: true });
    assert.equal(
      await statusOf(anyAudience, await signToken({ alg: 'HS256' }, claims({ aud: [AUDIENCE, 1] }), hs256)),
      401,
    );
  });

  test('an issuer with a trailing slash is another issuer', async () => {
    assert.equal(
      await statusOf(hsEntry(), await signToken({ alg: 'HS256' }, claims({ iss: `${ISSUER}/` }), hs256)),
      401,
    );
    const slashed = at({ secret: SECRET, issuer: `${ISSUER}/`, audience: AUDIENCE });
    assert.equal(await statusOf(slashed, await signToken({ alg: 'HS256' }, claims(), hs256)), 401);
    assert.equal(
      await statusOf(hsEntry(), await signToken({ alg: 'HS256' }, claims({ iss: ['x', ISSUER] }), hs256)),
      401,
    );
  });

  test('a payload that is not a JSON object is refused', async () => {
    for (const payload of [
      '[]',
      `[${JSON.stringify(claims())}]`,
      '"user-1"',
      '42',
      'null',
      'true',
      '',
      'not json',
      `${JSON.stringify(claims())} x`,
    ]) {
      assert.equal(await payloadStatus(payload), 401, payload.slice(0, 20));
    }
    // Invalid UTF-8 in the payload bytes.
    const input = `${b64json({ alg: 'HS256' })}.${encodeBase64url(Uint8Array.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))}`;
    assert.equal(await statusOf(hsEntry(), `${input}.${encodeBase64url(await hs256(encoder.encode(input)))}`), 401);
  });

  test('a duplicated claim is refused (sub, aud, exp)', async () => {
    assert.equal(await payloadStatus(withExp(`${NOW + 600},"sub":"admin"`)), 401);
    assert.equal(await payloadStatus(withExp(`${NOW + 600},"aud":"other"`)), 401);
    assert.equal(await payloadStatus(withExp(`${NOW + 600},"exp":${NOW + 999999}`)), 401);
  });

  test('a __proto__ claim stays an ordinary claim', async () => {
    const result = await at({ secret: SECRET, ...base })(
      new Request('https://a.example/', {
        headers: {
          authorization: `Bearer ${await hsRaw('{"alg":"HS256"}', withExp(`${NOW + 600},"__proto__":{"admin":true}`))}`,
        },
      }),
    );
    assert.ok(result !== null && result !== undefined);
    const claimsSeen = result.claims as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(claimsSeen), Object.prototype);
    assert.equal((claimsSeen as { admin?: unknown }).admin, undefined);
    assert.deepEqual(Object.getOwnPropertyDescriptor(claimsSeen, '__proto__')?.value, { admin: true });
  });
});
