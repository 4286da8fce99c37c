// The audit log (design §34): what every log is (append, read, head), the reading options they
// share, and the bounded log in memory for tests and development. The PostgreSQL log is in
// src/postgres/audit-log.ts, the Durable Object log in src/cloudflare/durable-object-audit-log.ts.
import { checkOptionNames, kindOf } from '../auth/internal.ts';
import {
  AUDIT_GENESIS,
  type AuditHead,
  type AuditKey,
  type ChainedRecord,
  chainHasher,
  chainedRecord,
  isoInstant,
  linkedText,
  recordTime,
} from './audit-chain.ts';
import { AuditError, configError } from './errors.ts';

/** What `read()` returns: records from `fromSeq` on, with `since` ≤ `time` < `until`, in `seq` order. */
export interface AuditReadOptions {
  /** An ISO 8601 instant: records whose `time` is at or after it. */
  since?: string;
  /** An ISO 8601 instant: records whose `time` is before it (so `--since` of the next export continues it). */
  until?: string;
  /** The first `seq` to read (a positive integer). */
  fromSeq?: number;
}

/** An audit log: one hash chain of records (design §34). */
export interface AuditLog {
  /**
   * Appends one record (a plain JSON object with `time`, an ISO 8601 instant, and without `seq`,
   * `prev` or `hash`) and resolves with it as kept: its fields, `seq`, `prev` and `hash`.
   */
  append(record: Record<string, unknown>): Promise<ChainedRecord>;
  /** The records, in `seq` order. */
  read(options?: AuditReadOptions): AsyncIterable<ChainedRecord>;
  /** The last record's `{ seq, hash }`, or `undefined` while the log is empty. */
  head(): Promise<AuditHead | undefined>;
}

/** Options of `memoryAuditLog()`. */
export interface MemoryAuditLogOptions {
  /** A secret of at least 32 bytes: `hash` is then an HMAC-SHA-256 under it. */
  key?: AuditKey;
  /** The most records kept (default 10,000): past it the oldest are dropped, so the log starts mid-chain. */
  max?: number;
}

/** The defaults of `memoryAuditLog()`'s options. */
export const MEMORY_AUDIT_LOG_DEFAULTS: Readonly<{ max: number }> = Object.freeze({ max: 10_000 });

/** `read()`'s options, checked (a bad one is an `AuditError` `AUDIT_READ_INVALID` naming it), as bounds: `since`/`until` in ms, `fromSeq`. */
export function readRange(options: unknown): { since: number; until: number; fromSeq: number } {
  if (options === undefined) return { since: -Infinity, until: Infinity, fromSeq: 1 };
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new AuditError(
      'AUDIT_READ_INVALID',
      `read(): options must be { since?, until?, fromSeq? }; got ${kindOf(options)}`,
    );
  checkOptionNames(
    'read()',
    options,
    ['since', 'until', 'fromSeq'],
    (message) => new AuditError('AUDIT_READ_INVALID', message),
  );
  const { since, until, fromSeq = 1 } = options as AuditReadOptions;
  const instant = (value: unknown, name: 'since' | 'until') => {
    if (value === undefined) return name === 'since' ? -Infinity : Infinity;
    const ms = isoInstant(value);
    if (ms === undefined)
      throw new AuditError(
        'AUDIT_READ_INVALID',
        `read(): ${name} must be an ISO 8601 instant such as 2026-01-01T00:00:00Z; got ${kindOf(value)}`,
      );
    return ms;
  };
  if (!Number.isInteger(fromSeq) || fromSeq < 1)
    throw new AuditError('AUDIT_READ_INVALID', `read(): fromSeq must be a positive integer; got ${kindOf(fromSeq)}`);
  return { since: instant(since, 'since'), until: instant(until, 'until'), fromSeq };
}

/** Whether a kept record is within a `readRange()`. */
export const inRange = (record: ChainedRecord, range: ReturnType<typeof readRange>): boolean => {
  const time = recordTime(record) ?? Number.NaN;
  return !(record.seq < range.fromSeq) && time >= range.since && time < range.until;
};

/**
 * An audit log in memory (design §34), for tests and development: one hash chain, bounded to
 * `max` records (past it the oldest are dropped, so its `read()` starts mid-chain and
 * `verifyAuditLog` says so). Appends take turns, so concurrent ones never fork the chain.
 * Records are copied in and out: changing one read never changes the log.
 * @example
 * const log = memoryAuditLog();
 * await log.append({ time: new Date().toISOString(), operation: 'send', outcome: 'allowed' });
 * const { ok } = await verifyAuditLog(log.read());
 */
export function memoryAuditLog(options: MemoryAuditLogOptions = {}): AuditLog {
  const helper = 'memoryAuditLog()';
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw configError(`${helper}: options must be { key?, max? }`);
  checkOptionNames(helper, options, ['key', 'max']);
  const { key, max = MEMORY_AUDIT_LOG_DEFAULTS.max }: MemoryAuditLogOptions = options;
  if (!Number.isInteger(max) || max < 1) throw configError(`${helper}: max must be a positive integer`);
  const hasher = chainHasher(helper, key);
  /** The kept records as JSON text, oldest first; `first` indexes the oldest still kept. */
  let kept: string[] = [];
  let first = 0;
  let last: AuditHead = { seq: 0, hash: AUDIT_GENESIS };

  /** Links `record` after the last one with `hash` made of its text, and keeps it. */
  const keep = (canonical: string, hash: string): ChainedRecord => {
    // The canonical text is an object's: the hash goes in as one more member (read() parses it).
    kept.push(`${canonical.slice(0, -1)},"hash":"${hash}"}`);
    last = { seq: last.seq + 1, hash };
    if (kept.length - first > max) first++;
    // Compact now and then: dropped records are released in one slice, not one shift each.
    if (first >= max) [kept, first] = [kept.slice(first), 0];
    // A fresh object made from the text: nothing of it is shared with the caller or what is kept.
    return chainedRecord(canonical, hash);
  };

  const { hashNow } = hasher;
  // Without a key the hash is synchronous: each append is done in one step, before the next
  // starts, so appends never fork the chain and need no queue of promises (design §34).
  const append: AuditLog['append'] =
    hashNow !== undefined
      ? async (record) => {
          const canonical = linkedText(record, last.seq + 1, last.hash);
          return keep(canonical, hashNow(canonical));
        }
      : (() => {
          // With a key the HMAC is awaited: appends take turns, so concurrent ones never fork the chain.
          let turn: Promise<unknown> = Promise.resolve();
          return (record) => {
            const appended = turn.then(async () => {
              const canonical = linkedText(record, last.seq + 1, last.hash);
              return keep(canonical, await hasher.hash(canonical));
            });
            turn = appended.catch(() => undefined);
            return appended;
          };
        })();

  return {
    append,
    async *read(readOptions) {
      const range = readRange(readOptions);
      // A snapshot: records appended while the reader waits come on the next read.
      const texts = kept.slice(first);
      for (const text of texts) {
        const record = JSON.parse(text) as ChainedRecord;
        if (inRange(record, range)) yield record;
      }
    },
    async head() {
      return last.seq === 0 ? undefined : { ...last };
    },
  };
}
