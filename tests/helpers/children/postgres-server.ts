// A node server on the PostgreSQL store in a child process, for the tests and the benchmark of
// several server processes on one database: DATABASE_URL and AGENT_PG_SCHEMA from the
// environment (AGENT_PG_POOL: the pool size, default 10), API tokens `alice-token` and
// `bob-token` (principals alice and bob), a dynamic model that prefixes replies with the run's
// principal id, and a `refund` tool that needs approval. With AGENT_AUDIT=1 the server keeps its
// audit records in the database's log (`postgresAuditLog` on a pool of its own, one chain for
// every process on the schema, design §34). Prints `listening <url>`.
import pg from 'pg';
import { createAgent, echoModel } from '../../../src/agent/index.ts';
import { apiToken } from '../../../src/auth/api-token.ts';
import { closeOnSignals, serve } from '../../../src/node.ts';
import { postgresAuditLog, postgresStore } from '../../../src/postgres/index.ts';

const url = process.env.DATABASE_URL;
const schema = process.env.AGENT_PG_SCHEMA;
if (!url || !schema) throw new Error('postgres-server-child.ts needs DATABASE_URL and AGENT_PG_SCHEMA');
const pool = new pg.Pool({ connectionString: url, max: Number(process.env.AGENT_PG_POOL || 10) });
const store = postgresStore({ client: pool, schema });
await store.migrate();
const echo = echoModel();
// The log's own pool: a store's turn holds its connection while the run's events are appended.
const auditLog =
  process.env.AGENT_AUDIT === '1'
    ? postgresAuditLog({ client: new pg.Pool({ connectionString: url, max: 4 }), schema })
    : undefined;

const agent = createAgent({
  name: 'pg-fixture',
  store,
  model: ({ principal }) => ({
    async generate(request) {
      const turn = await echo.generate(request);
      return turn.text ? { ...turn, text: `[${principal?.id ?? 'nobody'}] ${turn.text}` } : turn;
    },
  }),
  tools: [
    {
      name: 'refund',
      description: 'Refunds an amount',
      parameters: { type: 'object', properties: { amount: { type: 'number' } } },
      needsApproval: true,
      execute: (args: { amount: number }) => ({ refunded: args.amount, pid: process.pid }),
    },
  ],
});

const server = await serve({
  agent,
  auth: [apiToken('alice-token-0123456789', { id: 'alice' }), apiToken('bob-token-0123456789', { id: 'bob' })],
  port: 0,
  log: 'off',
  ...(auditLog !== undefined && { audit: { log: auditLog } }),
});
closeOnSignals(server);
console.log(`listening ${server.url}`);
