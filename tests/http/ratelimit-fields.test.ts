// The RateLimit fields as a Structured Fields parser and draft-ietf-httpapi-ratelimit-headers
// (-10 and later) read them (design §29): every RateLimit-Policy and RateLimit value the
// handler writes, accepted and refused, of every policy, parses as a List of Items whose
// parameters the draft defines; `concurrent` names its unit; model tokens, which the draft has
// no unit for, are in fields of their own. On Node, Bun and Deno.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiToken } from '../../src/auth/index.ts';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import type { Model } from '../../src/agent/types.ts';
import { agentHandler } from '../../src/http/index.ts';
import { type InnerList, type Item, parseItem, parseList, Token } from '../helpers/structured-fields.ts';

const TOKEN = 'tok-0123456789abcdef';
const BASE = 'https://agent.example/agent';
type Handler = (request: Request) => Promise<Response>;

const send = (handler: Handler, token: string | undefined = TOKEN, address = '192.0.2.1') =>
  handler(
    new Request(BASE, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-test-address': address,
        ...(token !== undefined && { authorization: `Bearer ${token}` }),
      },
      body: JSON.stringify({ message: 'hello' }),
    }),
  );
const handlerWith = (limits: Record<string, unknown>, model: Model = echoModel()) =>
  agentHandler(createAgent({ name: 'fields', model }), {
    basePath: '/agent',
    auth: apiToken(TOKEN),
    limits: { ...limits, clientAddress: (request: Request) => request.headers.get('x-test-address') ?? undefined },
  });

/** The answers of every policy, accepted and refused: each is checked below. */
async function answers(): Promise<[string, Response][]> {
  const out: [string, Response][] = [];
  const requests = handlerWith({ requests: { limit: 1, windowSec: 60 } });
  out.push(['requests accepted', await send(requests)], ['requests refused', await send(requests)]);
  const both = handlerWith({ requests: { limit: 5, windowSec: 60 }, tokens: { limit: 100_000, windowSec: 3600 } });
  out.push(['requests and tokens accepted', await send(both)]);
  const tokens = handlerWith({ tokens: { limit: 1, windowSec: 3600 } });
  out.push(['tokens accepted', await send(tokens)], ['tokens refused', await send(tokens)]);
  const failures = handlerWith({ failures: { limit: 1, windowSec: 60 } });
  out.push(['failures: a 401', await send(failures, 'wrong-0123456789abcdef')]);
  out.push(['failures refused', await send(failures, 'wrong-0123456789abcdef')]);
  let release = () => {};
  let started = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const running = new Promise<void>((resolve) => (started = resolve));
  const echo = echoModel();
  const slow: Model = { generate: async (request) => (started(), await gate, echo.generate(request)) };
  const concurrent = handlerWith({ concurrent: 1 }, slow);
  const first = send(concurrent);
  await running;
  out.push(['concurrent refused', await send(concurrent)]);
  release();
  out.push(['concurrent accepted', await first]);
  return out;
}

/** The draft's registered quota units (-10 §3.1.2, the Quota Units registry). */
const UNITS = new Set(['requests', 'content-bytes', 'concurrent-requests']);

const items = (field: string, what: string): Item[] =>
  parseList(field).map((member: Item | InnerList) => {
    assert.ok(!('items' in member), `${what}: a member is an inner list`);
    return member as Item;
  });
const nameOf = (item: Item) => (item.value instanceof Token ? item.value.name : item.value);
const isInteger = (value: unknown, min: number) => typeof value === 'number' && Number.isInteger(value) && value >= min;

test('every RateLimit-Policy and RateLimit value parses as the draft says: items named by a string, q/qu/w and r/t, each limit naming a policy', async () => {
  const seen = new Set<string>();
  for (const [what, response] of await answers()) {
    await response.body?.cancel();
    const policy = response.headers.get('ratelimit-policy');
    const limit = response.headers.get('ratelimit');
    assert.equal(policy === null, limit === null, `${what}: the two fields come together`);
    if (policy === null || limit === null) continue;
    const policies = new Map<unknown, Item>();
    for (const item of items(policy, what)) {
      assert.ok(typeof item.value === 'string' || item.value instanceof Token, `${what}: a policy is named`);
      for (const key of item.params.keys()) assert.ok(['q', 'qu', 'w', 'pk'].includes(key), `${what}: ${key}`);
      assert.ok(isInteger(item.params.get('q'), 0), `${what}: q is a non-negative integer`);
      if (item.params.has('w')) assert.ok(isInteger(item.params.get('w'), 1), `${what}: w`);
      const unit = item.params.get('qu') ?? 'requests';
      assert.ok(typeof unit === 'string' && UNITS.has(unit), `${what}: qu is a registered unit`);
      policies.set(nameOf(item), item);
      seen.add(`${String(nameOf(item))} ${unit}`);
    }
    for (const item of items(limit, what)) {
      for (const key of item.params.keys()) assert.ok(['r', 't', 'pk'].includes(key), `${what}: ${key}`);
      assert.ok(isInteger(item.params.get('r'), 0), `${what}: r is a non-negative integer`);
      if (item.params.has('t')) assert.ok(isInteger(item.params.get('t'), 0), `${what}: t`);
      assert.ok(policies.has(nameOf(item)), `${what}: ${String(nameOf(item))} names a policy of RateLimit-Policy`);
    }
  }
  assert.deepEqual(
    [...seen].sort(),
    ['concurrent concurrent-requests', 'failures requests', 'requests requests'],
    'every policy but tokens was seen, each in its unit',
  );
});

test('concurrent carries qu="concurrent-requests"; model tokens never appear in the RateLimit fields, only in Agentward-Tokens(-Policy)', async () => {
  const all = await answers();
  for (const [what, response] of all) {
    for (const name of ['ratelimit-policy', 'ratelimit'])
      assert.doesNotMatch(response.headers.get(name) ?? '', /tokens/, `${what}: ${name}`);
  }
  const refused = all.find(([what]) => what === 'concurrent refused')![1];
  assert.equal(refused.headers.get('ratelimit-policy'), '"concurrent";q=1;qu="concurrent-requests"');
  assert.equal(refused.headers.get('ratelimit'), '"concurrent";r=0');
  for (const what of ['tokens accepted', 'tokens refused', 'requests and tokens accepted']) {
    const response = all.find(([name]) => name === what)![1];
    const policy = parseItem(response.headers.get('agentward-tokens-policy')!);
    const limit = parseItem(response.headers.get('agentward-tokens')!);
    assert.equal(policy.value, 'tokens', what);
    assert.ok(isInteger(policy.params.get('q'), 1) && isInteger(policy.params.get('w'), 1), what);
    assert.equal(limit.value, 'tokens', what);
    assert.ok(isInteger(limit.params.get('r'), 0) && isInteger(limit.params.get('t'), 1), what);
  }
  const tokensRefused = all.find(([what]) => what === 'tokens refused')![1];
  assert.equal(tokensRefused.status, 429);
  assert.equal(tokensRefused.headers.get('agentward-tokens-policy'), '"tokens";q=1;w=3600');
  assert.match(tokensRefused.headers.get('retry-after')!, /^\d+$/);
  const both = all.find(([what]) => what === 'requests and tokens accepted')![1];
  assert.equal(both.headers.get('ratelimit-policy'), '"requests";q=5;w=60');
});

test('the Structured Fields parser of the tests refuses what RFC 9651 refuses', () => {
  assert.deepEqual(
    parseList('"a";q=1;w=2, b;qu="x" , (1 2);p').map((member) => ('items' in member ? 'inner' : nameOf(member))),
    ['a', 'b', 'inner'],
  );
  assert.equal(parseItem('?1').value, true);
  assert.equal(parseItem('-12.5;x').params.get('x'), true);
  for (const bad of ['"a";q=1,', '"a" "b"', '"a";Q=1', '"a";q=1.', '"a\\n"', ',', '"a";q=1234567890123456', 'a;q=ü']) {
    assert.throws(() => parseList(bad), SyntaxError, bad);
  }
});
