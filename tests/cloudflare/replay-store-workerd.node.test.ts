// durableObjectReplayStore in workerd, against real Durable Objects (design §16, §29): the
// replay set and the DPoP nonces shared by every isolate, and two jwt() entries with nonces over
// it (tests/helpers/workerd/replay-store-worker.ts). The stand-in tests of the same store are
// tests/cloudflare/durable-object-replay.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startWorker } from '../helpers/workerd.ts';
import type { TestOutcome } from '../helpers/workerd/node-test-shim.ts';

test('durableObjectReplayStore inside workerd: replays and nonces shared through real Durable Objects', async () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const worker = await startWorker({
    entry: 'tests/helpers/workerd/replay-store-worker.ts',
    compatibilityFlags: ['nodejs_compat'],
    esbuild: {
      alias: { 'node:test': join(root, 'tests/helpers/workerd/node-test-shim.ts') },
      external: ['node:assert', 'node:assert/strict', 'node:fs', 'node:url'],
      // tests/helpers/jwt.ts resolves its vectors folder from its own URL (read only by tests that read vectors).
      define: { 'import.meta.url': JSON.stringify(`file://${join(root, 'tests/helpers/jwt.ts')}`) },
    },
    miniflare: { durableObjects: { REPLAY: { className: 'ReplayObject', useSQLite: true } } } as never,
  });
  try {
    const outcomes = (await (await worker.fetch('http://worker/')).json()) as TestOutcome[];
    assert.equal(outcomes.length, 3, 'every test of the worker ran');
    assert.deepEqual(
      outcomes.filter((outcome) => !outcome.ok),
      [],
    );
  } finally {
    await worker.dispose();
  }
});
