// The primitives under the verify path: strict base64url, the duplicate-refusing JSON object
// parser, the compact-JWS split and the SubjectPublicKeyInfo reader.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { decodeBase64url, decodeBase64urlInto, encodeBase64url } from '../../../src/auth/jws/base64url.ts';
import { parseJsonObject } from '../../../src/auth/jws/json.ts';
import { parseCompactJws, signatureOf, signingInputOf } from '../../../src/auth/jws/compact.ts';
import { readPublicJwk, readSpki, readSpkiPem, type PublicKeySpec } from '../../../src/auth/jws/keys.ts';
import { jwsAlgorithm } from '../../../src/auth/jws/algorithms.ts';
import { b64json, testKey, toPem } from '../../helpers/jwt.ts';

describe('base64url (RFC 7515 §2: URL alphabet, no padding, canonical)', () => {
  test('decodes what it encodes, for every length and byte value', () => {
    for (let length = 0; length < 70; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 73 + length * 31) & 255);
      const text = encodeBase64url(bytes);
      assert.match(text, /^[A-Za-z0-9_-]*$/);
      assert.deepEqual(decodeBase64url(text), bytes);
    }
    assert.deepEqual(decodeBase64url('-_8'), Uint8Array.from([0xfb, 0xff]));
  });

  test('every pair of bytes, in either half of a group of four, at any offset, decodes as the alphabet says', () => {
    // A reference decoder, one character at a time, against the decoder's 32-bit reads of four.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sextet = (byte: number) => (byte < 128 ? alphabet.indexOf(String.fromCharCode(byte)) : -1);
    const input = new Uint8Array(7);
    const view = new DataView(input.buffer);
    const out = new Uint8Array(3);
    for (let x = 0; x < 256; x++) {
      for (let y = 0; y < 256; y++) {
        const offset = 1 + ((x + y) & 1); // odd and even offsets
        for (const half of [0, 2]) {
          input.fill(0x41); // 'A'
          input[offset + half] = x;
          input[offset + half + 1] = y;
          const valid = sextet(x) >= 0 && sextet(y) >= 0;
          const written = decodeBase64urlInto(view, offset, offset + 4, out);
          if (!valid) {
            if (written !== -1) assert.fail(`bytes ${x},${y} at ${half} were accepted`);
            continue;
          }
          const bits = half === 0 ? (sextet(x) << 18) | (sextet(y) << 12) : (sextet(x) << 6) | sextet(y);
          if (written !== 3 || out[0] !== bits >> 16 || out[1] !== ((bits >> 8) & 255) || out[2] !== (bits & 255)) {
            assert.fail(`bytes ${x},${y} at ${half} decoded to ${written}: ${out.join()}`);
          }
        }
      }
    }
  });

  test('refuses padding, the standard alphabet, whitespace, other characters and an impossible length', () => {
    for (const text of ['AA==', 'AAA=', '+/8', 'A A', 'AA\n', 'A', 'AAAAA', 'AA.', 'Zm9v\u00e9', 'Zm9\u0000']) {
      assert.equal(decodeBase64url(text), null, JSON.stringify(text));
    }
  });

  test('refuses a last character whose unused bits are not zero', () => {
    assert.deepEqual(decodeBase64url('AA'), Uint8Array.from([0]));
    assert.equal(decodeBase64url('AB'), null);
    assert.equal(decodeBase64url('AP'), null);
    assert.deepEqual(decodeBase64url('AAA'), Uint8Array.from([0, 0]));
    assert.equal(decodeBase64url('AAB'), null);
    assert.equal(decodeBase64url('AAD'), null);
  });
});

describe('JSON object parser (RFC 8259, duplicate member names refused)', () => {
  test('parses what JSON.parse parses', () => {
    const texts = [
      '{}',
      ' {"a" : 1 , "b":[true,false,null,-0.5e+3,"x"]}\r\n',
      '{"s":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00"}',
      '{"n":{"m":{"o":[[],{}]}}}',
      '{"big":1e400,"neg":-1E-2,"zero":0}',
      '{"é":"ü"}',
      '{"__proto__":{"x":1}}',
    ];
    for (const text of texts) {
      const parsed = parseJsonObject(text);
      assert.deepEqual(parsed, JSON.parse(text), text);
    }
    assert.equal(Object.getPrototypeOf(parseJsonObject('{"__proto__":{"x":1}}')), Object.prototype);
  });

  test('common member names read as the same strings however they are spelled, and a duplicate among them is refused', () => {
    const texts = [
      '{"alg":"RS256","typ":"JWT","kid":"k","cty":"x","crit":["b64"]}',
      '{"iss":"i","sub":"s","aud":["a"],"exp":1,"nbf":2,"iat":3,"jti":"j","scope":"r w"}',
      '{"su":1,"subject":2,"sub2":3,"s":4,"a":5,"al":6,"algs":7,"scopes":8,"scop":9,"":10}',
      '{"s\\u0075b":1,"\\u0061lg":2,"sco\\u0070e":3}',
    ];
    for (const text of texts) assert.deepEqual(parseJsonObject(text), JSON.parse(text), text);
    for (const text of [
      '{"sub":1,"s\\u0075b":2}',
      '{"s\\u0075b":1,"sub":2}',
      '{"scope":1,"scope":2}',
      '{"exp":1,"nbf":2,"exp":3}',
    ]) {
      assert.equal(parseJsonObject(text), null, text);
    }
  });

  test('numbers read as JSON.parse reads them: integers of every length, fractions, exponents, signs', () => {
    const numbers = [
      '0',
      '7',
      '10',
      '1800000000',
      '123456789012345',
      '1234567890123456',
      '9007199254740993',
      '12345678901234567890123',
      '-0',
      '-1',
      '-1800000000',
      '1.5',
      '0.25',
      '1e3',
      '1E3',
      '1e-3',
      '12e+2',
      '123456789012345.5',
      '123456789012345e2',
      '1e400',
      '-1e400',
    ];
    for (const number of numbers) {
      const text = `{"n":${number},"m":[${number}]}`;
      assert.deepEqual(parseJsonObject(text), JSON.parse(text), number);
    }
    for (const number of ['01', '00', '1.', '1e', '1e+', '-', '--1', '1a', '0x10', '1_000', '.1', '+1']) {
      assert.equal(parseJsonObject(`{"n":${number}}`), null, number);
    }
  });

  test('returns objects and arrays frozen at every depth', () => {
    const parsed = parseJsonObject('{"a":{"b":[1,{"c":[]}]},"d":{}}') as any;
    for (const value of [parsed, parsed.a, parsed.a.b, parsed.a.b[1], parsed.a.b[1].c, parsed.d])
      assert.ok(Object.isFrozen(value));
  });

  test('refuses a duplicated member name at any depth', () => {
    for (const text of ['{"a":1,"a":1}', '{"a":1,"b":{"c":1,"c":2}}', '{"a":[{"x":1,"x":1}]}', '{"a":1,"\\u0061":2}']) {
      assert.equal(parseJsonObject(text), null, text);
    }
  });

  test('refuses what is not a JSON object, and invalid JSON', () => {
    const texts = [
      '',
      '[]',
      '"x"',
      '1',
      'null',
      '{',
      '{"a":1,}',
      '{"a":01}',
      '{"a":1.}',
      '{"a":.5}',
      '{"a":+1}',
      '{"a":NaN}',
      '{"a":Infinity}',
      "{'a':1}",
      '{a:1}',
      '{"a":"\u0001"}',
      '{"a":"\\x"}',
      '{"a":"\\u12"}',
      '{"a":1}{}',
      '\uFEFF{}',
      '{"a":tru}',
      '{"a" 1}',
      '{"a":[1,]}',
      '{"a":1 "b":2}',
      '{"sub',
      '{"sub"',
      '{"sub":',
      '{"sub":1',
      '{"scope"1}',
    ];
    for (const text of texts) assert.equal(parseJsonObject(text), null, JSON.stringify(text));
  });

  test('refuses nesting deeper than 32 levels, without a stack overflow', () => {
    assert.notEqual(parseJsonObject(`{"a":${'['.repeat(31)}${']'.repeat(31)}}`), null);
    assert.equal(parseJsonObject(`{"a":${'['.repeat(32)}${']'.repeat(32)}}`), null);
    assert.equal(parseJsonObject(`{"a":${'['.repeat(100_000)}`), null);
    assert.notEqual(parseJsonObject(`${'{"a":'.repeat(31)}{}${'}'.repeat(31)}`), null);
    assert.equal(parseJsonObject(`${'{"a":'.repeat(32)}{}${'}'.repeat(32)}`), null);
    // Well-formed and closed, far deeper than the limit: refused, not a stack overflow.
    assert.equal(parseJsonObject(`{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`), null);
    assert.equal(parseJsonObject(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`), null);
  });

  test('a duplicate is found whatever the two members hold and wherever colons, quotes and backslashes sit in strings', () => {
    const duplicated = [
      '{"a":{"x":1},"a":2}',
      '{"a":2,"a":{"x":1}}',
      '{"a":{"x":1},"a":{"y":2}}',
      '{"a":[{"x":1,"x":2}],"a":1}',
      '{"a":[],"a":[]}',
      '{"__proto__":1,"__proto__":2}',
      '{"__proto__":{},"\\u005f_proto__":{}}',
      '{"a:":1,"a:":2}',
      '{"\\"":1,"\\u0022":2}',
      '{"k":"v:\\"","k":"w"}',
      '{"a\\\\":1,"a\\u005c":2}',
      '{"x":{"a":1,"b":{"c":[{"d":1,"d":1}]}}}',
      '{"":1,"":2}',
    ];
    for (const text of duplicated) assert.equal(parseJsonObject(text), null, text);
    const distinct = [
      '{"a:b":"c:d","e\\":":"\\"f:"}',
      '{"a\\\\":":","b":"\\\\"}',
      '{"a":"::::","b":{"c:":[":",{"d":":"}]}}',
      '{"a":1,"A":2,"a ":3}',
      '{"x":{"a":1},"y":{"a":1},"z":[{"a":1},{"a":1}]}',
      '{"\\ud83d\\ude00":1,"\\ud83d":2,"\\ude00":3}',
      '{"__proto__":{"a":1,"b":2}}',
    ];
    for (const text of distinct) assert.deepEqual(parseJsonObject(text), JSON.parse(text), text);
  });

  test('duplicates planted at random in random documents are refused, and only they (seeded)', () => {
    let seed = 0x2545f491;
    const random = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const NAMES = ['a', 'b', 'sub', 'aud', ':', '"', '\\', 'a:b', 'é', '😀', '__proto__', ''];
    // A name as JSON text, at random with some characters written as \u escapes.
    const spell = (name: string) =>
      `"${[...JSON.stringify(name).slice(1, -1)].map((c) => (random(3) === 0 && /\w/.test(c) ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join('')}"`;
    // Each document as text and as the value it holds, built side by side (JSON.parse is not the
    // reference: workerd's misreads escaped one-character names). `plant.wanted`: this document
    // gets one duplicated name, in the first object that draws it.
    type Plant = { wanted: boolean };
    const value = (depth: number, plant: Plant): [string, unknown] => {
      const kind = depth > 4 ? random(3) : random(6);
      if (kind === 0) {
        const n = random(1000);
        return [String(n), n];
      }
      if (kind === 1) {
        const text = `s${random(9)}:"\\${random(9)}`;
        return [JSON.stringify(text), text];
      }
      if (kind === 2) return ['null', null];
      if (kind === 3) {
        const items = Array.from({ length: random(3) }, () => value(depth + 1, plant));
        return [`[${items.map(([text]) => text).join(',')}]`, items.map(([, item]) => item)];
      }
      return object(depth + 1, plant);
    };
    const object = (depth: number, plant: Plant): [string, unknown] => {
      const names = [...new Set(Array.from({ length: random(5) }, () => NAMES[random(NAMES.length)]!))];
      if (plant.wanted && names.length > 0 && random(3) === 0) {
        plant.wanted = false;
        names.splice(random(names.length + 1), 0, names[random(names.length)]!);
      }
      const members = names.map((name) => [spell(name), name, value(depth, plant)] as const);
      const expected: Record<string, unknown> = {};
      for (const [, name, [, member]] of members)
        Object.defineProperty(expected, name, { value: member, writable: true, enumerable: true, configurable: true });
      return [`{${members.map(([spelled, , [text]]) => `${spelled}:${text}`).join(',')}}`, expected];
    };
    let planted = 0;
    for (let i = 0; i < 2_000; i++) {
      const plant = { wanted: random(2) === 0 };
      const wanted = plant.wanted;
      const [text, expected] = object(1, plant);
      const parsed = parseJsonObject(text);
      if (wanted && !plant.wanted) {
        planted++;
        assert.equal(parsed, null, text);
      } else {
        assert.deepEqual(parsed, expected, text);
      }
    }
    assert.ok(planted > 200, `${planted} documents with a duplicate`);
  });

  test('an escaped one-character member name is read as itself, alone in its object and beside its unescaped twin', () => {
    // workerd's JSON.parse, once in some state (the seeded documents above reach it), reads every one of
    // these as one cached name: this parser decodes names itself.
    const names: [string, string][] = [
      ['\\u0061', 'a'],
      ['\\u0062', 'b'],
      ['\\u0064', 'd'],
      ['\\"', '"'],
      ['\\u0022', '"'],
      ['\\\\', '\\'],
      ['\\u005c', '\\'],
      ['\\/', '/'],
      ['\\n', '\n'],
    ];
    for (let round = 0; round < 3; round++) {
      for (const [escaped, name] of names) {
        assert.deepEqual(Object.keys(parseJsonObject(`{"${escaped}":1}`)!), [name], escaped);
        assert.equal(parseJsonObject(`{"${escaped}":1,${JSON.stringify(name)}:2}`), null, `${escaped} twice`);
      }
    }
  });
});

describe('compact JWS split', () => {
  const token = `${b64json({ alg: 'HS256', kid: 'k1' })}.${b64json({ sub: 'x' })}.${encodeBase64url(new Uint8Array(32).fill(1))}`;

  test('splits a JWS into header (alg, kid), signing input, payload text and signature', () => {
    const jws = parseCompactJws(token);
    assert.ok(jws !== null);
    assert.deepEqual(jws.header, { alg: 'HS256', kid: 'k1', typ: undefined });
    assert.equal(jws.token, token);
    assert.equal(jws.signingLength, token.lastIndexOf('.'));
    assert.deepEqual(signingInputOf(jws), new TextEncoder().encode(token.slice(0, token.lastIndexOf('.'))));
    assert.equal(jws.payload, '{"sub":"x"}');
    assert.deepEqual(signatureOf(jws), new Uint8Array(32).fill(1));
    assert.deepEqual(parseCompactJws(token)?.header, jws.header, 'a repeated header decodes the same');
  });

  test('typ is read as a media type: lower case, without an application/ prefix (RFC 7515 §4.1.9)', () => {
    const typOf = (typ: unknown) =>
      parseCompactJws(`${b64json({ alg: 'HS256', typ })}.${b64json({})}.AAAA`)?.header.typ;
    assert.equal(typOf('at+jwt'), 'at+jwt');
    assert.equal(typOf('application/AT+JWT'), 'at+jwt');
    assert.equal(typOf('JWT'), 'jwt');
    assert.equal(typOf(42), undefined);
  });

  test('reads the JWS from an offset in a longer text, as in an Authorization value', () => {
    const jws = parseCompactJws(`Bearer   ${token}`, 9);
    assert.ok(jws !== null);
    assert.deepEqual(jws, parseCompactJws(token));
    assert.equal(parseCompactJws(`Bearer ${token}`, 6), null, 'a space is not base64url');
    assert.equal(parseCompactJws(`x.${token}`, 0), null, 'four segments from the start');
  });

  test('refuses a token with any character outside ASCII, in any segment', () => {
    const [h, p, s] = token.split('.') as [string, string, string];
    for (const char of ['\u00e9', '\u2028', '\ud800', '\ud83d\ude00', '\u0100']) {
      for (const bad of [
        `${char}${h}.${p}.${s}`,
        `${h}.${p}${char}.${s}`,
        `${h}.${p}.${s}${char}`,
        `${h.slice(0, 4)}${char}${h.slice(4)}.${p}.${s}`,
      ]) {
        assert.equal(parseCompactJws(bad), null, JSON.stringify(bad.slice(0, 8)));
        assert.equal(parseCompactJws(`Bearer ${bad}`, 7), null);
      }
    }
  });

  test('the bytes of every parsed token stay its own, however many tokens are parsed after it', () => {
    const [h, p] = token.split('.');
    const expected = Array.from({ length: 1500 }, (_, i) =>
      Uint8Array.from({ length: 256 + (i % 7) * 97 }, (_, j) => (i * 31 + j * 7) & 255),
    );
    const payloads = expected.map((_, i) => b64json({ sub: `user-${i}`, n: i }));
    const parsed = expected.map((bytes, i) => parseCompactJws(`${h}.${payloads[i]}.${encodeBase64url(bytes)}`));
    // A malformed signature in between must not claim or clobber bytes either.
    for (let i = 0; i < 50; i++) assert.equal(parseCompactJws(`${h}.${p}.${'A'.repeat(340)}*`), null);
    // Read in an order unlike the parse, each token's bytes are loaded back as they were.
    for (const i of [0, 1499, 1, 750, 1498, 2, 0, 0, 1499]) {
      const jws = parsed[i]!;
      assert.deepEqual(signatureOf(jws), expected[i], `signature of token ${i}`);
      assert.equal(new TextDecoder().decode(signingInputOf(jws)), `${h}.${payloads[i]}`, `signing input of token ${i}`);
      assert.deepEqual(signatureOf(jws), expected[i], `signature of token ${i}, after its signing input`);
    }
    expected.forEach((bytes, i) => assert.deepEqual(signatureOf(parsed[i]!), bytes, `token ${i}`));
    const big = Uint8Array.from({ length: 12_000 }, (_, j) => j & 255);
    const near = parseCompactJws(`${h}.${p}.${encodeBase64url(big)}`)!;
    assert.deepEqual(signatureOf(near), big, 'a signature near the token limit');
  });

  test('refuses empty header, empty signature and segment counts other than three', () => {
    const [h, p, s] = token.split('.');
    for (const bad of [
      `.${p}.${s}`,
      `${h}.${p}.`,
      `${h}.${p}`,
      `${h}.${p}.${s}.${s}`,
      `${h}..${s}.${s}.${s}`,
      '',
      '..',
    ]) {
      assert.equal(parseCompactJws(bad), null, bad);
    }
    assert.notEqual(parseCompactJws(`${h}..${s}`), null, 'an empty payload is a valid JWS');
  });
});

describe('SubjectPublicKeyInfo reader', () => {
  test('a JWK is imported as the key it describes: the runtime exports the same SPKI for both', async () => {
    const keys: [string, RsaHashedKeyGenParams | EcKeyGenParams | Algorithm][] = [
      ['P-521', { name: 'ECDSA', namedCurve: 'P-521' }],
      ['Ed25519', { name: 'Ed25519' }],
      [
        'RSA 2048, e = 65537',
        { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: Uint8Array.of(1, 0, 1), hash: 'SHA-256' },
      ],
      // A size off 2048 and 4096, and a multiple of 128 bits: workerd generates no other RSA sizes.
      [
        'RSA 2176, e = 3',
        { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2176, publicExponent: Uint8Array.of(3), hash: 'SHA-256' },
      ],
      [
        'RSA 4096',
        { name: 'RSASSA-PKCS1-v1_5', modulusLength: 4096, publicExponent: Uint8Array.of(1, 0, 1), hash: 'SHA-256' },
      ],
      ['P-256', { name: 'ECDSA', namedCurve: 'P-256' }],
      ['P-384', { name: 'ECDSA', namedCurve: 'P-384' }],
    ];
    for (const [label, params] of keys) {
      let pair: CryptoKeyPair;
      try {
        pair = (await crypto.subtle.generateKey(params, true, ['sign', 'verify'])) as CryptoKeyPair;
      } catch (error) {
        // Detected, not assumed: the runtimes that lack a curve are named in the test output.
        console.log(
          `this runtime cannot generate ${label} keys (${(error as Error).name}); that round trip is not checked here`,
        );
        continue;
      }
      const { kty, n, e, crv, x, y } = await crypto.subtle.exportKey('jwk', pair.publicKey);
      const spki = new Uint8Array(await crypto.subtle.exportKey('spki', pair.publicKey));
      const spec = readPublicJwk({ kty, n, e, crv, x, y });
      assert.ok(typeof spec !== 'string', `${label}: ${spec}`);
      // The JWK the verifier imports, imported here extractable to compare it with the runtime's own key.
      const imported = await crypto.subtle.importKey(
        'jwk',
        spec.jwk,
        jwsAlgorithm(spec.algorithms[0]!)!.importParams,
        true,
        ['verify'],
      );
      assert.deepEqual(new Uint8Array(await crypto.subtle.exportKey('spki', imported)), spki, label);
      assert.deepEqual(readSpki(spki), { ...spec }, `${label}: the PEM route reads the same key`);
    }
  });

  test('reads RSA and EC keys, and refuses trailing bytes, non-minimal lengths, other key types and compressed points', async () => {
    const rsa = await testKey('RS256');
    const ec = await testKey('ES384');
    const rsaSpec = readSpki(rsa.spki);
    const ecSpec = readSpki(ec.spki);
    assert.ok(typeof rsaSpec === 'object' && rsaSpec.kty === 'RSA' && rsaSpec.bits === 2048);
    assert.deepEqual(rsaSpec.algorithms, ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']);
    assert.ok(typeof ecSpec === 'object' && ecSpec.kty === 'EC' && ecSpec.curve === 'P-384');
    assert.deepEqual(ecSpec.algorithms, ['ES384']);
    assert.equal(typeof readSpkiPem(rsa.pem), 'object');
    assert.equal(typeof readSpkiPem(rsa.pem.replace(/\n/g, '\r\n')), 'object');
    const withTrailing = Uint8Array.from([...rsa.spki, 0]);
    assert.match(readSpki(withTrailing) as string, /not a DER SubjectPublicKeyInfo/);
    // 30 82 01 22 -> 30 83 00 01 22: a non-minimal length.
    const nonMinimal = Uint8Array.from([0x30, 0x83, 0x00, ...rsa.spki.subarray(2)]);
    assert.match(readSpki(nonMinimal) as string, /not a DER/);
    // X25519 (1.3.101.110) is a key-agreement key, never a signing key.
    const x25519 = Uint8Array.from([
      0x30,
      0x2a,
      0x30,
      0x05,
      0x06,
      0x03,
      0x2b,
      0x65,
      0x6e,
      0x03,
      0x21,
      0x00,
      ...new Uint8Array(32),
    ]);
    assert.match(
      readSpki(x25519) as string,
      /must be an RSA key, an EC key on P-256, P-384 or P-521, or an Ed25519 key/,
    );
    const compressed = Uint8Array.from(ec.spki);
    compressed[compressed.length - 97] = 0x02;
    assert.match(readSpki(compressed) as string, /not uncompressed/);
    assert.match(readSpkiPem(toPem(x25519)) as string, /must be an RSA key, an EC key/);
    const ed25519 = Uint8Array.from([
      0x30,
      0x2a,
      0x30,
      0x05,
      0x06,
      0x03,
      0x2b,
      0x65,
      0x70,
      0x03,
      0x21,
      0x00,
      ...new Uint8Array(32).fill(7),
    ]);
    assert.deepEqual((readSpki(ed25519) as PublicKeySpec).algorithms, ['EdDSA', 'Ed25519']);
    const withParams = Uint8Array.from([
      0x30,
      0x2c,
      0x30,
      0x07,
      0x06,
      0x03,
      0x2b,
      0x65,
      0x70,
      0x05,
      0x00,
      0x03,
      0x21,
      0x00,
      ...new Uint8Array(32),
    ]);
    assert.match(
      readSpki(withParams) as string,
      /not a DER SubjectPublicKeyInfo/,
      'RFC 8410: Ed25519 parameters are absent',
    );
  });
});
