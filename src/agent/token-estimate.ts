// The estimate in tokens of a text that `limits.tokens` reserves before a model turn (design
// §25): counted as a byte-level tokenizer's pre-tokenizer splits it, so that no text a caller
// chooses (symbols, base64, CJK, Hangul, emoji) counts much less than a real tokenizer makes.

/**
 * The tokens `text` is estimated at. The text is split as a byte-level BPE pre-tokenizer
 * (OpenAI's `o200k_base`) splits it, and each piece counted:
 * - a run of ASCII letters, split by case as the tokenizer splits it (upper-case letters, then
 *   lower-case ones: `fooBar` is `foo` and `Bar`, `HTTPServer` one piece), taking with it the one
 *   space or punctuation mark right before it: ⌈length / 4⌉. Where the piece starts with two
 *   upper-case letters or more, those letters (and the mark) count apart at ⌈length / 2⌉: such
 *   runs are rare in prose and code, and common in base64, where a quarter would undercount the
 *   tokenizer by over a quarter;
 * - a run of ASCII digits: ⌈length / 3⌉ (the tokenizer groups digits by three at most);
 * - any other ASCII character (a space, a mark, a line break): 1;
 * - a non-ASCII character: its UTF-8 length in bytes (a byte-level tokenizer never makes more
 *   tokens than bytes).
 * Measured against `o200k_base` in `npm run bench` (the `estimate` suite).
 */
export function estimateTokens(text: string): number {
  let tokens = 0;
  let index = 0;
  const length = text.length;
  while (index < length) {
    const code = text.charCodeAt(index);
    if (isLetter(code)) {
      // The mark before the run was counted as 1 on its own: it joins the piece instead.
      const before = index > 0 ? text.charCodeAt(index - 1) : -1;
      const joined =
        before >= 0 && before < 0x80 && before !== 10 && before !== 13 && !isLetter(before) && !isDigit(before);
      const mark = joined ? 1 : 0;
      let upper = index;
      while (upper < length && isUpper(text.charCodeAt(upper))) upper++;
      // Then the lower-case letters: the piece ends at the next upper-case one.
      let end = upper;
      while (end < length && isLower(text.charCodeAt(end))) end++;
      tokens +=
        upper - index >= 2
          ? Math.ceil((upper - index + mark) / 2) + Math.ceil((end - upper) / 4) - mark
          : Math.ceil((end - index + mark) / 4) - mark;
      index = end;
    } else if (isDigit(code)) {
      let end = index + 1;
      while (end < length && isDigit(text.charCodeAt(end))) end++;
      tokens += Math.ceil((end - index) / 3);
      index = end;
    } else if (code < 0x80) {
      tokens++;
      index++;
    } else if (code < 0x800) {
      tokens += 2;
      index++;
    } else if (code >= 0xd800 && code <= 0xdbff && index + 1 < length && isLowSurrogate(text.charCodeAt(index + 1))) {
      // A character beyond the Basic Multilingual Plane (most emoji): 4 bytes.
      tokens += 4;
      index += 2;
    } else {
      // The rest of the plane, and a lone surrogate (sent as U+FFFD): 3 bytes.
      tokens += 3;
      index++;
    }
  }
  return tokens;
}

const isUpper = (code: number) => code >= 0x41 && code <= 0x5a;
const isLower = (code: number) => code >= 0x61 && code <= 0x7a;
const isLetter = (code: number) => isLower(code) || isUpper(code);
const isDigit = (code: number) => code >= 0x30 && code <= 0x39;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;
