// The hash chain of an audit log (design §34): each record carries `seq` (1, 2, 3… with no gap),
// `prev` (the hash of the record before it; GENESIS for the first) and `hash`, the SHA-256 of
// the record's canonical JSON (RFC 8785) without its `hash` field, so `prev` and `seq` are
// hashed too: editing, removing, inserting or reordering a record breaks the link after it.
// With a key, `hash` is an HMAC-SHA-256 under it, so whoever can write the stored records but
// not read the key cannot rebuild the chain. Web Crypto only.
import { AuthConfigError, constantTimeEqual, kindOf, sha256 } from '../auth/internal.ts';
import { canonicalJson } from './canonical-json.ts';
import { AuditError } from './errors.ts';

/** The `prev` of the first record of a log: 64 zeros (no record's SHA-256 or HMAC is that, but by a 2⁻²⁵⁶ chance). */
export const AUDIT_GENESIS: string = '0'.repeat(64);

/** The fewest bytes of an audit log's `key`: the size of the HMAC-SHA-256 output. */
export const MIN_AUDIT_KEY_BYTES = 32;

/** A record as a log keeps it: the record's own fields, and the three the chain adds. */
export type ChainedRecord = Record<string, unknown> & { seq: number; prev: string; hash: string };

/** The last record of a log, as `audit head` prints it: keep it elsewhere to show a chain rebuilt after it. */
export interface AuditHead {
  seq: number;
  hash: string;
}

/** The secret of a keyed log: a string (its UTF-8 bytes) or bytes. */
export type AuditKey = string | Uint8Array;

/** The fields the chain adds: a record given to `append()` may not carry them. */
export const CHAIN_FIELDS: readonly string[] = Object.freeze(['seq', 'prev', 'hash']);

const HEX64 = /^[0-9a-f]{64}$/;
const encoder = /* @__PURE__ */ new TextEncoder();

/** Hex of each byte value, made once: writing a digest is then 32 lookups. */
const HEX_BYTES: readonly string[] = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** Bytes as lowercase hex. */
function hex(bytes: ArrayBuffer | Uint8Array): string {
  let text = '';
  for (const byte of new Uint8Array(bytes)) text += HEX_BYTES[byte];
  return text;
}

/** The SHA-256 of a text's UTF-8 bytes, as hex: the synchronous SHA-256 of src/auth. */
export const sha256Hex = (text: string): string => hex(sha256(text));

/**
 * How a log hashes a record: the canonical JSON of the record without `hash` (seq and prev in it)
 * into hex, SHA-256 or HMAC-SHA-256 under the key.
 */
export interface ChainHasher {
  readonly hash: (canonical: string) => Promise<string>;
  /**
   * Without a key, the same hash at once: the synchronous SHA-256 of src/auth. An awaited
   * `crypto.subtle.digest` is a thread-pool job per record on Node, about 25 µs of a request's
   * time where this takes 3 (design §34). With a key, `undefined`: HMAC is Web Crypto's, awaited.
   */
  readonly hashNow: ((canonical: string) => string) | undefined;
}

/**
 * The hasher of a log whose options hold `key` (or none): the key is checked here, once, when the
 * log is made (`helper` names the factory in the error, which never shows the key).
 */
export function chainHasher(helper: string, key: unknown): ChainHasher {
  if (key === undefined) return { hash: async (canonical) => sha256Hex(canonical), hashNow: sha256Hex };
  let bytes: Uint8Array;
  if (typeof key === 'string') bytes = encoder.encode(key);
  else if (key instanceof Uint8Array) bytes = key.slice();
  else
    throw new AuthConfigError(
      `${helper}: key must be a secret string or Uint8Array of at least ${MIN_AUDIT_KEY_BYTES} bytes`,
    );
  if (bytes.length < MIN_AUDIT_KEY_BYTES)
    throw new AuthConfigError(
      `${helper}: key must be at least ${MIN_AUDIT_KEY_BYTES} bytes (a random secret, e.g. 32 bytes base64url-encoded); the one given is shorter`,
    );
  let imported: Promise<CryptoKey> | undefined;
  const hash = async (canonical: string) => {
    imported ??= crypto.subtle.importKey(
      'raw',
      bytes as Uint8Array<ArrayBuffer>,
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    const text = encoder.encode(canonical) as Uint8Array<ArrayBuffer>;
    return hex(await crypto.subtle.sign('HMAC', await imported, text));
  };
  return { hash, hashNow: undefined };
}

/**
 * What is hashed for a record appended as `seq` after `prev`: the canonical JSON (RFC 8785) of its
 * fields with `seq` and `prev`. The record must be a plain JSON object with a `time` (an ISO 8601
 * instant, which `read()`'s `since`/`until` compare) and without the chain's own fields; else an
 * `AuditError`. The text both checks the record and is its copy: what is hashed is what is kept.
 */
export function linkedText(record: unknown, seq: number, prev: string): string {
  checkShape(record);
  return canonicalJson({ ...record, seq, prev });
}

/** The record a log keeps and `append()` returns: a fresh copy of the linked text, with its hash. */
export const chainedRecord = (canonical: string, hash: string): ChainedRecord =>
  ({ ...(JSON.parse(canonical) as Record<string, unknown>), hash }) as ChainedRecord;

/** The record a log keeps for `record` appended as `seq` after `prev`: its JSON fields, `seq`, `prev` and `hash`. */
export async function chainRecord(
  record: unknown,
  seq: number,
  prev: string,
  hasher: ChainHasher,
): Promise<ChainedRecord> {
  const canonical = linkedText(record, seq, prev);
  return chainedRecord(canonical, await hasher.hash(canonical));
}

/** A record given to `append()`, checked and copied through JSON (so what is hashed is what is stored). */
export function recordFields(record: unknown): Record<string, unknown> {
  checkShape(record);
  // canonicalJson refuses what JSON would change (NaN, a Date, a cycle); its text is the copy.
  return JSON.parse(canonicalJson(record)) as Record<string, unknown>;
}

/** A record's shape: a plain object with `time`, without the chain's fields; else an `AuditError`. */
function checkShape(record: unknown): asserts record is Record<string, unknown> {
  if (typeof record !== 'object' || record === null || Array.isArray(record))
    throw new AuditError(
      'AUDIT_RECORD_INVALID',
      `append(): an audit record must be a plain JSON object; got ${kindOf(record)}`,
    );
  const fields = record as Record<string, unknown>;
  for (const field of CHAIN_FIELDS)
    if (Object.hasOwn(fields, field))
      throw new AuditError(
        'AUDIT_RECORD_INVALID',
        `append(): an audit record may not carry "${field}" (the log adds seq, prev and hash); got ${kindOf(fields[field])}`,
      );
  if (recordTime(fields) === undefined)
    throw new AuditError(
      'AUDIT_RECORD_INVALID',
      `append(): an audit record needs "time", an ISO 8601 instant such as 2026-01-01T00:00:00.000Z; got ${kindOf(fields.time)}`,
    );
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** The last instant read, and its milliseconds: records of one millisecond share their `time` text. */
let lastInstant = { text: '', ms: 0 };

/** Milliseconds since the epoch of an ISO 8601 instant (date, time and zone), else `undefined`. */
export function isoInstant(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  if (value === lastInstant.text) return lastInstant.ms;
  if (!ISO_INSTANT.test(value)) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return undefined;
  lastInstant = { text: value, ms };
  return ms;
}

/** The instant of a record's `time`, or `undefined`. */
export const recordTime = (record: Record<string, unknown>): number | undefined => isoInstant(record.time);

/** Whether `value` has the chain's fields in their forms: `seq` a positive integer, `prev` and `hash` 64 hex digits. */
export function isChained(value: unknown): value is ChainedRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { seq, prev, hash } = value as Record<string, unknown>;
  return (
    typeof seq === 'number' &&
    Number.isSafeInteger(seq) &&
    seq >= 1 &&
    typeof prev === 'string' &&
    HEX64.test(prev) &&
    typeof hash === 'string' &&
    HEX64.test(hash)
  );
}

/** Whether two hashes (hex) are equal, compared in constant time: a keyed hash is a MAC. */
export const sameHash = (a: string, b: string): boolean => constantTimeEqual(encoder.encode(a), encoder.encode(b));
