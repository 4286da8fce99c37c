// Checking an audit log's hash chain (design §34): the records as read or exported, in order.
import { checkOptionNames } from '../auth/internal.ts';
import {
  AUDIT_GENESIS,
  type AuditHead,
  type AuditKey,
  type ChainedRecord,
  chainHasher,
  isChained,
  sameHash,
} from './audit-chain.ts';
import { configError } from './errors.ts';
import { canonicalJson } from './canonical-json.ts';

/** Options of `verifyAuditLog()`. */
export interface VerifyAuditLogOptions {
  /** The log's key, when it has one: each `hash` is then checked as an HMAC-SHA-256 under it. */
  key?: AuditKey;
  /** A `{ seq, hash }` kept from `audit head` earlier: the record of that `seq` must have that hash. */
  head?: AuditHead;
}

/**
 * Why a chain broke at `brokenSeq`:
 * - `shape`: the item is not a record (an object with `seq`, `prev` and `hash` in their forms);
 * - `seq`: a record is missing there, or the records are out of order (another `seq` came);
 * - `prev`: the record does not link to the one before it (a record before it was changed or inserted),
 *   or the first record of a whole log does not start from the genesis value;
 * - `hash`: the record is not what was hashed (it was edited, or hashed under another key);
 * - `head`: the record at the kept head's `seq` has another hash (the chain was rebuilt after it);
 * - `truncated`: the records end before the kept head's `seq`.
 */
export type AuditBreak = 'shape' | 'seq' | 'prev' | 'hash' | 'head' | 'truncated';

/** What `verifyAuditLog()` found. */
export interface AuditVerification {
  /** Every record holds, and so does the head when one was given. */
  ok: boolean;
  /** The first `seq` at which the chain does not hold (for a missing record, the missing `seq`); absent when `ok`. */
  brokenSeq?: number;
  /** Why it broke there; absent when `ok`. */
  reason?: AuditBreak;
  /**
   * The records start after `seq` 1 (an export with `--since`, a bounded memory log): the first
   * record's `prev` was taken as given, so records removed before it cannot show.
   */
  midChain: boolean;
  /** How many records were checked (up to the break). */
  records: number;
  /** The last record that held: `{ seq, hash }`. */
  last?: AuditHead;
  /** A `head` was given and its `seq` was among the records (false: the records start after it, so it was not checked). */
  headChecked: boolean;
}

/**
 * Checks a hash chain (design §34): `records` (an array, or any iterable or async iterable such
 * as a log's `read()`) in the order given. Resolves with the first `seq` at which it breaks, an
 * edited, removed, reordered or inserted record, or `ok`; and whether it starts mid-chain (its
 * first `prev` then taken as given). Without `key` whoever can write the records can rebuild a
 * chain that holds: keep `{ seq, hash }` from `agentward audit head` elsewhere and pass it as
 * `head`. It throws only for bad options (`AuthConfigError`).
 * @example
 * const result = await verifyAuditLog(log.read(), { key: env.AUDIT_KEY });
 * if (!result.ok) console.error(`the audit log is broken at seq ${result.brokenSeq} (${result.reason})`);
 */
export async function verifyAuditLog(
  records: Iterable<unknown> | AsyncIterable<unknown>,
  options: VerifyAuditLogOptions = {},
): Promise<AuditVerification> {
  const helper = 'verifyAuditLog()';
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw configError(`${helper}: options must be { key?, head? }`);
  checkOptionNames(helper, options, ['key', 'head']);
  const { key, head } = options;
  if (head !== undefined && !isHead(head))
    throw configError(`${helper}: head must be { seq, hash }: a positive integer and 64 lowercase hex digits`);
  const hasher = chainHasher(helper, key);

  let previous: ChainedRecord | undefined;
  let midChain = false;
  let count = 0;
  let headChecked = false;
  const result = (broken?: { seq: number; reason: AuditBreak }): AuditVerification => ({
    ok: broken === undefined,
    ...(broken === undefined ? {} : { brokenSeq: broken.seq, reason: broken.reason }),
    midChain,
    records: count,
    ...(previous === undefined ? {} : { last: { seq: previous.seq, hash: previous.hash } }),
    headChecked,
  });

  for await (const item of records) {
    const expected = previous === undefined ? undefined : previous.seq + 1;
    if (!isChained(item)) return result({ seq: expected ?? 1, reason: 'shape' });
    if (previous === undefined) {
      if (item.seq > 1) midChain = true;
      else if (item.prev !== AUDIT_GENESIS) return result({ seq: 1, reason: 'prev' });
    } else {
      // A missing record names its own seq; a record from before (the first two swapped) names its.
      if (item.seq !== expected) return result({ seq: Math.min(expected!, item.seq), reason: 'seq' });
      if (!sameHash(item.prev, previous.hash)) return result({ seq: item.seq, reason: 'prev' });
    }
    const { hash, ...fields } = item;
    if (!sameHash(await hasher.hash(canonicalJson(fields)), hash)) return result({ seq: item.seq, reason: 'hash' });
    if (head !== undefined && item.seq === head.seq) {
      headChecked = true;
      if (!sameHash(item.hash, head.hash)) return result({ seq: item.seq, reason: 'head' });
    }
    previous = item;
    count++;
  }
  if (head !== undefined && !headChecked && (previous === undefined || previous.seq < head.seq))
    return result({ seq: (previous?.seq ?? 0) + 1, reason: 'truncated' });
  return result();
}

function isHead(value: unknown): value is AuditHead {
  if (typeof value !== 'object' || value === null) return false;
  const { seq, hash } = value as { seq?: unknown; hash?: unknown };
  return Number.isInteger(seq) && (seq as number) >= 1 && typeof hash === 'string' && /^[0-9a-f]{64}$/.test(hash);
}
