// SPDX-License-Identifier: MIT

/** Whether `value` is an object other than an array: the shape of a JSON object, a JWK, an options record. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const MAX_DEPTH = 32;
/** A literal or a number (RFC 8259 §3, §6), from where a value starts. */
const SCALAR = /true|false|null|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
/** An escape in a string; one that matches neither group is one RFC 8259 §7 does not allow. */
const ESCAPE = /\\(?:u([0-9A-Fa-f]{4})|(["\\/bfnrt])|)/g;
const ESCAPED: Readonly<Record<string, string>> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

// The text being parsed and the index read next. A parse runs start to end synchronously, never
// inside another, so module state serves every call without a closure or cursor per parse.
let text = '';
let at = 0;

/**
 * Parses RFC 8259 JSON whose top level is an object, deeply frozen. `null` (never a throw) when
 * the text is not JSON, not an object, nested deeper than 32 levels, or names a member twice in
 * one object (the confusion RFC 7515 §5.2 and RFC 7519 §4 warn about). A `__proto__` member is
 * an own property, as with `JSON.parse`. Not `JSON.parse` itself: workerd's, once in some state,
 * reads every escaped one-character member name as one and the same name.
 */
export function parseJsonObject(json: string): Record<string, unknown> | null {
  text = json;
  at = 0;
  const parsed = peek() === 0x7b ? (value(0) as Record<string, unknown> | undefined) : undefined;
  const complete = parsed !== undefined && (peek(), at === json.length);
  text = '';
  return complete ? parsed : null;
}

/** The code of the next character that is not JSON whitespace, at `at` (NaN at the end). */
function peek(): number {
  let code = text.charCodeAt(at);
  while (code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) code = text.charCodeAt(++at);
  return code;
}

// Each reader returns `undefined` for malformed text: no JSON value is undefined.

function string(): string | undefined {
  const start = ++at;
  let escaped = false;
  for (let code = text.charCodeAt(at); code !== 0x22; code = text.charCodeAt(++at)) {
    if (!(code >= 0x20)) return undefined; // a control character, or the end of the text
    if (code === 0x5c) escaped = ++at > 0; // the escaped character is never the closing quote
  }
  const raw = text.slice(start, at++);
  if (!escaped) return raw;
  let valid = true;
  const decoded = raw.replace(ESCAPE, (_, hex: string | undefined, char: string | undefined) =>
    hex !== undefined
      ? String.fromCharCode(parseInt(hex, 16))
      : char !== undefined
        ? (ESCAPED[char] ?? char)
        : ((valid = false), ''),
  );
  return valid ? decoded : undefined;
}

/** The value at `at`; objects and arrays nested at most MAX_DEPTH deep, each frozen. */
function value(depth: number): unknown {
  const code = peek();
  if (code === 0x22) return string();
  if (code !== 0x7b && code !== 0x5b) {
    SCALAR.lastIndex = at;
    const scalar = SCALAR.exec(text)?.[0];
    if (scalar === undefined) return undefined;
    at = SCALAR.lastIndex;
    return scalar === 'true' ? true : scalar === 'false' ? false : scalar === 'null' ? null : Number(scalar);
  }
  if (depth === MAX_DEPTH) return undefined;
  const object = code === 0x7b;
  const close = object ? 0x7d : 0x5d;
  const container: Record<string, unknown> | unknown[] = object ? {} : [];
  at++;
  if (peek() === close) at++;
  else {
    for (;;) {
      if (object) {
        const name = peek() === 0x22 ? string() : undefined;
        if (name === undefined || Object.hasOwn(container, name) || peek() !== 0x3a) return undefined;
        at++;
        const member = value(depth + 1);
        if (member === undefined) return undefined;
        // As with JSON.parse: a member named __proto__ is an own property, not the prototype.
        if (name === '__proto__')
          Object.defineProperty(container, name, {
            value: member,
            writable: true,
            enumerable: true,
            configurable: true,
          });
        else (container as Record<string, unknown>)[name] = member;
      } else {
        const item = value(depth + 1);
        if (item === undefined) return undefined;
        (container as unknown[]).push(item);
      }
      const next = peek();
      at++;
      if (next === close) break;
      if (next !== 0x2c) return undefined;
    }
  }
  return Object.freeze(container);
}
