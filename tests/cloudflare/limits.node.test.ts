// The cloudflare-worker target with "limits" in agentward.json (design §22), run in workerd as
// built: the counters live in Durable Objects (AgentLimits, bound as AGENT_LIMITS), so the limit
// holds across requests and a restart; requests and MCP tools/call counted, never health;
// failures per CF-Connecting-IP before auth; requests in flight; model tokens counted by each
// session's object as its turns are stored (a local OpenAI-compatible server reporting usage).
// And the limit store contract, and the scenarios of "limits count what was spent" (design §25:
// failures counted first, tokens per model turn) behind two handlers, against real Durable
// Objects (tests/helpers/workerd/limit-store-worker.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { build } from '../../src/targets/build.ts';
import { ENV_TOKEN, bearer, fixture, writeDir } from '../helpers/build.ts';
import type { TestOutcome } from '../helpers/workerd/node-test-shim.ts';
import { startWorker, type RunningWorker } from '../helpers/workerd.ts';
import { startBuiltWorker } from '../helpers/worker.ts';

const auth = { authorization: bearer(ENV_TOKEN), 'content-type': 'application/json' };
const fromAddress = (address: string) => ({ 'cf-connecting-ip': address });

describe('cloudflare-worker target: requests and failures in Durable Objects', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentward-limits-worker-'));
  const out = join(folder, 'out');
  const persist = join(folder, 'durable-objects');
  let worker: RunningWorker;
  const logs: string[] = [];
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    worker.fetch(`http://worker/agent${path}`, {
      method: 'POST',
      headers: { ...auth, ...fromAddress('198.51.100.20'), ...headers },
      body: JSON.stringify(body),
    });

  before(async () => {
    const dir = writeDir(
      join(folder, 'dir'),
      {
        'agent.json': JSON.stringify({ name: 'limited', instructions: 'Echo.' }),
        'agentward.json': JSON.stringify({
          mcp: true,
          limits: { requests: { limit: 5, windowSec: 3600 }, failures: { limit: 2, windowSec: 3600 } },
        }),
      },
      fixture('plain'),
    );
    await build(dir, { target: 'cloudflare-worker', out, log: (line) => logs.push(line) });
    worker = await startBuiltWorker(out, { AGENT_API_TOKEN: ENV_TOKEN }, persist);
  });
  after(async () => {
    await worker?.dispose();
    rmSync(folder, { recursive: true, force: true });
  });

  test("the build declares the limits' Durable Object: binding, class, a migration of its own; the build says so", () => {
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    assert.deepEqual(manifest.durableObjects, { AGENT_SESSIONS: 'AgentSession', AGENT_LIMITS: 'AgentLimits' });
    const toml = readFileSync(join(out, 'wrangler.toml'), 'utf8');
    assert.match(toml, /name = "AGENT_LIMITS"\nclass_name = "AgentLimits"/);
    assert.match(toml, /tag = "v1"\nnew_sqlite_classes = \["AgentSession"\]/);
    assert.match(toml, /tag = "v2"\nnew_sqlite_classes = \["AgentLimits"\]/);
    assert.match(
      readFileSync(join(out, 'worker.js'), 'utf8'),
      /^export class AgentLimits extends DurableObject \{[\s\S]*?\n {2}alarm\(\) \{/m,
    );
    assert.match(logs.join('\n'), /limits: counted in Durable Objects \(class AgentLimits, binding AGENT_LIMITS\)/);
  });

  test('failures: two 401s from a CF-Connecting-IP, then 429 for it, the right token too; another address is served; health is never counted', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await worker.fetch('http://worker/agent/health')).status, 200);
    for (let i = 0; i < 2; i++)
      assert.equal(
        (await post('', { message: 'guess' }, { ...fromAddress('203.0.113.66'), authorization: 'Bearer wrong-token' }))
          .status,
        401,
      );
    const refused = await post('', { message: 'now right' }, fromAddress('203.0.113.66'));
    assert.equal(refused.status, 429);
    assert.deepEqual(await refused.json(), { error: 'Too Many Requests' });
    assert.equal(refused.headers.get('ratelimit-policy'), '"failures";q=2;w=3600');
    assert.match(refused.headers.get('retry-after')!, /^\d+$/);
    const served = await post('', { message: 'first' });
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('ratelimit-policy'), '"requests";q=5;w=3600');
    assert.match(served.headers.get('ratelimit')!, /^"requests";r=4;t=\d+$/);
  });

  test("failures: the address the edge sets (Miniflare, as Cloudflare, sets CF-Connecting-IP to the client's IP)", async () => {
    const unset = (headers: Record<string, string>) =>
      worker.fetch('http://worker/agent', { method: 'POST', headers, body: '{"message":"x"}' });
    for (let i = 0; i < 2; i++)
      assert.equal((await unset({ ...auth, authorization: 'Bearer wrong-token' })).status, 401);
    const refused = await unset(auth);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('ratelimit-policy'), '"failures";q=2;w=3600');
  });

  test('requests: MCP tools/list is not counted, tools/call is; the limit holds across a restart of the worker; past it, 429 on every route and on MCP', async () => {
    const mcp = (body: unknown) => post('/mcp', body, { accept: 'application/json, text/event-stream' });
    for (let i = 0; i < 3; i++) assert.equal((await mcp({ jsonrpc: '2.0', id: i, method: 'tools/list' })).status, 200);
    const called = await mcp({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'ask', arguments: { message: 'via mcp' } },
    });
    assert.equal(called.status, 200);
    assert.match(called.headers.get('ratelimit')!, /^"requests";r=3;/);
    const chat = await post('/chat', { message: 'streamed' }, { accept: 'text/event-stream' });
    assert.equal(chat.status, 200);
    assert.match(chat.headers.get('ratelimit')!, /^"requests";r=2;/);
    assert.match(await chat.text(), /event: finish/);
    await worker.dispose();
    worker = await startBuiltWorker(out, { AGENT_API_TOKEN: ENV_TOKEN }, persist);
    const read = await worker.fetch('http://worker/agent/approvals?sessionId=none', {
      headers: { ...auth, ...fromAddress('198.51.100.20') },
    });
    assert.equal(read.status, 200);
    assert.match(
      read.headers.get('ratelimit')!,
      /^"requests";r=1;/,
      'counted in the Durable Object, kept across the restart',
    );
    assert.equal((await post('', { message: 'last' })).status, 200);
    const refused = await post('', { message: 'one too many' }, fromAddress('192.0.2.200'));
    assert.equal(refused.status, 429, 'a principal is one caller from any address');
    assert.match(refused.headers.get('ratelimit')!, /^"requests";r=0;t=\d+$/);
    assert.equal(
      (
        await mcp({
          jsonrpc: '2.0',
          id: 10,
          method: 'tools/call',
          params: { name: 'ask', arguments: { message: 'no' } },
        })
      ).status,
      429,
    );
    assert.equal((await mcp({ jsonrpc: '2.0', id: 11, method: 'tools/list' })).status, 200);
  });
});

/** An OpenAI-compatible server reporting 60 + 40 tokens per turn; a message "hold" waits for `release()`. */
async function usageModelServer(): Promise<{
  baseURL: string;
  calls: number;
  release(): void;
  held: Promise<void>;
  close(): Promise<void>;
}> {
  let release!: () => void;
  let heard!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const held = new Promise<void>((resolve) => (heard = resolve));
  const state = { calls: 0 };
  const server: Server = createServer(async (request, response) => {
    let text = '';
    for await (const chunk of request) text += chunk;
    const body = JSON.parse(text) as { stream?: boolean; messages: { content: string }[] };
    state.calls++;
    const last = body.messages.at(-1)!.content;
    if (last === 'hold') {
      heard();
      await released;
    }
    const usage = { prompt_tokens: 60, completion_tokens: 40, total_tokens: 100 };
    if (!body.stream) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: `heard ${last}` }, finish_reason: 'stop' }],
          usage,
        }),
      );
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(
      `data: ${JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { content: `heard ${last}` } }] })}\n\n`,
    );
    response.write(
      `data: ${JSON.stringify({ id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
    );
    response.write(`data: ${JSON.stringify({ id: 'c', choices: [], usage })}\n\n`);
    response.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    get calls() {
      return state.calls;
    },
    release,
    held,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('cloudflare-worker target: tokens and requests in flight', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentward-limits-worker-'));
  const out = join(folder, 'out');
  let worker: RunningWorker;
  let model: Awaited<ReturnType<typeof usageModelServer>>;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    worker.fetch(`http://worker/agent${path}`, {
      method: 'POST',
      headers: { ...auth, ...headers },
      body: JSON.stringify(body),
    });

  before(async () => {
    model = await usageModelServer();
    const dir = writeDir(
      join(folder, 'dir'),
      {
        'agent.json': JSON.stringify({
          name: 'tokens',
          model: { provider: 'openai-compatible', baseURL: model.baseURL, model: 'm' },
        }),
        // An output reserve of 100 (design §25): a turn in flight holds its input and 100, not all that is left, so
        // the next request meets the concurrent limit, not the tokens one.
        'agentward.json': JSON.stringify({
          limits: { tokens: { limit: 250, windowSec: 3600, outputReserve: 100 }, concurrent: 1 },
        }),
      },
      fixture('plain'),
    );
    await build(dir, { target: 'cloudflare-worker', out, log: () => {} });
    worker = await startBuiltWorker(out, { AGENT_API_TOKEN: ENV_TOKEN });
  });
  after(async () => {
    await worker?.dispose();
    await model?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  test('concurrent: a request in flight holds the only slot; the next gets 429 with Retry-After 1 until it is done', async () => {
    const holding = post('', { message: 'hold' });
    await model.held;
    const refused = await post('', { message: 'meanwhile' });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('ratelimit-policy'), '"concurrent";q=1;qu="concurrent-requests"');
    assert.equal(refused.headers.get('retry-after'), '1');
    model.release();
    const done = await holding;
    assert.equal(done.status, 200);
    assert.match(
      done.headers.get('agentward-tokens')!,
      /^"tokens";r=150;/,
      'the budget after the turn, as agentHandler answers',
    );
    assert.equal((await done.json()).text, 'heard hold');
  });

  test("tokens: each turn's usage is counted as agentHandler counts it; once the total reached the limit, the next turn is refused before the model runs", async () => {
    // 100 spent by the held turn; 100 and 200 are below 250: two more turns start (one streamed); 300 is not.
    assert.equal((await post('', { message: 'second' })).status, 200);
    const streamed = await post('/chat', { message: 'third' }, { accept: 'text/event-stream' });
    assert.equal(streamed.status, 200);
    assert.match(await streamed.text(), /event: finish/);
    const calls = model.calls;
    const refused = await post('', { message: 'fourth' });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('agentward-tokens-policy'), '"tokens";q=250;w=3600');
    assert.match(refused.headers.get('agentward-tokens')!, /^"tokens";r=0;t=\d+$/);
    assert.equal(model.calls, calls, 'the model was not called');
    const read = await worker.fetch('http://worker/agent/approvals?sessionId=none', { headers: auth });
    assert.equal(read.status, 200, 'a read starts no turn');
  });
});

test('the limit store contract and the scenarios of limits that count what was spent, against real Durable Objects in workerd', async () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const worker = await startWorker({
    entry: 'tests/helpers/workerd/limit-store-worker.ts',
    compatibilityFlags: ['nodejs_compat'],
    esbuild: {
      alias: { 'node:test': join(root, 'tests/helpers/workerd/node-test-shim.ts') },
      external: ['node:assert', 'node:assert/strict'],
    },
    miniflare: {
      durableObjects: {
        LIMITS: { className: 'LimitObject', useSQLite: true },
        INSPECTED: { className: 'InspectedLimitObject', useSQLite: true },
      },
    } as never,
  });
  try {
    const outcomes = (await (await worker.fetch('http://worker/')).json()) as TestOutcome[];
    assert.equal(outcomes.length, 22, 'every test of the contract and of the scenarios ran, and the alarm test');
    assert.deepEqual(
      outcomes.filter((outcome) => !outcome.ok),
      [],
    );
  } finally {
    await worker.dispose();
  }
});
