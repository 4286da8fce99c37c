// limits.concurrent and limits.tokens on runs (design §22, §25): requests in flight per principal
// (a streamed answer until its stream ends or is cancelled; each slot released exactly once, on
// errors and aborts too); model tokens reserved before each turn and settled with what it spent,
// before the answer, with a model that reports usage and an AI SDK MockLanguageModelV4; a store
// that fails answers 503 (a settle that fails: tests/http/limits-spent.test.ts).
// On Node, Bun and Deno.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { apiToken } from '../../src/auth/index.ts';
import { createAgent } from '../../src/agent/index.ts';
import type { Model, ModelDelta, Usage } from '../../src/agent/types.ts';
import { agentHandler } from '../../src/http/index.ts';
import { memoryLimitStore, type LimitStore } from '../../src/http/limit-store.ts';
import { captureConsoleError } from '../helpers/console.ts';
import { type Item, parseList } from '../helpers/structured-fields.ts';

const BASE = 'https://agent.example/agent';
type Handler = (request: Request) => Promise<Response>;
const AUTH = [apiToken('alice-token-0123456789', { id: 'alice' }), apiToken('bob-token-0123456789', { id: 'bob' })];

const post = (
  handler: Handler,
  path: string,
  body: unknown,
  token = 'alice-token-0123456789',
  init: RequestInit & { headers?: Record<string, string> } = {},
) =>
  handler(
    new Request(`${BASE}${path}`, {
      ...init,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...init.headers },
      body: JSON.stringify(body),
    }),
  );
const send = (handler: Handler, message: string, token?: string) => post(handler, '', { message }, token);
const stream = (handler: Handler, message: string, token?: string) =>
  post(handler, '/chat', { message }, token, { headers: { accept: 'text/event-stream' } });
const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await tick(2);
  assert.ok(condition(), 'the condition came true');
}

/** A model whose turns wait at a gate the test opens; streamed, it yields one word before the gate. Each turn reports `usage`. */
function gatedModel(usage: Usage = { inputTokens: 10, outputTokens: 5 }) {
  const gates: { open(): void; fail(error: unknown): void }[] = [];
  const gate = (signal: AbortSignal | undefined) =>
    new Promise<void>((resolve, reject) => {
      const entry = { open: resolve, fail: reject };
      gates.push(entry);
      signal?.addEventListener(
        'abort',
        () => {
          if (gates.includes(entry)) gates.splice(gates.indexOf(entry), 1);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  const model: Model = {
    async generate(request) {
      await gate(request.signal);
      return { text: `done: ${request.messages.at(-1)!.content}`, usage };
    },
    async *stream(request): AsyncIterable<ModelDelta> {
      yield { type: 'text', text: 'first ' };
      await gate(request.signal);
      yield { type: 'text', text: 'last' };
      yield { type: 'usage', usage };
    },
  };
  return {
    model,
    waiting: () => gates.length,
    open: () => gates.splice(0).forEach((g) => g.open()),
    fail: (error: unknown) => gates.splice(0).forEach((g) => g.fail(error)),
  };
}

/** A memory store that records each lease's acquisitions and releases. */
function recordingStore() {
  const inner = memoryLimitStore();
  const released = new Map<string, number>();
  const acquired = new Set<string>();
  const store: LimitStore = {
    hit: inner.hit,
    settle: inner.settle,
    async acquire(key, lease, limit, ttlSec) {
      const taken = await inner.acquire(key, lease, limit, ttlSec);
      if (taken) acquired.add(lease);
      return taken;
    },
    async release(key, lease) {
      released.set(lease, (released.get(lease) ?? 0) + 1);
      await inner.release(key, lease);
    },
  };
  /** Every lease taken was released exactly once. */
  const balanced = () =>
    acquired.size === released.size &&
    [...released.values()].every((n) => n === 1) &&
    [...acquired].every((lease) => released.has(lease));
  return { store, acquired, released, balanced };
}

test('concurrent { 2 }: two requests in flight per principal, a third gets 429 with Retry-After 1 and "concurrent";q=2; a finished one frees its slot', async () => {
  const gated = gatedModel();
  const { store, balanced } = recordingStore();
  const handler = agentHandler(createAgent({ name: 'c', model: gated.model }), {
    basePath: '/agent',
    auth: AUTH,
    limits: { concurrent: 2, store },
  });
  const inFlight = [send(handler, 'one'), send(handler, 'two')];
  await until(() => gated.waiting() === 2);
  const refused = await send(handler, 'three');
  assert.equal(refused.status, 429);
  assert.deepEqual(await refused.json(), { error: 'Too Many Requests' });
  assert.equal(refused.headers.get('retry-after'), '1');
  assert.equal(refused.headers.get('ratelimit-policy'), '"concurrent";q=2;qu="concurrent-requests"');
  assert.equal(refused.headers.get('ratelimit'), '"concurrent";r=0');
  assert.equal(refused.headers.get('cache-control'), 'no-store');
  const other = send(handler, 'bob too', 'bob-token-0123456789');
  await until(() => gated.waiting() === 3);
  gated.open();
  assert.deepEqual(
    (await Promise.all([...inFlight, other])).map((response) => response.status),
    [200, 200, 200],
  );
  const next = send(handler, 'four');
  await until(() => gated.waiting() === 1);
  gated.open();
  assert.equal((await next).status, 200);
  assert.ok(balanced());
});

test('concurrent: a streamed answer is in flight until its stream ends, or until the client cancels it; its slot is released once', async () => {
  const gated = gatedModel();
  const { store, balanced, released } = recordingStore();
  const handler = agentHandler(createAgent({ name: 'c', model: gated.model }), {
    basePath: '/agent',
    auth: AUTH,
    limits: { concurrent: 1, store },
  });
  const streamed = await stream(handler, 'hello');
  assert.equal(streamed.status, 200);
  assert.equal(streamed.headers.get('content-type'), 'text/event-stream');
  await until(() => gated.waiting() === 1);
  assert.equal((await send(handler, 'meanwhile')).status, 429, 'the stream holds the slot');
  gated.open();
  const text = await streamed.text();
  assert.match(text, /event: finish/);
  await until(() => released.size === 1);
  const next = send(handler, 'after the stream');
  await until(() => gated.waiting() === 1);
  gated.open();
  assert.equal((await next).status, 200);

  // A client that cancels the stream midway gives the slot back at once.
  const cancelled = await stream(handler, 'cancel me');
  await until(() => gated.waiting() === 1);
  await cancelled.body!.cancel();
  await until(() => released.size === 3);
  // The cancelled body aborts its run too: it no longer waits at its gate.
  await until(() => gated.waiting() === 0);
  const after = send(handler, 'after the cancel');
  await until(() => gated.waiting() === 1);
  gated.open();
  assert.equal((await after).status, 200);
  await until(balanced);
});

test('concurrent: a run that fails, and a request its client aborts, release their slot exactly once', async () => {
  const gated = gatedModel();
  const { store, balanced, released } = recordingStore();
  const handler = agentHandler(createAgent({ name: 'c', model: gated.model }), {
    basePath: '/agent',
    auth: AUTH,
    limits: { concurrent: 1, store },
  });
  const failing = send(handler, 'fail');
  await until(() => gated.waiting() === 1);
  const { result } = await captureConsoleError(async () => {
    gated.fail(new Error('the provider broke'));
    return failing;
  });
  assert.equal(result.status, 502, 'a model that fails is MODEL_ERROR');
  assert.equal(released.size, 1);

  const controller = new AbortController();
  const aborted = post(handler, '', { message: 'abort me' }, 'alice-token-0123456789', { signal: controller.signal });
  await until(() => gated.waiting() === 1);
  controller.abort();
  await aborted.then((response) => response.text()).catch(() => undefined);
  await until(() => released.size === 2);

  // A stream whose run fails midway ends with an error event, and releases its slot.
  const broken = await stream(handler, 'break midway');
  await until(() => gated.waiting() === 1);
  const text = await captureConsoleError(async () => {
    gated.fail(new Error('midway'));
    return broken.text();
  });
  assert.match(text.result, /event: error/);
  await until(() => released.size === 3);
  const next = send(handler, 'still served');
  await until(() => gated.waiting() === 1);
  gated.open();
  assert.equal((await next).status, 200);
  await until(balanced);
});

/** A model that reports 10 input tokens and one output token per word of the user's message. */
const counting: Model = {
  async generate(request) {
    const text = request.messages.at(-1)!.content;
    return { text, usage: { inputTokens: 10, outputTokens: text.split(' ').length } };
  },
};

test('tokens: each model turn reserves its estimate before the model runs, and settles what the model reported before the answer; a turn whose reservation would pass the limit is refused before the model runs', async () => {
  const inner = memoryLimitStore();
  const order: string[] = [];
  const store: LimitStore = {
    ...inner,
    async reserve(key, windowSec, cost, more, limit) {
      const answer = await inner.reserve!(key, windowSec, cost, more, limit);
      order.push(`reserve ${cost} + up to ${more}: ${answer.allowed ? answer.reserved : 'refused'}`);
      return answer;
    },
    async settle(key, windowSec, start, delta) {
      order.push(`settle ${delta}`);
      return inner.settle(key, windowSec, start, delta);
    },
  };
  let calls = 0;
  const agent = createAgent({ name: 't', model: { generate: (request) => (calls++, counting.generate(request)) } });
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: AUTH,
    limits: { tokens: { limit: 30, windowSec: 3600 }, store },
  });
  // The input's estimate (design §25): "three" 2, " short" 2, " words" 2, and the empty tool list "[]" 2;
  // for its answer, what the window has left of the output reserve (1,024): 22.
  const first = await send(handler, 'three short words');
  order.push('answered');
  assert.equal(first.status, 200);
  assert.match(first.headers.get('agentward-tokens')!, /^"tokens";r=17;t=\d+$/);
  assert.deepEqual(order, ['reserve 8 + up to 1024: 30', 'settle -17', 'answered'], '30 reserved, then replaced by 13');
  // A new session: its input is 3 + 2, and for its answer the 12 the window has left.
  const second = await send(handler, 'two words');
  assert.equal(second.status, 200, '13 + 5 is within 30');
  assert.deepEqual(
    order.slice(3),
    ['reserve 5 + up to 1024: 17', 'settle -5'],
    'the 17 left reserved, then replaced by 12',
  );
  assert.match(second.headers.get('agentward-tokens')!, /^"tokens";r=5;/);
  const refused = await send(handler, 'a turn that would pass it');
  assert.equal(refused.status, 429, '25 + the input passes 30');
  assert.deepEqual(await refused.json(), { error: 'Too Many Requests' });
  assert.equal(refused.headers.get('agentward-tokens-policy'), '"tokens";q=30;w=3600');
  // What the turn would have reserved (design §25): its input, a parameter of the item.
  assert.match(refused.headers.get('agentward-tokens')!, /^"tokens";r=5;t=\d+;needed=\d+$/);
  // An RFC 9651 List of one Item: the policy's name, its parameters r, t and needed, integers.
  const [item] = parseList(refused.headers.get('agentward-tokens')!) as Item[];
  assert.equal(item!.value, 'tokens');
  const needed = item!.params.get('needed') as number;
  assert.equal(typeof needed, 'number');
  assert.ok(needed > 5, `needed=${needed} is more than is left`);
  assert.equal(item!.params.get('r'), 5);
  assert.equal(refused.headers.get('retry-after'), /t=(\d+)/.exec(refused.headers.get('agentward-tokens')!)![1]);
  assert.equal(calls, 2, 'the refused turn never reached the model');
  // A read starts no turn: it is answered, saying what is left.
  const transcript = await handler(
    new Request(`${BASE}/chat/${(await first.json()).sessionId}`, {
      headers: { authorization: 'Bearer alice-token-0123456789' },
    }),
  );
  assert.equal(transcript.status, 200);
  assert.match(transcript.headers.get('agentward-tokens')!, /^"tokens";r=5;/);
  // Another principal has a budget of its own.
  assert.equal((await send(handler, 'bob here', 'bob-token-0123456789')).status, 200);
});

test('tokens: sequential small budgets behave as before the output reserve: a 250 budget with 100-token turns runs three turns, the fourth is refused', async () => {
  const hundred: Model = { generate: async () => ({ text: 'ok', usage: { inputTokens: 60, outputTokens: 40 } }) };
  const store = memoryLimitStore();
  const handler = agentHandler(createAgent({ name: 't', model: hundred }), {
    basePath: '/agent',
    auth: AUTH,
    limits: { tokens: { limit: 250, windowSec: 3600 }, store },
  });
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await send(handler, `turn ${i}`)).status);
  assert.deepEqual(statuses, [200, 200, 200, 429]);
  assert.equal((await store.hit('tokens/3600:p["","api-token","alice"]', 3600, 0, 1e9)).count, 300);
});

test('tokens: a turn without maxOutputTokens reserves outputReserve (or what is left), one with it reserves maxOutputTokens; a store without reserve keeps the reservation of input and maxOutputTokens', async () => {
  const reservations: string[] = [];
  const inner = memoryLimitStore();
  const recording: LimitStore = {
    ...inner,
    async reserve(key, windowSec, cost, more, limit) {
      const answer = await inner.reserve!(key, windowSec, cost, more, limit);
      reservations.push(`${cost}+${more}=${answer.reserved}`);
      return answer;
    },
  };
  const model: Model = { generate: async () => ({ text: 'ok', usage: { inputTokens: 1, outputTokens: 1 } }) };
  const handlerOf = (store: LimitStore, tokens: Record<string, number>, maxOutputTokens?: number) =>
    agentHandler(
      createAgent({ name: 't', model, ...(maxOutputTokens !== undefined && { settings: { maxOutputTokens } }) }),
      { basePath: '/agent', auth: AUTH, limits: { tokens: { limit: 10_000, windowSec: 3600, ...tokens }, store } },
    );
  // "hi" and "[]": an input of 3.
  assert.equal((await send(handlerOf(recording, {}), 'hi')).status, 200);
  assert.equal((await send(handlerOf(recording, { outputReserve: 100 }), 'hi', 'bob-token-0123456789')).status, 200);
  assert.equal((await send(handlerOf(recording, { outputReserve: 0 }), 'hi')).status, 200);
  assert.equal((await send(handlerOf(recording, {}, 300), 'hi', 'bob-token-0123456789')).status, 200);
  assert.deepEqual(reservations, ['3+1024=1027', '3+100=103', '3+0=3', '303+0=303']);

  // A store of the contract before reserve(): hit() with the input and maxOutputTokens.
  const hits: number[] = [];
  const { reserve: _, ...withoutReserve } = memoryLimitStore();
  const older: LimitStore = {
    ...withoutReserve,
    async hit(key, windowSec, cost, limit) {
      if (cost > 0) hits.push(cost);
      return withoutReserve.hit(key, windowSec, cost, limit);
    },
  };
  assert.equal((await send(handlerOf(older, {}), 'hi')).status, 200);
  assert.equal((await send(handlerOf(older, {}, 300), 'hi')).status, 200);
  assert.deepEqual(hits, [3, 303]);
});

test('tokens: a streamed turn is settled before its finish event; /ui and /chat streams and tools/call count too', async () => {
  const inner = memoryLimitStore();
  let holdCount: Promise<void> | undefined;
  let releaseCount!: () => void;
  const store: LimitStore = {
    ...inner,
    async settle(key, windowSec, start, delta) {
      if (holdCount !== undefined) await holdCount;
      return inner.settle(key, windowSec, start, delta);
    },
  };
  const streaming: Model = {
    ...counting,
    async *stream(request): AsyncIterable<ModelDelta> {
      const text = request.messages.at(-1)!.content;
      yield { type: 'text', text };
      yield { type: 'usage', usage: { inputTokens: 10, outputTokens: text.split(' ').length } };
    },
  };
  const handler = agentHandler(createAgent({ name: 't', model: streaming }), {
    basePath: '/agent',
    auth: AUTH,
    mcp: true,
    limits: { tokens: { limit: 60, windowSec: 3600 }, store },
  });
  holdCount = new Promise((resolve) => (releaseCount = resolve));
  const response = await stream(handler, 'two words');
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  const readUntil = async (pattern: RegExp) => {
    while (!pattern.test(text)) {
      const { done, value } = await reader.read();
      if (done) break;
      text += value;
    }
  };
  await readUntil(/event: text-delta/);
  await tick(30);
  assert.equal(/event: finish/.test(text), false, 'no finish while the turn is being settled');
  releaseCount();
  holdCount = undefined;
  await readUntil(/event: finish/);
  assert.match(text, /event: finish/);
  const spent = () =>
    inner.hit('tokens/3600:p["","api-token","alice"]', 3600, 0, Number.MAX_SAFE_INTEGER).then((answer) => answer.count);
  assert.equal(await spent(), 12);
  await (
    await post(handler, '/ui', {
      id: 'ui',
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'three more words' }] }],
      trigger: 'submit-message',
    })
  ).text();
  assert.equal(await spent(), 25);
  const call = (id: number) =>
    post(
      handler,
      '/mcp',
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ask', arguments: { message: 'ask me' } } },
      'alice-token-0123456789',
      { headers: { accept: 'application/json, text/event-stream' } },
    );
  assert.equal((await call(1)).status, 200);
  assert.equal(await spent(), 37);
  assert.equal((await call(2)).status, 200);
  assert.equal((await call(3)).status, 200);
  assert.equal(await spent(), 61);
  const refused = await call(4);
  assert.equal(refused.status, 429, 'MCP answers the same HTTP 429');
  assert.equal(refused.headers.get('agentward-tokens-policy'), '"tokens";q=60;w=3600');
});

test('tokens with an AI SDK MockLanguageModelV4 reporting usage: counted per turn, the next turn refused once the total reached the limit', async () => {
  const usage = {
    inputTokens: { total: 40, noCache: 40, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 25, text: 25, reasoning: 0 },
  };
  const finish = { unified: 'stop' as const, raw: 'stop' };
  const model = new MockLanguageModelV4({
    doGenerate: async () =>
      ({ content: [{ type: 'text', text: 'mocked' }], finishReason: finish, usage, warnings: [] }) as never,
    doStream: async () =>
      ({
        stream: convertArrayToReadableStream([
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'mocked' },
          { type: 'text-end', id: 't' },
          { type: 'finish', finishReason: finish, usage },
        ]),
      }) as never,
  });
  const handler = agentHandler(createAgent({ name: 'mock', model }), {
    basePath: '/agent',
    auth: AUTH,
    limits: { tokens: { limit: 130, windowSec: 600 } },
  });
  const first = await send(handler, 'one');
  assert.equal(first.status, 200);
  assert.match(first.headers.get('agentward-tokens')!, /^"tokens";r=65;t=\d+$/);
  assert.equal((await (await stream(handler, 'two')).text()).includes('event: finish'), true);
  const refused = await send(handler, 'three');
  assert.equal(refused.status, 429);
  assert.match(refused.headers.get('agentward-tokens')!, /^"tokens";r=0;t=\d+$/);
  assert.equal(model.doGenerateCalls.length + model.doStreamCalls.length, 2);
});

test('a limit store that fails answers 503 {"error":"Service Unavailable"}, as the session store does', async () => {
  const unavailable = () => Object.assign(new Error('database gone'), { code: 'STORE_UNAVAILABLE' });
  const down: LimitStore = {
    hit: () => Promise.reject(unavailable()),
    settle: () => Promise.reject(unavailable()),
    acquire: () => Promise.reject(unavailable()),
    release: async () => {},
  };
  for (const limits of [
    { requests: { limit: 5, windowSec: 60 } },
    { concurrent: 2 },
    { tokens: { limit: 5, windowSec: 60 } },
  ]) {
    const handler = agentHandler(createAgent({ name: 'down', model: counting }), {
      basePath: '/agent',
      auth: AUTH,
      limits: { ...limits, store: down },
    });
    const { result } = await captureConsoleError(() => send(handler, 'hi'));
    assert.equal(result.status, 503, JSON.stringify(limits));
    assert.deepEqual(await result.json(), { error: 'Service Unavailable' });
    assert.equal(result.headers.get('cache-control'), 'no-store');
  }
  const failures = agentHandler(createAgent({ name: 'down', model: counting }), {
    basePath: '/agent',
    auth: AUTH,
    limits: { failures: { limit: 5, windowSec: 60 }, store: down, clientAddress: () => '192.0.2.1' },
  });
  assert.equal((await captureConsoleError(() => send(failures, 'hi'))).result.status, 503);
});
