// Limits count what was spent (design §25): the scenarios of tests/helpers/limits-spent.ts on the
// memory store and on the Durable Object store over stand-ins, each behind two handlers sharing
// it; `tokens` per model turn on every surface (a first turn refused before a stream starts, a
// later one ending the stream with TOKEN_LIMIT, MCP answering 429), turns that failed or were
// refused after the model ran counting what they spent; and the memory store's keys: reads never
// create one, each kind of key has its own bound, a caller with a valid credential is never
// refused for want of room. On Node, Bun and Deno.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, tool } from '../../src/agent/index.ts';
import { estimateTokens } from '../../src/agent/token-estimate.ts';
import type { Model, ModelDelta } from '../../src/agent/types.ts';
import { apiToken } from '../../src/auth/index.ts';
import type { AuthFn } from '../../src/auth/types.ts';
import { durableObjectLimitStore } from '../../src/cloudflare/durable-object-limit-store.ts';
import { agentHandler } from '../../src/http/index.ts';
import { memoryLimitStore, type LimitStore } from '../../src/http/limit-store.ts';
import { limitStoreAt } from '../helpers/test-hook.ts';
import { captureConsoleError } from '../helpers/console.ts';
import { limitNamespaceStandIn } from '../helpers/limit-namespace.ts';
import { ALICE, fixtureAddress, fixtureAgent, fixtureAuth } from '../helpers/limits-fixture.ts';
import { limitsSpentScenarios, type LimitsServerOptions } from '../helpers/limits-spent.ts';

const BASE = 'https://agent.example/agent';
type Handler = (request: Request) => Promise<Response>;
const ANY = Number.MAX_SAFE_INTEGER;

/** Two handlers of the fixture agent over one store, as two processes would be. */
const twoHandlers =
  (makeStore: () => LimitStore) =>
  async ({ limits, maxOutputTokens }: LimitsServerOptions) => {
    const store = makeStore();
    const handlers = [0, 1].map((n) =>
      agentHandler(fixtureAgent(`handler ${n}`, maxOutputTokens), {
        basePath: '/agent',
        auth: fixtureAuth(),
        limits: { ...limits, store, clientAddress: (request) => fixtureAddress(request) ?? '192.0.2.1' },
      }),
    );
    return {
      fetch: (n: number, path: string, init?: RequestInit) => handlers[n % 2]!(new Request(`${BASE}${path}`, init)),
      store,
      close: async () => {},
    };
  };

limitsSpentScenarios(
  'memoryLimitStore',
  twoHandlers(() => memoryLimitStore()),
);
limitsSpentScenarios(
  'durableObjectLimitStore on stand-ins',
  twoHandlers(() => durableObjectLimitStore(limitNamespaceStandIn())),
);

const post = (handler: Handler, path: string, body: unknown, headers: Record<string, string> = {}) =>
  handler(
    new Request(`${BASE}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ALICE}`, ...headers },
      body: JSON.stringify(body),
    }),
  );
/** What alice has spent in a `tokens` window of 3600 s. */
const spent = async (store: LimitStore) =>
  (await store.hit('tokens/3600:p["","api-token","alice"]', 3600, 0, ANY)).count;

test('tokens: a first turn whose reservation would pass the limit is refused before the model runs, on a stream too: 429 with the tokens fields, not a stream', async () => {
  const store = memoryLimitStore();
  let calls = 0;
  const agent = createAgent({
    name: 'first',
    model: { generate: async () => (calls++, { text: 'never' }) },
    settings: { maxOutputTokens: 500 },
  });
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: fixtureAuth(),
    limits: { tokens: { limit: 400, windowSec: 3600 }, store },
  });
  for (const [path, headers] of [
    ['', {}],
    ['/chat', { accept: 'text/event-stream' }],
  ] as const) {
    const refused = await post(handler, path, { message: 'a message' }, headers);
    assert.equal(refused.status, 429, path);
    assert.equal(refused.headers.get('content-type'), 'application/json');
    assert.deepEqual(await refused.json(), { error: 'Too Many Requests' });
    assert.equal(refused.headers.get('agentward-tokens-policy'), '"tokens";q=400;w=3600');
    // What the turn would have reserved: its input's estimate and maxOutputTokens (500).
    assert.match(refused.headers.get('agentward-tokens')!, /^"tokens";r=400;t=\d+;needed=5\d\d$/);
  }
  const ui = await post(handler, '/ui', {
    id: 'ui-first',
    messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'a message' }] }],
    trigger: 'submit-message',
  });
  assert.equal(ui.status, 429);
  assert.equal(calls, 0, 'the model never ran');
  assert.equal(await spent(store), 0, 'a refused reservation counts nothing');
});

test('tokens: a later turn refused mid-stream ends the stream with an error event of code TOKEN_LIMIT, never a finish; MCP answers the HTTP 429 with a JSON-RPC error', async () => {
  const store = memoryLimitStore();
  const handler = agentHandler(fixtureAgent('stream'), {
    basePath: '/agent',
    auth: fixtureAuth(),
    mcp: true,
    limits: { tokens: { limit: 1500, windowSec: 3600 }, store },
  });
  const streamed = await post(handler, '/chat', { message: 'loop' }, { accept: 'text/event-stream' });
  assert.equal(streamed.status, 200);
  const text = await streamed.text();
  assert.match(
    text,
    /event: error\ndata: \{"type":"error","error":"the token budget of this window is spent \(limits\.tokens\); more in \d+ s","code":"TOKEN_LIMIT"\}/,
  );
  assert.equal(/event: finish/.test(text), false);
  assert.equal((text.match(/event: tool-call/g) ?? []).length, 2, 'two turns ran');
  assert.equal(await spent(store), 2000);

  // The same tool loop over MCP: its third turn cannot reserve, and the whole request answers 429.
  const overMcp = agentHandler(fixtureAgent('mcp'), {
    basePath: '/agent',
    auth: fixtureAuth(),
    mcp: true,
    limits: { tokens: { limit: 1500, windowSec: 3600 }, store: memoryLimitStore() },
  });
  const refused = await post(
    overMcp,
    '/mcp',
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask', arguments: { message: 'loop' } } },
    { accept: 'application/json, text/event-stream' },
  );
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('agentward-tokens-policy'), '"tokens";q=1500;w=3600');
  const retryAfter = Number(refused.headers.get('retry-after'));
  assert.ok(retryAfter >= 1);
  assert.deepEqual(await refused.json(), {
    jsonrpc: '2.0',
    id: 1,
    error: { code: -32000, message: 'Too Many Requests', data: { retryAfter } },
  });
});

/** A handler over `model` (and `options`) with `tokens`, and its store. */
function tokensHandler(model: Model, options: Record<string, unknown> = {}, auth: AuthFn[] = fixtureAuth()) {
  const store = memoryLimitStore();
  const agent = createAgent({ name: 'spent', model, ...options });
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth,
    limits: { tokens: { limit: 1_000_000, windowSec: 3600 }, store },
  });
  return { handler, store, agent };
}

test('tokens: a turn that failed after the model reported usage counts what it reported; one that reported nothing, its input estimate plus the estimate of what it produced', async () => {
  const reported: Model = {
    generate: async () => ({ text: 'unused' }),
    async *stream(): AsyncIterable<ModelDelta> {
      yield { type: 'usage', usage: { inputTokens: 2500, outputTokens: 500 } };
      yield { type: 'text', text: 'partial' };
      throw new Error('the provider broke');
    },
  };
  const first = tokensHandler(reported);
  const broken = await captureConsoleError(async () =>
    (await post(first.handler, '/chat', { message: 'break' }, { accept: 'text/event-stream' })).text(),
  );
  assert.match(broken.result, /event: error/);
  assert.equal(await spent(first.store), 3000);

  let estimate = 0;
  const silent: Model = {
    async generate(request) {
      // The input's estimate (design §25); what the turn reserved beyond it for its answer is given back.
      estimate =
        estimateTokens(request.instructions) + estimateTokens(JSON.stringify(request.tools)) + estimateTokens('break');
      throw new Error('no answer');
    },
  };
  const second = tokensHandler(silent);
  const answer = await captureConsoleError(() => post(second.handler, '', { message: 'break' }));
  assert.equal(answer.result.status, 502);
  assert.ok(estimate > 0);
  assert.equal(await spent(second.store), estimate, 'the input, and nothing produced');
});

test('tokens: a turn refused after the model ran (session full, too many approvals pending) counts what the model reported', async () => {
  const big: Model = {
    generate: async () => ({ text: 'x'.repeat(4096), usage: { inputTokens: 4000, outputTokens: 1000 } }),
  };
  const full = tokensHandler(big, { limits: { sessionBytes: 2048 } });
  const refused = await post(full.handler, '', { message: 'fill it' });
  assert.equal(refused.status, 409);
  assert.deepEqual(await refused.json(), { error: 'Session is full' });
  assert.equal(await spent(full.store), 5000);

  const asking: Model = {
    generate: async (request) => ({
      toolCalls: [{ id: `c${request.messages.length}`, name: 'refund', arguments: {} }],
      usage: { inputTokens: 600, outputTokens: 100 },
    }),
  };
  const refund = tool({
    name: 'refund',
    description: 'Refunds',
    parameters: { type: 'object', properties: {} },
    needsApproval: true,
    execute: async () => 'refunded',
  });
  const approvals = tokensHandler(asking, { tools: [refund], sessions: 'owned', maxPendingApprovals: 1 }, [
    apiToken(ALICE, { id: 'alice' }),
  ]);
  const waiting = await post(approvals.handler, '', { message: 'refund one' });
  assert.equal(waiting.status, 200);
  assert.equal(((await waiting.json()) as { status: string }).status, 'awaiting-approval');
  const tooMany = await post(approvals.handler, '', { message: 'refund another' });
  assert.equal(tooMany.status, 429);
  assert.deepEqual(await tooMany.json(), { error: 'Too many pending approvals' });
  assert.equal(await spent(approvals.store), 1400, 'both turns ran, and both count');
});

test('tokens: a settle that fails (the store is gone) fails the run before its turn is stored: 503, nothing of the turn kept', async () => {
  const inner = memoryLimitStore();
  const failing: LimitStore = {
    ...inner,
    settle: () => Promise.reject(Object.assign(new Error('database gone'), { code: 'STORE_UNAVAILABLE' })),
  };
  const agent = fixtureAgent('settle');
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: fixtureAuth(),
    limits: { tokens: { limit: 100_000, windowSec: 3600 }, store: failing },
  });
  const { result } = await captureConsoleError(() =>
    post(handler, '', { message: 'kept?', sessionId: 'settle-fails' }),
  );
  assert.equal(result.status, 503);
  await assert.rejects(agent.transcript('settle-fails'), { code: 'SESSION_NOT_FOUND' });
});

test('memoryLimitStore: 1,000 guesses from distinct IPv6 /64s fill failures (maxKeys 1,000); a new caller with the right token is still served', async () => {
  const handler = agentHandler(fixtureAgent('keys'), {
    basePath: '/agent',
    auth: fixtureAuth(),
    limits: {
      failures: { limit: 5, windowSec: 3600 },
      requests: { limit: 100, windowSec: 3600 },
      store: memoryLimitStore({ maxKeys: 1000 }),
      clientAddress: fixtureAddress,
    },
  });
  for (let n = 0; n < 1000; n++) {
    const address = `2001:db8:${(n >> 8).toString(16)}:${(n & 255).toString(16)}::1`;
    const guess = await post(
      handler,
      '',
      { message: 'guess' },
      { authorization: 'Bearer wrong-token-0123456789', 'x-test-address': address },
    );
    assert.equal(guess.status, 401, address);
  }
  const served = await post(handler, '', { message: 'hello' }, { 'x-test-address': '2001:db8:ffff:1::1' });
  assert.equal(served.status, 200);
  assert.match(served.headers.get('ratelimit')!, /^"requests";r=99;/);
});

test('memoryLimitStore: a principal with a valid credential is never refused for want of keys: past maxKeys the least recently counted window of its kind goes', async () => {
  const tokens = ['a', 'b', 'c'].map((name) => apiToken(`${name}-token-0123456789`, { id: name }));
  const handler = agentHandler(fixtureAgent('principals'), {
    basePath: '/agent',
    auth: tokens,
    limits: { requests: { limit: 5, windowSec: 3600 }, store: memoryLimitStore({ maxKeys: 2 }) },
  });
  for (const name of ['a', 'b', 'c', 'a']) {
    const answer = await post(handler, '', { message: 'hi' }, { authorization: `Bearer ${name}-token-0123456789` });
    assert.equal(answer.status, 200, name);
  }
});

test('memoryLimitStore: a read never creates a key; each kind of key (policy, principal or address) has its own bound, the least recently counted going first', async () => {
  const store = limitStoreAt(2, () => 1_000);
  await store.hit('tokens/60:p["","api-token","alice"]', 60, 7, ANY);
  // A thousand reads of callers that spent nothing: none takes a key, so alice's window stays.
  for (let n = 0; n < 1000; n++) {
    const read = await store.hit(`tokens/60:p["","api-token","reader-${n}"]`, 60, 0, 10);
    assert.deepEqual([read.allowed, read.count], [true, 0]);
  }
  assert.equal((await store.hit('tokens/60:p["","api-token","alice"]', 60, 0, ANY)).count, 7);
  // Addresses filling failures never touch the principals' windows.
  for (let n = 0; n < 50; n++) assert.equal((await store.hit(`failures/60:a192.0.2.${n}`, 60, 1, 5)).allowed, true);
  assert.equal((await store.hit('tokens/60:p["","api-token","alice"]', 60, 0, ANY)).count, 7);
  // Within a kind, the least recently counted window goes first.
  await store.hit('tokens/60:p["","api-token","bob"]', 60, 1, ANY);
  await store.hit('tokens/60:p["","api-token","alice"]', 60, 1, ANY);
  await store.hit('tokens/60:p["","api-token","carol"]', 60, 1, ANY);
  assert.equal((await store.hit('tokens/60:p["","api-token","alice"]', 60, 0, ANY)).count, 8);
  assert.equal((await store.hit('tokens/60:p["","api-token","bob"]', 60, 0, ANY)).count, 0, 'bob went');
  // A refunded failure slot leaves no key behind.
  const taken = await store.hit('failures/60:a198.51.100.1', 60, 1, 5);
  assert.equal((await store.settle('failures/60:a198.51.100.1', 60, taken.start, -1)).count, 0);
});
