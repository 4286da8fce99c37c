// examples/worker-hono.ts in workerd (Miniflare): a Hono app mounting the agent's routes with the
// handler perEnv() builds from `c.env`, once per env object: requests one after another count in the
// same handler's limits (RateLimit r=59, 58, …), which a handler built per request would restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startWorker } from '../helpers/workerd.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const TOKEN = 'hono-example-token-0123456789';

test('examples/worker-hono.ts: Hono on Workers serves the agent from the handler built once per env', async (t) => {
  const worker = await startWorker({
    entry: 'examples/worker-hono.ts',
    bindings: { AGENT_API_TOKEN: TOKEN },
    // `agentward` as the example imports it: this checkout's sources.
    esbuild: {
      alias: {
        agentward: join(root, 'src/index.ts'),
        'agentward/cloudflare': join(root, 'src/cloudflare/index.ts'),
      },
    },
  });
  t.after(() => worker.dispose());
  assert.equal(await (await worker.fetch('http://worker/')).text(), 'Hello from Hono');
  assert.equal((await worker.fetch('http://worker/agent/health')).status, 200);
  const send = (authorization?: string) =>
    worker.fetch('http://worker/agent', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization && { authorization }) },
      body: JSON.stringify({ message: 'hello from hono' }),
    });
  const refused = await send();
  assert.equal(refused.status, 401);
  assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
  const remaining: string[] = [];
  for (let i = 0; i < 3; i++) {
    const served = await send(`Bearer ${TOKEN}`);
    assert.equal(served.status, 200);
    assert.equal(((await served.json()) as { text: string }).text, 'hello from hono');
    remaining.push(/"requests";r=(\d+)/.exec(served.headers.get('ratelimit') ?? '')?.[1] ?? '');
  }
  assert.deepEqual(remaining, ['59', '58', '57'], 'one handler, built once for the env, counts every request');
});
