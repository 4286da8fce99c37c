/**
 * The limit store contract (tests/helpers/limit-store-contract.ts) and the scenarios of "limits
 * count what was spent" (tests/helpers/limits-spent.ts) against real Durable Objects:
 * `durableObjectLimitStore` over the `LIMITS` namespace of `LimitObject`s, inside workerd, the
 * scenarios behind two `agentHandler`s sharing it. tests/cloudflare/limits.node.test.ts bundles it
 * with `node:test` mapped to ./node-test-shim.ts; a request runs the declared tests and answers
 * their outcomes.
 */
import {
  durableObjectLimitStore,
  type LimitNamespaceLike,
} from '../../../src/cloudflare/durable-object-limit-store.ts';
import { LimitObject } from '../../../src/cloudflare/objects.ts';
import { agentHandler } from '../../../src/http/index.ts';
import type { LimitStore } from '../../../src/http/limit-store.ts';
import { limitStoreContract } from '../limit-store-contract.ts';
import { fixtureAddress, fixtureAgent, fixtureAuth } from '../limits-fixture.ts';
import { limitsSpentScenarios } from '../limits-spent.ts';
import { runDeclaredTests } from './node-test-shim.ts';

let namespace: LimitNamespaceLike | undefined;
limitStoreContract('durableObjectLimitStore in workerd', async () => ({
  store: durableObjectLimitStore(namespace!),
  expiresLeases: true,
}));

/** The store with every key prefixed: the scenarios share one namespace here, and each must start from nothing. */
function prefixed(store: LimitStore, prefix: string): LimitStore {
  return {
    hit: (key, windowSec, cost, limit) => store.hit(prefix + key, windowSec, cost, limit),
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

export { LimitObject };

export default {
  async fetch(_request: Request, env: { LIMITS: LimitNamespaceLike }): Promise<Response> {
    namespace = env.LIMITS;
    return Response.json(await runDeclaredTests());
  },
};
