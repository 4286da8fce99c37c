// memoryAuditLog and verifyAuditLog (design §34): the audit log contract on the memory log,
// its bound (past `max` the oldest go, and the log starts mid-chain), and the options refused
// with the same configuration error as every factory, never showing the key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson } from '../../src/agent/canonical-json.ts';
import { MEMORY_AUDIT_LOG_DEFAULTS, memoryAuditLog, verifyAuditLog } from '../../src/index.ts';
import { auditLogContract, KEY, readAll, record } from '../helpers/audit-log-contract.ts';
import { assertConfigError } from '../helpers/config-error.ts';

auditLogContract('memoryAuditLog', async ({ key }) => ({ log: memoryAuditLog(key === undefined ? {} : { key }) }));

test('memoryAuditLog: past max the oldest records are dropped; the log reads from mid-chain and verifies as such', async () => {
  assert.equal(MEMORY_AUDIT_LOG_DEFAULTS.max, 10_000);
  const log = memoryAuditLog({ max: 3, key: KEY });
  for (let n = 1; n <= 8; n++) await log.append(record(n));
  const records = await readAll(log);
  assert.deepEqual(
    records.map((r) => r.seq),
    [6, 7, 8],
  );
  assert.deepEqual(await log.head(), { seq: 8, hash: records[2]!.hash });
  const result = await verifyAuditLog(records, { key: KEY });
  assert.deepEqual(
    { ok: result.ok, midChain: result.midChain, records: result.records },
    { ok: true, midChain: true, records: 3 },
  );
});

test('memoryAuditLog hands out copies: changing a record read or appended never changes the log', async () => {
  const log = memoryAuditLog();
  const given = { ...record(1), tags: ['a'] };
  const kept = await log.append(given);
  given.tags.push('b');
  kept.outcome = 'refused';
  const [read] = await readAll(log);
  assert.deepEqual(read!.tags, ['a']);
  assert.equal(read!.outcome, 'allowed');
  assert.equal((await verifyAuditLog(log.read())).ok, true);
});

test('memoryAuditLog() and verifyAuditLog(): bad options are a configuration error; a short key is refused and never shown', async () => {
  const short = 'short-secret-0123456789';
  assertConfigError(() => memoryAuditLog({ key: short }), 'memoryAuditLog()', 'a key under 32 bytes', [short]);
  assertConfigError(() => memoryAuditLog({ key: new Uint8Array(31) }), 'memoryAuditLog()', '31 bytes');
  assertConfigError(() => memoryAuditLog({ key: 42 as never }), 'memoryAuditLog()', 'a number');
  assertConfigError(() => memoryAuditLog({ max: 0 }), 'memoryAuditLog()', 'max 0');
  assertConfigError(() => memoryAuditLog({ max: 1.5 }), 'memoryAuditLog()', 'max 1.5');
  assertConfigError(() => memoryAuditLog({ maxx: 3 } as never), 'memoryAuditLog()', 'a typo');
  assert.throws(() => memoryAuditLog({ maxx: 3 } as never), /did you mean "max"\?/);
  assert.doesNotThrow(() => memoryAuditLog({ key: new Uint8Array(32) }));
  // verifyAuditLog is async: its refusal is a rejection, of the same error.
  const refusal = async (options: unknown) => {
    try {
      await verifyAuditLog([], options as never);
    } catch (error) {
      return error;
    }
    assert.fail(`${JSON.stringify(options)} was accepted`);
  };
  for (const [options, what] of [
    [{ key: short }, 'a short key'],
    [{ head: { seq: 0, hash: 'x' } }, 'a bad head'],
    [{ hed: {} }, 'a typo'],
  ] as const) {
    const error = await refusal(options);
    assertConfigError(
      () => {
        throw error;
      },
      'verifyAuditLog()',
      what,
      [short],
    );
  }
});

test('verifyAuditLog: an item that is not a record breaks the chain there; an empty list holds; a whole log must start from the genesis value', async () => {
  const log = memoryAuditLog();
  for (let n = 1; n <= 3; n++) await log.append(record(n));
  const records = await readAll(log);
  const notARecord = await verifyAuditLog([records[0], { ...records[1], hash: 'zz' }, records[2]]);
  assert.deepEqual({ brokenSeq: notARecord.brokenSeq, reason: notARecord.reason }, { brokenSeq: 2, reason: 'shape' });
  assert.deepEqual(await verifyAuditLog([]), { ok: true, midChain: false, records: 0, headChecked: false });
  const emptyWithHead = await verifyAuditLog([], { head: { seq: 3, hash: records[2]!.hash } });
  assert.deepEqual(
    { brokenSeq: emptyWithHead.brokenSeq, reason: emptyWithHead.reason },
    { brokenSeq: 1, reason: 'truncated' },
  );
  const matched = await verifyAuditLog(records, { head: { seq: 3, hash: records[2]!.hash } });
  assert.deepEqual({ ok: matched.ok, headChecked: matched.headChecked }, { ok: true, headChecked: true });
  const notGenesis = await verifyAuditLog([{ ...records[0]!, prev: records[2]!.hash }]);
  assert.deepEqual({ brokenSeq: notGenesis.brokenSeq, reason: notGenesis.reason }, { brokenSeq: 1, reason: 'prev' });
});

test('verifyAuditLog: an edited record whose hash was made again without the key breaks the link to it: the next seq (prev)', async () => {
  const log = memoryAuditLog();
  for (let n = 1; n <= 4; n++) await log.append(record(n));
  const records = await readAll(log);
  const { hash: _, ...fields } = { ...records[1]!, outcome: 'refused' };
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonicalJson(fields))));
  const rehashed = { ...fields, hash: [...digest].map((byte) => byte.toString(16).padStart(2, '0')).join('') };
  const result = await verifyAuditLog([records[0], rehashed, records[2], records[3]]);
  assert.deepEqual({ brokenSeq: result.brokenSeq, reason: result.reason }, { brokenSeq: 3, reason: 'prev' });
});
