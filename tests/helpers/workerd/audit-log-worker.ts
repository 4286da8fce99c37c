/**
 * The audit log contract (tests/helpers/audit-log-contract.ts) against real Durable Objects:
 * `durableObjectAuditLog` over the `AUDIT` namespace, inside workerd, each test's log an object of
 * its own name. The objects are `TamperableAuditLog`: an `AuditLogObjectCore` that also answers
 * `/rewrite` by replacing the records in its storage, as whoever can write it could, for the
 * tampering tests. tests/cloudflare/durable-object-audit-log-workerd.node.test.ts bundles it with
 * `node:test` mapped to ./node-test-shim.ts; a request runs the declared tests and answers their
 * outcomes.
 */
import type { ChainedRecord } from '../../../src/agent/index.ts';
import { AuditLogObjectCore, durableObjectAuditLog } from '../../../src/cloudflare/durable-object-audit-log.ts';
import type { DurableObjectNamespaceLike } from '../../../src/cloudflare/durable-object-sessions.ts';
import { auditLogContract, readAll } from '../audit-log-contract.ts';
import { runDeclaredTests } from './node-test-shim.ts';

interface Storage {
  list(options: { prefix: string }): Promise<Map<string, unknown>>;
  delete(keys: string[]): Promise<number>;
  put(entries: Record<string, unknown>): Promise<void>;
}

export class TamperableAuditLog extends AuditLogObjectCore {
  readonly #storage: Storage;
  constructor(state: { storage: Storage }) {
    super(state as never);
    this.#storage = state.storage;
  }
  override async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== '/rewrite') return super.fetch(request);
    const records = (await request.json()) as ChainedRecord[];
    await this.#storage.delete([...(await this.#storage.list({ prefix: 'record:' })).keys()]);
    await this.#storage.put(
      Object.fromEntries(records.map((r, i) => [`record:${String(i + 1).padStart(16, '0')}`, JSON.stringify(r)])),
    );
    return new Response('rewritten');
  }
}

let namespace: DurableObjectNamespaceLike | undefined;
/** Names unique to this run: the objects' storage persists between tests of one worker. */
const run = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
let unique = 0;

auditLogContract('durableObjectAuditLog in workerd', async ({ key }) => {
  const name = `audit ${run} ${++unique}`;
  const log = durableObjectAuditLog(namespace!, { name, ...(key === undefined ? {} : { key }) });
  return {
    log,
    async rewrite(change) {
      const records = change(await readAll(log));
      const stub = namespace!.get(namespace!.idFromName(name));
      await stub.fetch(
        new Request('https://audit.agentward/rewrite', { method: 'POST', body: JSON.stringify(records) }),
      );
    },
  };
});

export default {
  async fetch(_request: Request, env: { AUDIT: DurableObjectNamespaceLike }): Promise<Response> {
    namespace = env.AUDIT;
    return Response.json(await runDeclaredTests());
  },
};
