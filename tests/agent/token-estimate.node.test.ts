// The token estimate of limits.tokens (design §25) against OpenAI's o200k_base (gpt-tokenizer):
// never more than a quarter under on any corpus a caller might choose, at most twice over on
// English prose and TypeScript. The same corpora as `npm run bench`'s estimate table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { estimateTokens } from '../../src/agent/token-estimate.ts';
import { tokenCorpora } from '../helpers/token-corpora.ts';

const corpora = tokenCorpora();

test('the corpora are the eleven of the design, each of some length', () => {
  assert.deepEqual(Object.keys(corpora), [
    'English prose',
    'TypeScript',
    'JSON',
    'base64',
    'hex',
    'digits',
    'punctuation',
    'random printable ASCII',
    'CJK',
    'Hangul',
    'emoji',
  ]);
  for (const text of Object.values(corpora)) assert.ok(text.length >= 1000);
});

for (const [name, text] of Object.entries(corpora)) {
  test(`${name}: the estimate is never more than 25% under o200k_base`, () => {
    const real = encode(text).length;
    const estimate = estimateTokens(text);
    assert.ok(estimate >= 0.75 * real, `${name}: estimate ${estimate} against ${real} real tokens`);
    if (name === 'English prose' || name === 'TypeScript')
      assert.ok(estimate <= 2 * real, `${name}: estimate ${estimate} is over twice ${real} real tokens`);
  });
}

test('the pieces as the design counts them', () => {
  assert.equal(estimateTokens(''), 0);
  // A letter run with the space before it, at a quarter: " quick" is 6 characters, 2 tokens.
  assert.equal(estimateTokens('The quick'), 1 + 2);
  // Split by case: "read" and "File".
  assert.equal(estimateTokens('readFile'), 2);
  // Digits by three: 7 digits are 3 tokens.
  assert.equal(estimateTokens('1234567'), 3);
  // Other ASCII at 1 each: "  " and "!?".
  assert.equal(estimateTokens('  !?'), 4);
  // Two upper-case letters or more count at a half: "ABCD" is 2.
  assert.equal(estimateTokens('ABCD'), 2);
  // Non-ASCII at its UTF-8 bytes: é 2, 한 3, 😀 4 (a surrogate pair), a lone surrogate 3.
  assert.equal(estimateTokens('é'), 2);
  assert.equal(estimateTokens('한'), 3);
  assert.equal(estimateTokens('😀'), 4);
  assert.equal(estimateTokens('\ud800'), 3);
});
