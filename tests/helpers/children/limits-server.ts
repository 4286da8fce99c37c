// A node server whose limits live in PostgreSQL, in a child process, for the tests of several
// server processes sharing one budget: DATABASE_URL and AGENT_PG_SCHEMA from the environment,
// AGENT_LIMITS (the limits as JSON), AGENT_MAX_OUTPUT_TOKENS (the agent's settings, optional).
// It serves the fixture agent and auth of tests/helpers/limits-fixture.ts (API tokens ALICE and
// BOB; the client address from X-Test-Address, else the socket's); by default the model answers
// `pid <pid>: <message>` reporting 100 tokens, after AGENT_MODEL_DELAY_MS (default 0). Sessions
// stay in memory. Prints `listening <url>`.
import pg from 'pg';
import { closeOnSignals, serve } from '../../../src/node.ts';
import { postgresLimitStore } from '../../../src/postgres/index.ts';
import { fixtureAddress, fixtureAgent, fixtureAuth } from '../limits-fixture.ts';

const url = process.env.DATABASE_URL;
const schema = process.env.AGENT_PG_SCHEMA;
const limits = process.env.AGENT_LIMITS;
if (!url || !schema || !limits)
  throw new Error('limits-server.ts needs DATABASE_URL, AGENT_PG_SCHEMA and AGENT_LIMITS');
const store = postgresLimitStore({ client: new pg.Pool({ connectionString: url, max: 10 }), schema });
await store.migrate();
const delay = Number(process.env.AGENT_MODEL_DELAY_MS || 0);
const maxOutputTokens = process.env.AGENT_MAX_OUTPUT_TOKENS ? Number(process.env.AGENT_MAX_OUTPUT_TOKENS) : undefined;

const server = await serve({
  agent: fixtureAgent(String(process.pid), maxOutputTokens, delay),
  auth: fixtureAuth(),
  limits: { ...JSON.parse(limits), store, clientAddress: fixtureAddress },
  port: 0,
  log: 'off',
});
closeOnSignals(server);
console.log(`listening ${server.url}`);
