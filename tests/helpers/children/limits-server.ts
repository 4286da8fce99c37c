// A node server whose limits live in PostgreSQL, in a child process, for the tests of several
// server processes sharing one budget: DATABASE_URL and AGENT_PG_SCHEMA from the environment,
// AGENT_LIMITS (the limits as JSON), API tokens `alice-token` and `bob-token` (principals
// alice and bob). The model reports 100 tokens of usage per turn and answers after
// AGENT_MODEL_DELAY_MS (default 0). Sessions stay in memory. Prints `listening <url>`.
import pg from 'pg';
import { createAgent } from '../../../src/agent/index.ts';
import { apiToken } from '../../../src/auth/api-token.ts';
import { closeOnSignals, serve } from '../../../src/node.ts';
import { postgresLimitStore } from '../../../src/postgres/index.ts';

const url = process.env.DATABASE_URL;
const schema = process.env.AGENT_PG_SCHEMA;
const limits = process.env.AGENT_LIMITS;
if (!url || !schema || !limits)
  throw new Error('limits-server-child.ts needs DATABASE_URL, AGENT_PG_SCHEMA and AGENT_LIMITS');
const store = postgresLimitStore({ client: new pg.Pool({ connectionString: url, max: 10 }), schema });
await store.migrate();
const delay = Number(process.env.AGENT_MODEL_DELAY_MS || 0);

const agent = createAgent({
  name: 'limits-fixture',
  model: {
    async generate(request) {
      await new Promise((resolve) => setTimeout(resolve, delay));
      return {
        text: `pid ${process.pid}: ${request.messages.at(-1)?.content}`,
        usage: { inputTokens: 60, outputTokens: 40 },
      };
    },
  },
});

const server = await serve({
  agent,
  auth: [apiToken('alice-token-0123456789', { id: 'alice' }), apiToken('bob-token-0123456789', { id: 'bob' })],
  limits: { ...JSON.parse(limits), store },
  port: 0,
  log: 'off',
});
closeOnSignals(server);
console.log(`listening ${server.url}`);
