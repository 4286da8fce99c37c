// durableObjectAuditLog (agentward/cloudflare), design §34: the audit log contract on stand-ins
// for the namespace and the object's storage, each kind of tampering done to that storage; a
// chain kept across the object's restart; records and keys refused as the other logs refuse
// them; an unreachable object. The same contract in workerd: durable-object-audit-log-workerd.node.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChainedRecord } from '../../src/agent/index.ts';
import { AuditLogObjectCore, durableObjectAuditLog } from '../../src/cloudflare/durable-object-audit-log.ts';
import { verifyAuditLog } from '../../src/index.ts';
import { auditLogContract, KEY, readAll, record } from '../helpers/audit-log-contract.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { namespaceStandIn } from '../helpers/durable-object-namespace.ts';

const audits = () => namespaceStandIn((state) => new AuditLogObjectCore(state));
let unique = 0;

auditLogContract('durableObjectAuditLog', async ({ key }) => {
  const namespace = audits();
  const name = `audit-${++unique}`;
  return {
    log: durableObjectAuditLog(namespace, { name, ...(key === undefined ? {} : { key }) }),
    // What whoever can write the object's storage does: replace its records (position n holds the nth given).
    async rewrite(change) {
      const storage = namespace.storages.get(`id:${name}`)!;
      const stored = [...(await storage.list({ prefix: 'record:' })).values()].map(
        (text) => JSON.parse(String(text)) as ChainedRecord,
      );
      for (const key of [...storage.data.keys()]) if (key.startsWith('record:')) storage.data.delete(key);
      for (const [i, entry] of change(stored).entries())
        await storage.put(`record:${String(i + 1).padStart(16, '0')}`, JSON.stringify(entry));
    },
  };
});

test('durableObjectAuditLog: the chain outlives the object; another isolate appends after it; read pages past 200', async () => {
  const namespace = audits();
  const one = durableObjectAuditLog(namespace, { key: KEY });
  for (let n = 1; n <= 150; n++) await one.append(record(n));
  namespace.restart();
  const two = durableObjectAuditLog(namespace, { key: KEY });
  await Promise.all(Array.from({ length: 100 }, (_, n) => two.append(record(150 + n))));
  const records = await readAll(one);
  assert.equal(records.length, 250);
  assert.deepEqual(
    records.map((r) => r.seq),
    Array.from({ length: 250 }, (_, i) => i + 1),
  );
  assert.equal((await verifyAuditLog(records, { key: KEY })).ok, true);
  assert.deepEqual(
    (await readAll(two, { fromSeq: 240 })).map((r) => r.seq),
    Array.from({ length: 11 }, (_, i) => 240 + i),
  );
  assert.deepEqual(await two.head(), { seq: 250, hash: records[249]!.hash });
  // Two names, two chains.
  const other = durableObjectAuditLog(namespace, { name: 'other', key: KEY });
  assert.equal((await other.append(record(1))).seq, 1);
  // The key is never stored.
  for (const storage of namespace.storages.values())
    for (const value of storage.data.values()) assert.ok(!JSON.stringify(value).includes(KEY));
});

test('durableObjectAuditLog: bad options are configuration errors (the key never shown); an unreachable object is STORE_UNAVAILABLE', async () => {
  const namespace = audits();
  const short = 'a-short-secret';
  assertConfigError(() => durableObjectAuditLog(namespace, { key: short }), 'durableObjectAuditLog()', 'a short key', [
    short,
  ]);
  assertConfigError(
    () => durableObjectAuditLog(namespace, { nmae: 'x' } as never),
    'durableObjectAuditLog()',
    'a typo',
  );
  assertConfigError(() => durableObjectAuditLog(namespace, { name: '' }), 'durableObjectAuditLog()', 'an empty name');
  assertConfigError(() => durableObjectAuditLog({} as never), 'durableObjectAuditLog()', 'not a namespace');
  const log = durableObjectAuditLog(namespace);
  await assert.rejects(log.append({ operation: 'send' }), /needs "time"/);
  namespace.unreachable(true);
  await assert.rejects(log.append(record(1)), (error: Error & { code?: string }) => error.code === 'STORE_UNAVAILABLE');
  await assert.rejects(readAll(log), (error: Error & { code?: string }) => error.code === 'STORE_UNAVAILABLE');
  namespace.unreachable(false);
  assert.equal((await log.append(record(1))).seq, 1);
});
