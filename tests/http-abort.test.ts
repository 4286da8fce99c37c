import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentHandler, createAgent, memoryStore } from '../src/index.ts';
import type { Model } from '../src/index.ts';

// A model that waits until the run's signal aborts, as a slow provider would while the client leaves.
const waitingModel: Model = {
  generate: ({ signal }) => new Promise((_, reject) => {
    signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
  }),
};

test('a client that disconnects aborts the run, and the handler logs no error for it', async () => {
  const agent = createAgent({ name: 'slow', model: waitingModel, store: memoryStore() });
  const handler = agentHandler(agent, { basePath: '/agent' });
  const errors: unknown[][] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => { errors.push(args); };
  try {
    const controller = new AbortController();
    const pending = handler(new Request('http://localhost/agent', {
      method: 'POST', body: JSON.stringify({ message: 'hi' }), headers: { 'content-type': 'application/json' }, signal: controller.signal,
    }));
    setTimeout(() => controller.abort(), 20);
    const response = await pending;
    assert.equal(response.status, 503);
    assert.equal(errors.length, 0);
  } finally {
    console.error = original;
  }
});
