// SPDX-License-Identifier: MIT
const FAIL: unique symbol = Symbol('invalid JSON');
const MAX_DEPTH = 32;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const HEX4 = /^[0-9A-Fa-f]{4}$/;
// Member names that JWS headers and JWT payloads repeat (RFC 7515 §4.1, RFC 7519 §4.1, and
// `scope`), by first character. Read as these literals, which the engine has interned, rather
// than sliced from the text, a name costs no string-table lookup when it becomes a property.
const COMMON_NAMES = ['alg', 'typ', 'kid', 'cty', 'crit', 'iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti', 'scope'];
const NAMES_BY_FIRST: readonly (readonly string[] | undefined)[] = Array.from({ length: 128 }, (_, code) => {
  const names = COMMON_NAMES.filter((name) => name.charCodeAt(0) === code);
  return names.length > 0 ? names : undefined;
});

interface Cursor {
  readonly text: string;
  at: number;
}

/**
 * Parses RFC 8259 JSON whose top level is an object, deeply frozen. `null` (never a throw) when
 * the text is not JSON, not an object, nested deeper than 32 levels, or names a member twice in
 * one object (the confusion RFC 7515 §5.2 and RFC 7519 §4 warn about). A `__proto__` member is
 * an own property, as with `JSON.parse`.
 */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  const cursor: Cursor = { text, at: 0 };
  skipSpace(cursor);
  if (text.charCodeAt(cursor.at) !== 0x7b) return null;
  const value = readValue(cursor, 0);
  if (value === FAIL) return null;
  skipSpace(cursor);
  return cursor.at === text.length ? (value as Record<string, unknown>) : null;
}

function skipSpace(cursor: Cursor): void {
  const { text } = cursor;
  let code = text.charCodeAt(cursor.at);
  while (code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) code = text.charCodeAt(++cursor.at);
}

function readValue(cursor: Cursor, depth: number): unknown {
  const { text, at } = cursor;
  switch (text.charCodeAt(at)) {
    case 0x7b: return depth < MAX_DEPTH ? readObject(cursor, depth + 1) : FAIL;
    case 0x5b: return depth < MAX_DEPTH ? readArray(cursor, depth + 1) : FAIL;
    case 0x22: return readString(cursor);
    case 0x74: return readLiteral(cursor, 'true', true);
    case 0x66: return readLiteral(cursor, 'false', false);
    case 0x6e: return readLiteral(cursor, 'null', null);
    default: return readNumber(cursor);
  }
}

function readObject(cursor: Cursor, depth: number): Record<string, unknown> | typeof FAIL {
  const object: Record<string, unknown> = {};
  cursor.at++;
  skipSpace(cursor);
  if (cursor.text.charCodeAt(cursor.at) === 0x7d) {
    cursor.at++;
    return Object.freeze(object);
  }
  for (;;) {
    if (cursor.text.charCodeAt(cursor.at) !== 0x22) return FAIL;
    const name = readName(cursor);
    if (name === FAIL || Object.hasOwn(object, name)) return FAIL;
    skipSpace(cursor);
    if (cursor.text.charCodeAt(cursor.at++) !== 0x3a) return FAIL;
    skipSpace(cursor);
    const value = readValue(cursor, depth);
    if (value === FAIL) return FAIL;
    if (name === '__proto__') Object.defineProperty(object, name, { value, writable: true, enumerable: true, configurable: true });
    else object[name] = value;
    skipSpace(cursor);
    const next = cursor.text.charCodeAt(cursor.at++);
    if (next === 0x7d) return Object.freeze(object);
    if (next !== 0x2c) return FAIL;
    skipSpace(cursor);
  }
}

function readArray(cursor: Cursor, depth: number): readonly unknown[] | typeof FAIL {
  const array: unknown[] = [];
  cursor.at++;
  skipSpace(cursor);
  if (cursor.text.charCodeAt(cursor.at) === 0x5d) {
    cursor.at++;
    return Object.freeze(array);
  }
  for (;;) {
    const value = readValue(cursor, depth);
    if (value === FAIL) return FAIL;
    array.push(value);
    skipSpace(cursor);
    const next = cursor.text.charCodeAt(cursor.at++);
    if (next === 0x5d) return Object.freeze(array);
    if (next !== 0x2c) return FAIL;
    skipSpace(cursor);
  }
}

function readString(cursor: Cursor): string | typeof FAIL {
  const { text } = cursor;
  let value = '';
  let start = ++cursor.at;
  for (let i = start; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      cursor.at = i + 1;
      return value + text.slice(start, i);
    }
    if (code < 0x20) return FAIL;
    if (code === 0x5c) {
      value += text.slice(start, i);
      const escape = text[i + 1] ?? '';
      if (escape === 'u') {
        const hex = text.slice(i + 2, i + 6);
        if (!HEX4.test(hex)) return FAIL;
        value += String.fromCharCode(parseInt(hex, 16));
        i += 5;
      } else {
        const char = ESCAPES[escape];
        if (char === undefined || !Object.hasOwn(ESCAPES, escape)) return FAIL;
        value += char;
        i += 1;
      }
      start = i + 1;
    }
  }
  return FAIL;
}

/** A member name: one of `COMMON_NAMES` when the text spells it without escapes, else `readString`. */
function readName(cursor: Cursor): string | typeof FAIL {
  const { text, at } = cursor;
  const first = text.charCodeAt(at + 1);
  const names = first < 128 ? NAMES_BY_FIRST[first] : undefined;
  if (names !== undefined) {
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const end = at + 1 + name.length;
      if (text.charCodeAt(end) === 0x22 && text.startsWith(name, at + 1)) {
        cursor.at = end + 1;
        return name;
      }
    }
  }
  return readString(cursor);
}

function readLiteral(cursor: Cursor, word: string, value: boolean | null): boolean | null | typeof FAIL {
  if (!cursor.text.startsWith(word, cursor.at)) return FAIL;
  cursor.at += word.length;
  return value;
}

function readNumber(cursor: Cursor): number | typeof FAIL {
  // Fast path for the common case, a small non-negative integer (`exp`, `iat`): exact below 2^53.
  const { text } = cursor;
  let i = cursor.at;
  let value = 0;
  let code = text.charCodeAt(i);
  if (code > 0x30 && code <= 0x39) {
    do {
      value = value * 10 + (code - 0x30);
      code = text.charCodeAt(++i);
    } while (code >= 0x30 && code <= 0x39 && i - cursor.at < 15);
    if (code !== 0x2e && code !== 0x65 && code !== 0x45 && !(code >= 0x30 && code <= 0x39)) {
      cursor.at = i;
      return value;
    }
  }
  NUMBER.lastIndex = cursor.at;
  const match = NUMBER.exec(cursor.text);
  if (match === null) return FAIL;
  cursor.at = NUMBER.lastIndex;
  return Number(match[0]);
}
