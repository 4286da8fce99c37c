// A node server for the `stores` suite of bench/http.ts, in a child process:
// `node bench/store-server.ts memory|file|postgres|memory-pg-limits`, the echo model behind
// apiToken(), the store named (file: a folder in BENCH_DATA_DIR; postgres: DATABASE_URL,
// AGENT_PG_SCHEMA, a pool of AGENT_PG_POOL connections, default 20; memory-pg-limits: the memory
// store, and `limits.requests` counted by postgresLimitStore on a pool of its own, a limit never
// reached). Prints `listening <url>`; SIGTERM ends it.
import pg from 'pg';
import { createAgent, echoModel, memoryStore } from '../src/agent/index.ts';
import type { Store } from '../src/agent/types.ts';
import { apiToken } from '../src/auth/api-token.ts';
import { closeOnSignals, fileStore, serve } from '../src/node.ts';
import type { LimitsOptions } from '../src/http/index.ts';
import { postgresLimitStore, postgresStore } from '../src/postgres/index.ts';

const kind = process.argv[2];
let store: Store;
let limits: LimitsOptions | undefined;
if (kind === 'memory') {
  store = memoryStore();
} else if (kind === 'memory-pg-limits') {
  const { DATABASE_URL: url, AGENT_PG_SCHEMA: schema } = process.env;
  if (!url || !schema) throw new Error('store-server.ts memory-pg-limits needs DATABASE_URL and AGENT_PG_SCHEMA');
  const limitStore = postgresLimitStore({
    client: new pg.Pool({ connectionString: url, max: Number(process.env.AGENT_PG_POOL || 20) }),
    schema,
  });
  await limitStore.migrate();
  store = memoryStore();
  limits = { requests: { limit: Number.MAX_SAFE_INTEGER, windowSec: 60 }, store: limitStore };
} else if (kind === 'file') {
  if (!process.env.BENCH_DATA_DIR) throw new Error('store-server.ts file needs BENCH_DATA_DIR');
  store = fileStore(process.env.BENCH_DATA_DIR);
} else if (kind === 'postgres') {
  const { DATABASE_URL: url, AGENT_PG_SCHEMA: schema } = process.env;
  if (!url || !schema) throw new Error('store-server.ts postgres needs DATABASE_URL and AGENT_PG_SCHEMA');
  const postgres = postgresStore({
    client: new pg.Pool({ connectionString: url, max: Number(process.env.AGENT_PG_POOL || 20) }),
    schema,
  });
  await postgres.migrate();
  store = postgres;
} else {
  throw new Error('usage: store-server.ts memory|file|postgres|memory-pg-limits');
}
const agent = createAgent({ name: 'bench-store', model: echoModel(), store });
const server = await serve({ agent, auth: [apiToken('bench-api-token-0123456789')], port: 0, log: 'off', limits });
closeOnSignals(server);
console.log(`listening ${server.url}`);
