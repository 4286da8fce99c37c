// Issue 2: "one constant-time comparison primitive on Web Crypto" (design §3: compare fixed-size digests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constantTimeEqual, secretsEqual, sha256 } from '../../src/auth/index.ts';

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

test('constantTimeEqual() is true only for the same length and the same bytes', () => {
  assert.equal(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3])), true);
  assert.equal(constantTimeEqual(new Uint8Array(), new Uint8Array()), true);
  assert.equal(constantTimeEqual(new Uint8Array([9, 2, 3]), new Uint8Array([1, 2, 3])), false, 'first byte differs');
  assert.equal(constantTimeEqual(new Uint8Array([1, 2, 9]), new Uint8Array([1, 2, 3])), false, 'last byte differs');
  assert.equal(
    constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 0])),
    false,
    'a prefix padded with zero',
  );
  assert.equal(constantTimeEqual(new Uint8Array([1, 2, 0]), new Uint8Array([1, 2])), false, 'longer first');
  assert.equal(constantTimeEqual(new Uint8Array([0]), new Uint8Array()), false, 'empty against zero');
});

test('sha256() is the SHA-256 of the UTF-8 bytes (FIPS 180-2 vector "abc"; "é" as two bytes)', async () => {
  assert.equal(hex(await sha256('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(
    hex(await sha256('\u00e9')),
    hex(new Uint8Array(await crypto.subtle.digest('SHA-256', new Uint8Array([0xc3, 0xa9])))),
  );
});

test('secretsEqual() compares secrets of any length through their digests', async () => {
  assert.equal(await secretsEqual('correct horse', 'correct horse'), true);
  assert.equal(await secretsEqual('', ''), true);
  assert.equal(await secretsEqual('correct horse', 'correct horsE'), false);
  assert.equal(await secretsEqual('correct horse', 'correct horse '), false);
  assert.equal(await secretsEqual('x'.repeat(10_000), 'x'.repeat(10_000)), true);
});

test('sha256() is synchronous and agrees with Web Crypto on every length from 0 to 300 bytes (padding edges 55, 56, 63, 64) and on 100 KiB', async () => {
  assert.equal(
    hex(sha256('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')),
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    'FIPS 180-2 two-block vector',
  );
  assert.equal(hex(sha256('')), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.ok(sha256('x') instanceof Uint8Array, 'a value, not a promise');
  for (const length of [...Array.from({ length: 301 }, (_, i) => i), 100 * 1024]) {
    const bytes = Uint8Array.from({ length }, (_, i) => (i * 131 + length) & 0xff);
    const expected = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
    assert.equal(hex(sha256(bytes)), hex(expected), `length ${length}`);
  }
});

test('sha256() of strings agrees with Web Crypto on their UTF-8 bytes for 0 to 80 UTF-16 units of 1- to 4-byte characters, long after short and short after long', async () => {
  const chars = ['a', '\u00e9', '\u20ac', '\u{1f600}'];
  for (let length = 0; length <= 80; length++) {
    for (const [c, char] of chars.entries()) {
      // Mostly `char`, with every other kind mixed in: a string of `length` code points.
      const text = Array.from({ length }, (_, i) => (i % 5 === 4 ? (chars[(c + i) % 4] as string) : char)).join('');
      const expected = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
      assert.equal(hex(sha256(text)), hex(expected), `${length} code points of ${JSON.stringify(char)}`);
      // A one-byte string straight after: nothing of the longer message may be left behind.
      assert.equal(hex(sha256('z')), '594e519ae499312b29433b7dd8a97ff068defcba9755b6d5d00e84c524d67b06');
    }
  }
});

test('sha256() agrees with Web Crypto at the edges of its kept buffer: strings of 318 to 322 UTF-16 units of 1- to 4-byte characters, bytes of 1,010 to 1,030', async () => {
  const encoder = new TextEncoder();
  const check = async (input: string | Uint8Array, what: string) => {
    const bytes = typeof input === 'string' ? encoder.encode(input) : input;
    const expected = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
    assert.equal(hex(sha256(input)), hex(expected), what);
    // A short input straight after: nothing of the longer message may be left in the kept buffer.
    assert.equal(hex(sha256('z')), '594e519ae499312b29433b7dd8a97ff068defcba9755b6d5d00e84c524d67b06', `after ${what}`);
  };
  for (const char of ['a', '\u00e9', '\u20ac', '\u{1f600}'])
    for (let units = 318; units <= 322; units++) {
      const text = char.repeat(Math.ceil(units / char.length)).slice(0, units - (units % char.length));
      await check(text, `${text.length} units of ${JSON.stringify(char)}`);
    }
  for (let length = 1010; length <= 1030; length++)
    await check(
      Uint8Array.from({ length }, (_, i) => (i * 7 + length) & 0xff),
      `${length} bytes`,
    );
});
