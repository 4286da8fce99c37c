// limits.tenant (docs/tenants.md): budgets per tenant beside the per-principal ones, on the memory
// store; tests/helpers/limits-spent.ts runs the requests and tokens scenarios on every limit store.
// Here: the option's checks, "tenant-concurrent", and that a refusal by one budget gives back what
// the other counted for the refused request or turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent } from '../../src/agent/index.ts';
import { AuthConfigError } from '../../src/auth/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { memoryLimitStore, type LimitStore } from '../../src/http/limit-store.ts';
import { CAROL, DAVE, fixtureAgent, fixtureAuth } from '../helpers/limits-fixture.ts';

const ANY = Number.MAX_SAFE_INTEGER;
const handlerWith = (
  limits: Record<string, unknown>,
  store: LimitStore = memoryLimitStore(),
  maxOutputTokens?: number,
) =>
  agentHandler(fixtureAgent('tenant', maxOutputTokens), {
    basePath: '/agent',
    auth: fixtureAuth(),
    limits: { ...limits, store },
  });

const post = (token: string, message: string, path = '', headers: Record<string, string> = {}) =>
  new Request(`https://agent.example/agent${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify({ message }),
  });

/** The count of a window in `store`, read without creating it. */
const countOf = async (store: LimitStore, key: string) => (await store.hit(key, 3600, 0, ANY)).count;

test('limits.tenant is checked at creation: closed, one policy at least, each number whole', () => {
  const agent = createAgent({ name: 'checked', model: { generate: async () => ({ text: 'ok' }) } });
  const make = (limits: unknown) => () => agentHandler(agent, { auth: fixtureAuth(), limits: limits as never });
  for (const [limits, message] of [
    [{ tenant: {} }, /limits\.tenant needs one of requests, concurrent, tokens/],
    [{ tenant: 5 }, /limits\.tenant must be/],
    [{ tenant: { request: { limit: 1, windowSec: 60 } } }, /limits\.tenant: unknown option "request"/],
    [
      { tenant: { requests: { limit: 0, windowSec: 60 } } },
      /limits\.tenant\.requests\.limit must be a positive integer/,
    ],
    [{ tenant: { tokens: { limit: 10, windowSec: 0 } } }, /limits\.tenant\.tokens\.windowSec/],
    [{ tenant: { concurrent: 1.5 } }, /limits\.tenant\.concurrent must be a positive integer/],
    [{ tenant: { tokens: { limit: 10, windowSec: 60, outputReserve: -1 } } }, /limits\.tenant\.tokens\.outputReserve/],
  ] as const)
    assert.throws(make(limits), (error: unknown) => error instanceof AuthConfigError && message.test(error.message));
  assert.equal(typeof make({ tenant: { concurrent: 2 } })(), 'function', 'limits.tenant alone is enough');
});

test('limits.tenant.concurrent: requests in flight of a tenant\'s callers together; past it 429 "tenant-concurrent"; freed when the answer ends', async () => {
  const handler = handlerWith({ concurrent: 1, tenant: { concurrent: 1 } });
  // "slow" answers after 200 ms: carol's request is in flight while dave's arrives.
  const first = handler(post(CAROL, 'slow'));
  await new Promise((resolve) => setTimeout(resolve, 50));
  const second = await handler(post(DAVE, 'slow'));
  assert.equal(second.status, 429);
  assert.equal(second.headers.get('ratelimit-policy'), '"tenant-concurrent";q=1;qu="concurrent-requests"');
  assert.equal(second.headers.get('ratelimit'), '"tenant-concurrent";r=0');
  assert.equal((await first).status, 200);
  // Dave's own slot (concurrent: 1) went back when the tenant's refused him, or this would be 429 "concurrent".
  assert.equal((await handler(post(DAVE, 'slow'))).status, 200, 'the slots are free once the answer ended');
});

test("a request refused by the tenant's window is given back to the principal's; a turn refused by the tenant's tokens gives back its principal reservation", async () => {
  const store = memoryLimitStore();
  const handler = handlerWith(
    { requests: { limit: 10, windowSec: 3600 }, tenant: { requests: { limit: 1, windowSec: 3600 } } },
    store,
  );
  assert.equal((await handler(post(CAROL, 'one'))).status, 200);
  assert.equal((await handler(post(DAVE, 'two'))).status, 429);
  const dave = 'requests/3600:p["org_acme","https://fixture.example/","jwt","dave"]';
  const carol = 'requests/3600:p["org_acme","https://fixture.example/","jwt","carol"]';
  assert.equal(await countOf(store, carol), 1);
  assert.equal(await countOf(store, dave), 0, "the refused request is not in dave's own window");

  const tokensStore = memoryLimitStore();
  const tokens = handlerWith(
    { tokens: { limit: 100_000, windowSec: 3600 }, tenant: { tokens: { limit: 3_000, windowSec: 3600 } } },
    tokensStore,
    1_000,
  );
  // "write-2000" reports 10 + 2,000 tokens. Dave's turn finds acme's window with room (2,010 of 3,000),
  // reserves its estimate and maxOutputTokens (1,000) in his own window, then is refused by acme's.
  assert.equal((await tokens(post(CAROL, 'write-2000'))).status, 200);
  const refused = await tokens(post(DAVE, 'write-2000'));
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('agentward-tokens-policy'), '"tenant-tokens";q=3000;w=3600');
  assert.match(refused.headers.get('agentward-tokens') ?? '', /^"tenant-tokens";r=990;t=\d+;needed=10\d\d$/);
  const daveTokens = 'tokens/3600:p["org_acme","https://fixture.example/","jwt","dave"]';
  assert.equal(await countOf(tokensStore, daveTokens), 0, 'dave reserved nothing that stays');
  assert.equal(await countOf(tokensStore, 'tenant-tokens/3600:t"org_acme"'), 2_010);
});
