/**
 * The limit store contract (tests/helpers/limit-store-contract.ts) and the scenarios of "limits
 * count what was spent" (tests/helpers/limits-spent.ts) against real Durable Objects:
 * `durableObjectLimitStore` over the `LIMITS` namespace of `LimitObject`s, inside workerd, the
 * scenarios behind two `agentHandler`s sharing it. tests/cloudflare/limits.node.test.ts bundles it
 * with `node:test` mapped to ./node-test-shim.ts; a request runs the declared tests and answers
 * their outcomes. And the objects' alarm (design §25): the windows of addresses that each got one
 * 401 are removed once their window ends (`INSPECTED`, a `LimitObject` that also answers what it
 * stores).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  durableObjectLimitStore,
  type LimitNamespaceLike,
} from '../../../src/cloudflare/durable-object-limit-store.ts';
import { LimitObject } from '../../../src/cloudflare/objects.ts';
import { agentHandler } from '../../../src/http/index.ts';
import type { LimitStore } from '../../../src/http/limit-store.ts';
import { limitStoreContract } from '../limit-store-contract.ts';
import { fixtureAddress, fixtureAgent, fixtureAuth, WRONG } from '../limits-fixture.ts';
import { limitsSpentScenarios } from '../limits-spent.ts';
import { runDeclaredTests } from './node-test-shim.ts';

let namespace: LimitNamespaceLike | undefined;
let inspected: LimitNamespaceLike | undefined;

/** A `LimitObject` that also answers the names it stores, at `/stored`. */
export class InspectedLimitObject extends LimitObject {
  readonly #storage: { list(): Promise<Map<string, unknown>> };
  constructor(
    state: ConstructorParameters<typeof LimitObject>[0] & { storage: { list(): Promise<Map<string, unknown>> } },
    env: unknown,
  ) {
    super(state, env);
    this.#storage = state.storage;
  }
  override async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname === '/stored') return Response.json([...(await this.#storage.list()).keys()]);
    return super.fetch(request);
  }
}
limitStoreContract('durableObjectLimitStore in workerd', async () => ({
  store: durableObjectLimitStore(namespace!),
  expiresLeases: true,
}));

/** The store with every key prefixed: the scenarios share one namespace here, and each must start from nothing. */
function prefixed(store: LimitStore, prefix: string): LimitStore {
  return {
    hit: (key, windowSec, cost, limit) => store.hit(prefix + key, windowSec, cost, limit),
    reserve: (key, windowSec, cost, more, limit) => store.reserve!(prefix + key, windowSec, cost, more, limit),
    settle: (key, windowSec, start, delta) => store.settle(prefix + key, windowSec, start, delta),
    acquire: (key, lease, limit, ttlSec) => store.acquire(prefix + key, lease, limit, ttlSec),
    release: (key, lease) => store.release(prefix + key, lease),
  };
}

let scenario = 0;
limitsSpentScenarios('durableObjectLimitStore in workerd, two handlers', async ({ limits, maxOutputTokens }) => {
  const store = prefixed(durableObjectLimitStore(namespace!), `scenario ${++scenario} `);
  const handlers = [0, 1].map((n) =>
    agentHandler(fixtureAgent(`handler ${n}`, maxOutputTokens), {
      basePath: '/agent',
      auth: fixtureAuth(),
      limits: { ...limits, store, clientAddress: (request) => fixtureAddress(request) ?? '192.0.2.1' },
    }),
  );
  return {
    fetch: (n: number, path: string, init?: RequestInit) =>
      handlers[n % 2]!(new Request(`https://agent.example/agent${path}`, init)),
    store,
    close: async () => {},
  };
});

test('durableObjectLimitStore in workerd: 20 addresses that each got one 401 leave no stored window once their window ends (the alarm)', async () => {
  const handler = agentHandler(fixtureAgent('alarm'), {
    basePath: '/agent',
    auth: fixtureAuth(),
    limits: {
      failures: { limit: 3, windowSec: 2 },
      store: durableObjectLimitStore(inspected!),
      clientAddress: (request) => fixtureAddress(request),
    },
  });
  const addresses = Array.from({ length: 20 }, (_, n) => `198.51.100.${100 + n}`);
  for (const address of addresses) {
    const answer = await handler(
      new Request('https://agent.example/agent', {
        method: 'POST',
        headers: { authorization: `Bearer ${WRONG}`, 'x-test-address': address, 'content-type': 'application/json' },
        body: '{"message":"guess"}',
      }),
    );
    assert.equal(answer.status, 401);
  }
  const stored = (address: string) =>
    inspected!
      .get(inspected!.idFromName(JSON.stringify(`failures/2:a${address}`)))
      .fetch(new Request('https://limits.agentward/stored'))
      .then((answer) => answer.json() as Promise<string[]>);
  for (const address of addresses) assert.deepEqual(await stored(address), [`window:2:failures/2:a${address}`]);
  // The windows end within 2 s; each object's alarm rings then and removes its window.
  let left = addresses.length;
  for (let i = 0; i < 50 && left > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    left = (await Promise.all(addresses.map(stored))).filter((names) => names.length > 0).length;
  }
  assert.equal(left, 0, 'every window was removed');
});

export { LimitObject };

export default {
  async fetch(
    _request: Request,
    env: { LIMITS: LimitNamespaceLike; INSPECTED: LimitNamespaceLike },
  ): Promise<Response> {
    namespace = env.LIMITS;
    inspected = env.INSPECTED;
    return Response.json(await runDeclaredTests());
  },
};
