// RFC 8785, the JSON Canonicalization Scheme (JCS): one text for one JSON value, so a hash of it
// is a hash of the value however it was written (design §34). The audit log hashes records with
// it. ECMAScript is JCS's own reference: numbers are written as `Number.prototype.toString`
// writes them (RFC 8785 §3.2.2.3), strings as `JSON.stringify` does (§3.2.2.2), and properties
// sorted by their names' UTF-16 code units (§3.2.3), which is what `Array.prototype.sort`
// compares without a comparator. I-JSON (RFC 7493) refuses what has no exact JSON form.

import { AuditError } from './errors.ts';

/** The path of a part, as a refusal names it (`$["tools"][2]`): made only when a part is refused. */
function pathText(path: readonly (string | number)[]): string {
  let text = '$';
  for (const step of path) text += typeof step === 'number' ? `[${step}]` : `[${JSON.stringify(step)}]`;
  return text;
}

/** Why a value has no canonical JSON: an `AuditError` (`AUDIT_RECORD_INVALID`, a `TypeError`) naming the path of the bad part, never its value. */
const refuse = (message: string) => new AuditError('AUDIT_RECORD_INVALID', message);

/** Whether `text` holds a lone surrogate (a UTF-16 unit with no pair): I-JSON has no such string (RFC 7493 §2.1). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Member names already checked, as written with their colon (`"time":`): records of one kind
 * repeat them (docs/design.md §30, "Speed tricks"). At most 1,000 names of up to 64 units, kept
 * for the process; a name past either bound is checked and written each time.
 */
const MEMBER_NAMES = new Map<string, string>();

/**
 * Writes `value` as canonical JSON. `path` holds the names and indexes that lead to it, and
 * `open` the objects and arrays being written around it (a cycle comes back to one of them);
 * both are read only to name a refused part, so no path text is made while all is well
 * (docs/design.md §30, "Speed tricks").
 */
function write(value: unknown, path: (string | number)[], open: object[]): string {
  switch (typeof value) {
    case 'string':
      if (LONE_SURROGATE.test(value))
        throw refuse(`canonicalJson(): ${pathText(path)} holds a lone surrogate (not I-JSON)`);
      return JSON.stringify(value);
    case 'number':
      // NaN and ±Infinity have no JSON form (RFC 8785 §3.2.2.3); -0 is written "0", as toString does.
      if (!Number.isFinite(value)) throw refuse(`canonicalJson(): ${pathText(path)} is not a finite number`);
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw refuse(
        `canonicalJson(): ${pathText(path)} is ${value === undefined ? 'undefined' : `a ${typeof value}`} (not JSON)`,
      );
  }
  if (value === null) return 'null';
  if (open.includes(value)) throw refuse(`canonicalJson(): ${pathText(path)} refers to itself (a cycle)`);
  open.push(value);
  let text: string;
  if (Array.isArray(value)) {
    text = '[';
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      text += `${i === 0 ? '' : ','}${write(value[i], path, open)}`;
      path.pop();
    }
    text += ']';
  } else {
    const prototype = Object.getPrototypeOf(value);
    // A Date, a Map, a class instance: JSON.stringify would write something else than its fields.
    if (prototype !== Object.prototype && prototype !== null)
      throw refuse(`canonicalJson(): ${pathText(path)} is not a plain object`);
    const record = value as Record<string, unknown>;
    text = '{';
    for (const name of Object.keys(record).sort()) {
      // As JSON.stringify does: a property whose value is undefined is not written.
      if (record[name] === undefined) continue;
      path.push(name);
      let member = MEMBER_NAMES.get(name);
      if (member === undefined) {
        if (LONE_SURROGATE.test(name))
          throw refuse(`canonicalJson(): ${pathText(path)} has a name that holds a lone surrogate (not I-JSON)`);
        member = `${JSON.stringify(name)}:`;
        if (name.length <= 64 && MEMBER_NAMES.size < 1_000) MEMBER_NAMES.set(name, member);
      }
      text += `${text.length === 1 ? '' : ','}${member}${write(record[name], path, open)}`;
      path.pop();
    }
    text += '}';
  }
  open.pop();
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
  return write(value, [], []);
}
