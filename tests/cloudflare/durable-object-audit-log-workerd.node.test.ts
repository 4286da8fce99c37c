// durableObjectAuditLog in workerd, against real Durable Objects (design §34): the audit log
// contract, each kind of tampering done to the object's storage
// (tests/helpers/workerd/audit-log-worker.ts). The stand-in tests of the same log are
// tests/cloudflare/durable-object-audit-log.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startWorker } from '../helpers/workerd.ts';
import type { TestOutcome } from '../helpers/workerd/node-test-shim.ts';

test('durableObjectAuditLog inside workerd: the audit log contract against real Durable Objects', async () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const worker = await startWorker({
    entry: 'tests/helpers/workerd/audit-log-worker.ts',
    compatibilityFlags: ['nodejs_compat'],
    esbuild: {
      alias: { 'node:test': join(root, 'tests/helpers/workerd/node-test-shim.ts') },
      external: ['node:assert', 'node:assert/strict'],
    },
    miniflare: { durableObjects: { AUDIT: { className: 'TamperableAuditLog', useSQLite: true } } } as never,
  });
  try {
    const outcomes = (await (await worker.fetch('http://worker/')).json()) as TestOutcome[];
    assert.equal(outcomes.length, 16, 'every test of the contract ran');
    assert.deepEqual(
      outcomes.filter((outcome) => !outcome.ok),
      [],
    );
  } finally {
    await worker.dispose();
  }
});
