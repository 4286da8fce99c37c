// RFC 8785, the JSON Canonicalization Scheme (JCS): one text for one JSON value, so a hash of it
// is a hash of the value however it was written (design §34). The audit log hashes records with
// it. ECMAScript is JCS's own reference: numbers are written as `Number.prototype.toString`
// writes them (RFC 8785 §3.2.2.3), strings as `JSON.stringify` does (§3.2.2.2), and properties
// sorted by their names' UTF-16 code units (§3.2.3), which is what `Array.prototype.sort`
// compares without a comparator. I-JSON (RFC 7493) refuses what has no exact JSON form.

import { AuditError } from './errors.ts';

/** Why a value has no canonical JSON: an `AuditError` (`AUDIT_RECORD_INVALID`, a `TypeError`) naming the path of the bad part (`$["tools"][2]`), never its value. */
const refuse = (message: string) => new AuditError('AUDIT_RECORD_INVALID', message);

/** Whether `text` holds a lone surrogate (a UTF-16 unit with no pair): I-JSON has no such string (RFC 7493 §2.1). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function string(text: string, path: string): string {
  if (LONE_SURROGATE.test(text)) throw refuse(`canonicalJson(): ${path} holds a lone surrogate (not I-JSON)`);
  return JSON.stringify(text);
}

function write(value: unknown, path: string, open: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return string(value, path);
    case 'number':
      // NaN and ±Infinity have no JSON form (RFC 8785 §3.2.2.3); -0 is written "0", as toString does.
      if (!Number.isFinite(value)) throw refuse(`canonicalJson(): ${path} is not a finite number`);
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw refuse(`canonicalJson(): ${path} is ${value === undefined ? 'undefined' : `a ${typeof value}`} (not JSON)`);
  }
  if (value === null) return 'null';
  if (open.has(value)) throw refuse(`canonicalJson(): ${path} refers to itself (a cycle)`);
  open.add(value);
  let text: string;
  if (Array.isArray(value)) {
    const items: string[] = [];
    for (let i = 0; i < value.length; i++) items.push(write(value[i], `${path}[${i}]`, open));
    text = `[${items.join(',')}]`;
  } else {
    const prototype = Object.getPrototypeOf(value);
    // A Date, a Map, a class instance: JSON.stringify would write something else than its fields.
    if (prototype !== Object.prototype && prototype !== null)
      throw refuse(`canonicalJson(): ${path} is not a plain object`);
    const members: string[] = [];
    const record = value as Record<string, unknown>;
    for (const name of Object.keys(record).sort()) {
      // As JSON.stringify does: a property whose value is undefined is not written.
      if (record[name] === undefined) continue;
      const at = `${path}[${JSON.stringify(name)}]`;
      members.push(`${string(name, at)}:${write(record[name], at, open)}`);
    }
    text = `{${members.join(',')}}`;
  }
  open.delete(value);
  return text;
}

/**
 * The canonical JSON text of `value` (RFC 8785): plain objects, arrays, strings, finite numbers,
 * booleans and null; object members sorted by name in UTF-16 code units, no whitespace. A member
 * whose value is `undefined` is left out, as `JSON.stringify` leaves it out; anything else
 * without an exact JSON form (`undefined` elsewhere, NaN, ±Infinity, a bigint, a function, a
 * lone surrogate, a Date or other non-plain object, a cycle) throws an `AuditError`
 * (`AUDIT_RECORD_INVALID`, a `TypeError`).
 * @example
 * canonicalJson({ b: [1e30, 4.50], a: '€' }) // '{"a":"€","b":[1e+30,4.5]}'
 */
export function canonicalJson(value: unknown): string {
  return write(value, '$', new Set());
}
