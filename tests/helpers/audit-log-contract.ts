/**
 * The tests every audit log passes (design §34): one gapless hash chain from the genesis value,
 * concurrent appends that never fork it, `read()` in `seq` order with `since`/`until`/`fromSeq`,
 * `head()`, records refused before they take a `seq`, keyed chains (HMAC) that only the key
 * verifies; and `verifyAuditLog` naming the first broken `seq` for each kind of tampering (an
 * edited, removed, reordered or inserted record, a chain rebuilt without the key and shown by a
 * kept head), done to what the log's storage holds where the test can reach it (`rewrite`), else
 * to the records read. `memoryAuditLog`, `postgresAuditLog` and the Durable Object log call
 * `auditLogContract(name, open)`. Portable: no Node import.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AUDIT_GENESIS, AuditError, type AuditLog, type ChainedRecord, verifyAuditLog } from '../../src/agent/index.ts';

export interface AuditLogUnderTest {
  /** A new, empty log (with `key` when given). */
  log: AuditLog;
  /**
   * Replaces what the log's storage holds by `change(stored records)`, the records kept in
   * positions 1, 2, 3… as given (a record's own `seq` is whatever it holds). Absent where the
   * storage cannot be reached (memory): the tampering is then done to the records read.
   */
  rewrite?: (change: (records: ChainedRecord[]) => ChainedRecord[]) => Promise<void>;
}

export const KEY = 'a-test-audit-key-of-at-least-32-bytes-0123456789';
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
/** A record at minute `n` after T0. */
export const record = (n: number, extra: Record<string, unknown> = {}) => ({
  time: new Date(T0 + n * 60_000).toISOString(),
  operation: 'send',
  outcome: 'allowed',
  status: 200,
  caller: { id: `user-${n}`, authenticator: 'api-token' },
  ...extra,
});

export async function readAll(log: AuditLog, options?: Parameters<AuditLog['read']>[0]): Promise<ChainedRecord[]> {
  const records: ChainedRecord[] = [];
  for await (const entry of log.read(options)) records.push(entry);
  return records;
}

/** The kinds of tampering, as changes to a list of records (positions from 0), each with the seq verify must name. */
const TAMPERING: { kind: string; change: (records: ChainedRecord[]) => ChainedRecord[]; broken: number }[] = [
  {
    kind: 'an edited record',
    change: (records) => records.map((r) => (r.seq === 3 ? { ...r, outcome: 'refused' } : r)),
    broken: 3,
  },
  { kind: 'a removed record', change: (records) => records.filter((r) => r.seq !== 3), broken: 3 },
  {
    kind: 'two records swapped',
    change: (records) => [...records.slice(0, 2), records[3]!, records[2]!, ...records.slice(4)],
    broken: 3,
  },
  {
    kind: 'an inserted record',
    change: (records) => [
      ...records.slice(0, 3),
      { ...records[2]!, seq: 4, prev: records[2]!.hash, outcome: 'forged' },
      ...records.slice(3),
    ],
    broken: 4,
  },
  {
    kind: 'a removed first record',
    change: (records) => [{ ...records[1]!, seq: 1 }, ...records.slice(2)],
    broken: 1,
  },
];

export function auditLogContract(name: string, open: (options: { key?: string }) => Promise<AuditLogUnderTest>): void {
  test(`${name} (audit log contract): appends chain from the genesis value, seq 1, 2, 3…; read in seq order; head`, async () => {
    const { log } = await open({});
    assert.equal(await log.head(), undefined);
    assert.deepEqual(await readAll(log), []);
    const first = await log.append(record(1));
    assert.deepEqual({ seq: first.seq, prev: first.prev }, { seq: 1, prev: AUDIT_GENESIS });
    assert.match(first.hash, /^[0-9a-f]{64}$/);
    assert.equal(first.operation, 'send');
    const second = await log.append(record(2));
    assert.deepEqual({ seq: second.seq, prev: second.prev }, { seq: 2, prev: first.hash });
    assert.deepEqual(await log.head(), { seq: 2, hash: second.hash });
    assert.deepEqual(await readAll(log), [first, second]);
    assert.deepEqual(await verifyAuditLog(log.read()), {
      ok: true,
      midChain: false,
      records: 2,
      last: { seq: 2, hash: second.hash },
      headChecked: false,
    });
    // The hash is the SHA-256 of the canonical JSON of the record without `hash`.
    const { hash, ...fields } = first;
    const canonical = canonicalText(fields);
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonical)));
    assert.equal(hash, [...digest].map((byte) => byte.toString(16).padStart(2, '0')).join(''));
  });

  test(`${name} (audit log contract): concurrent appends take turns: no gap, no fork, every record once`, async () => {
    const { log } = await open({});
    const appended = await Promise.all(Array.from({ length: 25 }, (_, i) => log.append(record(i, { n: i }))));
    const records = await readAll(log);
    assert.deepEqual(
      records.map((r) => r.seq),
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
    assert.deepEqual(new Set(records.map((r) => r.n)), new Set(Array.from({ length: 25 }, (_, i) => i)));
    assert.deepEqual(
      appended.map((r) => r.seq).sort((a, b) => a - b),
      records.map((r) => r.seq),
    );
    assert.equal((await verifyAuditLog(records)).ok, true);
  });

  test(`${name} (audit log contract): read({ since, until, fromSeq }): since ≤ time < until, from that seq, in order`, async () => {
    const { log } = await open({});
    for (let n = 1; n <= 6; n++) await log.append(record(n * 10));
    const at = (n: number) => new Date(T0 + n * 60_000).toISOString();
    const seqs = async (options: Parameters<AuditLog['read']>[0]) => (await readAll(log, options)).map((r) => r.seq);
    assert.deepEqual(await seqs({ since: at(20) }), [2, 3, 4, 5, 6]);
    assert.deepEqual(await seqs({ until: at(30) }), [1, 2]);
    assert.deepEqual(await seqs({ since: at(15), until: at(45) }), [2, 3, 4]);
    assert.deepEqual(await seqs({ fromSeq: 5 }), [5, 6]);
    assert.deepEqual(await seqs({ fromSeq: 3, until: at(50) }), [3, 4]);
    assert.deepEqual(await seqs({ since: '2026-01-01T00:20:00+00:00' }), [2, 3, 4, 5, 6], 'an offset instant');
    const since = await readAll(log, { since: at(30) });
    const partial = await verifyAuditLog(since);
    assert.deepEqual(
      { ok: partial.ok, midChain: partial.midChain, records: partial.records },
      { ok: true, midChain: true, records: 4 },
    );
    for (const bad of [{ since: 'yesterday' }, { until: '2026-01-01' }, { fromSeq: 0 }, { fromSeq: 1.5 }, { form: 1 }])
      await assert.rejects(
        readAll(log, bad as never),
        (error: unknown) =>
          error instanceof AuditError &&
          error instanceof TypeError &&
          error.code === 'AUDIT_READ_INVALID' &&
          error.message.startsWith('read(): '),
        JSON.stringify(bad),
      );
  });

  test(`${name} (audit log contract): a record without time, or with seq/prev/hash, or not JSON, is refused and takes no seq`, async () => {
    const { log } = await open({});
    await log.append(record(1));
    const refused: unknown[] = [
      { operation: 'send' },
      { time: 'now' },
      { time: '2026-01-01' },
      { ...record(2), seq: 9 },
      { ...record(2), prev: AUDIT_GENESIS },
      { ...record(2), hash: 'x' },
      { ...record(2), amount: Number.NaN },
      { ...record(2), at: new Date() },
      [record(2)],
      null,
    ];
    for (const bad of refused)
      await assert.rejects(
        log.append(bad as never),
        (error: unknown) =>
          error instanceof AuditError && error instanceof TypeError && error.code === 'AUDIT_RECORD_INVALID',
        JSON.stringify(bad),
      );
    const next = await log.append(record(3));
    assert.equal(next.seq, 2);
    assert.equal((await verifyAuditLog(log.read())).ok, true);
  });

  test(`${name} (audit log contract): with a key the hash is an HMAC: only that key verifies the chain`, async () => {
    const { log } = await open({ key: KEY });
    for (let n = 1; n <= 3; n++) await log.append(record(n));
    assert.equal((await verifyAuditLog(log.read(), { key: KEY })).ok, true);
    const unkeyed = await verifyAuditLog(log.read());
    assert.deepEqual({ brokenSeq: unkeyed.brokenSeq, reason: unkeyed.reason }, { brokenSeq: 1, reason: 'hash' });
    const other = await verifyAuditLog(log.read(), { key: `${KEY}-other` });
    assert.deepEqual({ brokenSeq: other.brokenSeq, reason: other.reason }, { brokenSeq: 1, reason: 'hash' });
  });

  for (const keyed of [false, true]) {
    const key = keyed ? KEY : undefined;
    for (const { kind, change, broken } of TAMPERING) {
      test(`${name} (audit log contract)${keyed ? ' with a key' : ''}: ${kind} breaks the chain at seq ${broken}`, async () => {
        const { log, rewrite } = await open({ key });
        for (let n = 1; n <= 6; n++) await log.append(record(n));
        const options = key === undefined ? {} : { key };
        let records: ChainedRecord[];
        if (rewrite === undefined) records = change(await readAll(log));
        else {
          await rewrite(change);
          records = await readAll(log);
        }
        const result = await verifyAuditLog(records, options);
        assert.equal(result.ok, false);
        assert.equal(result.brokenSeq, broken, `${kind}: ${result.reason}`);
      });
    }
  }

  test(`${name} (audit log contract): a chain rebuilt without the key holds alone, and breaks against the head kept before`, async () => {
    const { log, rewrite } = await open({});
    for (let n = 1; n <= 5; n++) await log.append(record(n));
    const kept = (await log.head())!;
    // Rebuild: edit record 2 and recompute every hash after it, as whoever writes the storage can.
    const rebuild = async (records: ChainedRecord[]) => {
      const rebuilt: ChainedRecord[] = [];
      let prev = AUDIT_GENESIS;
      for (const { hash: _, ...fields } of records) {
        const linked = { ...fields, prev, ...(fields.seq === 2 ? { outcome: 'refused' } : {}) };
        const canonical = canonicalText(linked);
        const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonical)));
        const hash = [...digest].map((byte) => byte.toString(16).padStart(2, '0')).join('');
        rebuilt.push({ ...linked, hash } as ChainedRecord);
        prev = hash;
      }
      return rebuilt;
    };
    const rebuilt = await rebuild(await readAll(log));
    if (rewrite !== undefined) await rewrite(() => rebuilt);
    const records = rewrite === undefined ? rebuilt : await readAll(log);
    assert.equal((await verifyAuditLog(records)).ok, true, 'without a key and a head, a rebuilt chain holds');
    const againstHead = await verifyAuditLog(records, { head: kept });
    assert.deepEqual(
      { ok: againstHead.ok, brokenSeq: againstHead.brokenSeq, reason: againstHead.reason },
      { ok: false, brokenSeq: 5, reason: 'head' },
    );
    const truncated = await verifyAuditLog(records.slice(0, 3), { head: kept });
    assert.deepEqual(
      { brokenSeq: truncated.brokenSeq, reason: truncated.reason },
      { brokenSeq: 4, reason: 'truncated' },
    );
    const original = await verifyAuditLog(records.slice(3), { head: { seq: 1, hash: kept.hash } });
    assert.deepEqual({ ok: original.ok, headChecked: original.headChecked }, { ok: true, headChecked: false });
  });
}

/** The canonical JSON of a flat-or-nested record of strings, numbers and objects (the test's own, to rebuild a chain). */
function canonicalText(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalText).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalText(v)}`).join(',')}}`;
}
