/**
 * The limit store contract (tests/helpers/limit-store-contract.ts) against real Durable Objects:
 * `durableObjectLimitStore` over the `LIMITS` namespace of `LimitObject`s, inside workerd.
 * tests/cloudflare/limits.node.test.ts bundles it with `node:test` mapped to ./node-test-shim.ts; a
 * request runs the declared tests and answers their outcomes.
 */
import {
  durableObjectLimitStore,
  LimitObject,
  type LimitNamespaceLike,
} from '../../../src/cloudflare/durable-object-limit-store.ts';
import { limitStoreContract } from '../limit-store-contract.ts';
import { runDeclaredTests } from './node-test-shim.ts';

let namespace: LimitNamespaceLike | undefined;
limitStoreContract('durableObjectLimitStore in workerd', async () => ({
  store: durableObjectLimitStore(namespace!),
  expiresLeases: true,
}));

export { LimitObject };

export default {
  async fetch(_request: Request, env: { LIMITS: LimitNamespaceLike }): Promise<Response> {
    namespace = env.LIMITS;
    return Response.json(await runDeclaredTests());
  },
};
