// RFC 8785 (JCS) canonical JSON (design §34), against the RFC's own examples
// (fixtures/vectors/rfc/jcs_rfc8785.json): the sample of §3.2.2–3.2.4, the sorting example of
// §3.2.3 and the number samples of Appendix B; and what I-JSON refuses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson } from '../../src/agent/canonical-json.ts';
import { AuditError } from '../../src/agent/errors.ts';
import { readVectors } from '../helpers/jwt.ts';

interface JcsVectors {
  sample: { input: string; canonical: string; utf8: string };
  sorting: { input: string; valuesInOrder: string[] };
  numbers: { samples: { ieee754: string; canonical: string | null }[] };
}
const vectors = readVectors<JcsVectors>('rfc/jcs_rfc8785.json');

/** The IEEE 754 double of 16 hex digits (big-endian). */
function double(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

test('RFC 8785 §3.2.2–3.2.4: the sample canonicalizes to the RFC text, and to its UTF-8 bytes', () => {
  const text = canonicalJson(JSON.parse(vectors.sample.input));
  assert.equal(text, vectors.sample.canonical);
  const hex = [...new TextEncoder().encode(text)].map((byte) => byte.toString(16).padStart(2, '0')).join(' ');
  assert.equal(hex, vectors.sample.utf8);
});

test('RFC 8785 §3.2.3: properties sorted by their UTF-16 code units, whatever the order written', () => {
  const value = JSON.parse(vectors.sorting.input) as Record<string, string>;
  const sorted = JSON.parse(canonicalJson(value)) as Record<string, string>;
  // JSON.parse keeps the text's order of non-index names; "1" is an index: read the text itself.
  const order = [...canonicalJson(value).matchAll(/:"([^"]+)"/g)].map(([, v]) => v);
  assert.deepEqual(order, vectors.sorting.valuesInOrder);
  assert.deepEqual(sorted, value);
  // Reversed input, same text.
  const reversed = Object.fromEntries(Object.entries(value).reverse());
  assert.equal(canonicalJson(reversed), canonicalJson(value));
});

test('RFC 8785 Appendix B: every number sample is written as the RFC says; NaN and Infinity are refused', () => {
  const samples = vectors.numbers.samples;
  assert.equal(samples.length, 26);
  for (const { ieee754, canonical } of samples) {
    const value = double(ieee754);
    if (canonical === null) assert.throws(() => canonicalJson(value), TypeError, ieee754);
    else assert.equal(canonicalJson([value]), `[${canonical}]`, ieee754);
  }
  assert.throws(() => canonicalJson({ a: -Infinity }), /\$\["a"\] is not a finite number/);
});

test('nested objects sort at every depth; arrays keep their order; no whitespace', () => {
  assert.equal(
    canonicalJson({ z: [{ b: 1, a: 2 }, 'x'], a: { d: null, c: true } }),
    '{"a":{"c":true,"d":null},"z":[{"a":2,"b":1},"x"]}',
  );
  assert.equal(
    canonicalJson({ b: 1, a: undefined }),
    '{"b":1}',
    'an undefined member is left out, as JSON.stringify does',
  );
  assert.equal(canonicalJson(Object.assign(Object.create(null), { b: 1, a: 2 })), '{"a":2,"b":1}');
});

test('what has no exact JSON form is refused with the path, never the value', () => {
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  const cases: [unknown, RegExp][] = [
    [{ a: [1, undefined] }, /\$\["a"\]\[1\] is undefined/],
    [undefined, /\$ is undefined/],
    [{ n: 10n }, /\$\["n"\] is a bigint/],
    [{ f: () => 1 }, /is a function/],
    [{ s: Symbol('x') }, /is a symbol/],
    [{ when: new Date(0) }, /\$\["when"\] is not a plain object/],
    [{ map: new Map() }, /is not a plain object/],
    [{ text: 'a\uD800b' }, /holds a lone surrogate/],
    [{ '\uDC00': 1 }, /holds a lone surrogate/],
    [cycle, /refers to itself/],
    [NaN, /is not a finite number/],
  ];
  for (const [value, message] of cases)
    assert.throws(
      () => canonicalJson(value),
      (error: unknown) =>
        error instanceof AuditError &&
        error instanceof TypeError &&
        error.code === 'AUDIT_RECORD_INVALID' &&
        message.test(error.message),
    );
  // A paired surrogate is a character: written as itself.
  assert.equal(canonicalJson('\uD83D\uDE00'), '"😀"');
  // The same object twice (not a cycle) is fine.
  const shared = { x: 1 };
  assert.equal(canonicalJson([shared, shared]), '[{"x":1},{"x":1}]');
});
