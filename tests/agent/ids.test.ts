import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeBase64url } from '../../src/auth/jws/base64url.ts';
import { AgentError } from '../../src/agent/errors.ts';
import { idsOf, randomId } from '../../src/agent/ids.ts';

/** The 16 bytes `idsOf` gives id `i` of `count`: its 15-byte head, then its byte among the last `count`. */
const bytesOfId = (bytes: Uint8Array, count: number, i: number) =>
  Uint8Array.of(...bytes.subarray(15 * i, 15 * i + 15), bytes[15 * count + i]!);

test('every id made from a batch is exactly the base64url of its own 16 random bytes', () => {
  for (const bytes of [
    crypto.getRandomValues(new Uint8Array(16 * 256)),
    new Uint8Array(16 * 3),
    new Uint8Array(16 * 3).fill(255),
    Uint8Array.from({ length: 16 * 16 }, (_, i) => i),
  ]) {
    const count = bytes.length / 16;
    const ids = idsOf(bytes);
    assert.equal(ids.length, count);
    for (let i = 0; i < count; i++) {
      assert.equal(ids[i], encodeBase64url(bytesOfId(bytes, count, i)));
      assert.match(ids[i]!, /^[A-Za-z0-9_-]{21}[AQgw]$/);
    }
  }
  assert.throws(
    () => idsOf(new Uint8Array(20)),
    (error: unknown) =>
      error instanceof AgentError &&
      error.code === 'INVALID_INPUT' &&
      error.message === 'idsOf(): the bytes must be a multiple of 16 long; got 20 bytes',
  );
});

test('randomId draws 16 fresh bytes from crypto.getRandomValues for every id and never repeats one', () => {
  const original = crypto.getRandomValues;
  const requested: number[] = [];
  crypto.getRandomValues = ((array: Uint8Array<ArrayBuffer>) => {
    requested.push(array.byteLength);
    return original.call(crypto, array);
  }) as typeof crypto.getRandomValues;
  try {
    const ids: string[] = [];
    // Up to the next batch, then two whole batches: each batch asks for 16 bytes per id it makes.
    while (requested.length === 0) ids.push(randomId());
    for (let i = 0; i < 2 * 256; i++) ids.push(randomId());
    assert.deepEqual(requested, [4096, 4096, 4096]);
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{21}[AQgw]$/);
  } finally {
    crypto.getRandomValues = original;
  }
});
