// Node (undici) lets a collected Request's signal stop following the signal it was made with:
// the handler must keep the Request reachable until its answer is made (design §25).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { agentHandler, createAgent, memoryStore } from '../../src/index.ts';
import { abortWaitingModel } from '../helpers/waiting-model.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

test('a client that disconnects aborts the run even when the Request was collected meanwhile (the handler keeps it reachable)', async () => {
  for (let round = 0; round < 5; round++) {
    const { model, started, aborted } = abortWaitingModel();
    const handler = agentHandler(createAgent({ name: 'slow', model, store: memoryStore() }), { basePath: '/agent' });
    const controller = new AbortController();
    // Nothing of this test holds the Request: only the handler can.
    const pending = handler(
      new Request('http://localhost/agent', {
        method: 'POST',
        body: JSON.stringify({ message: 'hi' }),
        headers: { 'content-type': 'application/json' },
        signal: controller.signal,
      }),
    );
    await started;
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // A timer keeps the loop alive long enough to see a run that never hears the abort.
    const timeout = setTimeout(() => {}, 2_000);
    controller.abort();
    try {
      assert.equal(((await aborted) as Error).name, 'AbortError');
      assert.equal((await pending).status, 503);
    } finally {
      clearTimeout(timeout);
    }
  }
});
