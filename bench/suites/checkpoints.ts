// Suite `checkpoints`: one send (a new session, echo model) with 0 and with 10,000 checkpoints of
// other sessions in the store, on memoryStore and fileStore. Checkpoints are found through the
// session (issue 14: a send used to read every checkpoint of every session), so the time of a
// send must not grow with other sessions' checkpoints: target ≥ 0.8x of the empty store.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Store } from '../../src/agent/types.ts';
import { fileStore } from '../../src/node/file-store.ts';
import type { SuiteSpec } from '../lib.ts';

const FOREIGN = 10_000;

async function withForeignCheckpoints(store: Store, count: number): Promise<Store> {
  for (let start = 0; start < count; start += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, count - start) }, (_, i) =>
        store.saveCheckpoint({
          approvalId: `foreign-${start + i}`,
          sessionId: `foreign-session-${start + i}`,
          metadata: {},
          owner: ['jwt', null, `user-${start + i}`],
        }),
      ),
    );
  }
  return store;
}

const sender = (store: Store) => {
  const agent = createAgent({ name: 'bench', model: echoModel(), store });
  const principal = { id: 'bench-user', type: 'user' as const, authenticator: 'jwt' };
  return () => agent.send('hello', { principal });
};

export default async function suites(): Promise<SuiteSpec[]> {
  const dirs = await Promise.all([0, 1].map(() => mkdtemp(join(tmpdir(), 'agentward-bench-'))));
  process.once('exit', () => void Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));
  const options = { maxSessions: 1_000_000, ttl: Infinity };
  const cases = {
    'memory-0': sender(memoryStore(options)),
    [`memory-${FOREIGN}`]: sender(await withForeignCheckpoints(memoryStore(options), FOREIGN)),
    'file-0': sender(fileStore(dirs[0]!)),
    [`file-${FOREIGN}`]: sender(await withForeignCheckpoints(fileStore(dirs[1]!), FOREIGN)),
  };
  return [
    {
      suite: 'checkpoints',
      baseline: 'memory-0',
      cases,
      note: `each case: agent.send('hello') to a new session, with 0 or ${FOREIGN.toLocaleString('en-US')} checkpoints of other sessions in the store`,
      verdict: (ops) =>
        (['memory', 'file'] as const)
          .map((kind) => {
            const ratio = ops[`${kind}-${FOREIGN}`]! / ops[`${kind}-0`]!;
            return `${kind}Store: ${ratio.toFixed(2)}x with ${FOREIGN} foreign checkpoints (target ≥ 0.8x, flat: ${ratio >= 0.8 ? 'met' : 'MISSED'})`;
          })
          .join('; '),
    },
  ];
}
