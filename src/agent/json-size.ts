// The size a store's record takes as JSON, counted without writing it (design §19: `limits.sessionBytes`).

/** Printable ASCII but `"` and `\\`: JSON writes such a string as it is, one byte a character. */
const PLAIN_JSON = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** The UTF-8 bytes of `text` as a JSON string, quotes included, without building it. */
function stringBytes(text: string): number {
  if (PLAIN_JSON.test(text)) return text.length + 2;
  let bytes = 2;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20) bytes += unit === 8 || unit === 9 || unit === 10 || unit === 12 || unit === 13 ? 2 : 6;
    else if (unit === 0x22 || unit === 0x5c) bytes += 2;
    else if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit < 0xd800 || unit > 0xdfff) bytes += 3;
    else if (unit <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) (bytes += 4), i++;
    else bytes += 6; // a lone surrogate: JSON writes \udxxx
  }
  return bytes;
}

/** What JSON.stringify leaves out of an object, and writes as `null` in an array. */
const omitted = (item: unknown): boolean =>
  item === undefined || typeof item === 'function' || typeof item === 'symbol';

/**
 * The UTF-8 size of a value as JSON.stringify writes it (what the stores keep), counted without
 * writing it: a walk over the values, a regular expression over each string, ten times faster
 * than JSON.stringify and a count on a record at the bound, which a turn counts twice
 * (docs/design.md §30, "Speed tricks and what they bought").
 */
export function serializedBytes(value: unknown): number {
  if (typeof value === 'string') return stringBytes(value);
  if (typeof value !== 'object' || value === null)
    return value === undefined ? 0 : (JSON.stringify(value) ?? 'null').length;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return serializedBytes(JSON.parse(JSON.stringify(value)));
  if (Array.isArray(value)) {
    let bytes = value.length === 0 ? 2 : value.length + 1;
    for (const item of value) bytes += omitted(item) ? 4 : serializedBytes(item);
    return bytes;
  }
  let bytes = 2;
  let members = 0;
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (omitted(item)) continue;
    bytes += stringBytes(key) + 1 + serializedBytes(item);
    members++;
  }
  return bytes + Math.max(0, members - 1);
}
