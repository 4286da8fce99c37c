// A node server whose jwt() entry takes DPoP-bound tokens, in a child process: the token key's
// public JWK in DPOP_TOKEN_JWK, the replay store on PostgreSQL (DATABASE_URL, AGENT_PG_SCHEMA)
// when DPOP_REPLAY=postgres, else the default one in this process's memory; DPOP_MAX_AGE_SEC and
// CLOCK_TOLERANCE_SEC when set; DPoP server nonces with DPOP_NONCE=1. The clock is the real one. Prints `listening <url>`; SIGTERM ends it.
import pg from 'pg';
import { createAgent, echoModel, memoryStore } from '../../../src/agent/index.ts';
import { jwt } from '../../../src/auth/index.ts';
import { closeOnSignals, serve } from '../../../src/node.ts';
import { postgresReplayStore } from '../../../src/postgres/index.ts';

const jwk = JSON.parse(process.env.DPOP_TOKEN_JWK ?? 'null') as JsonWebKey | null;
if (jwk === null) throw new Error('dpop-server-child.ts needs DPOP_TOKEN_JWK');
let dpopReplay;
if (process.env.DPOP_REPLAY === 'postgres') {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
  dpopReplay = postgresReplayStore({ client: pool, schema: process.env.AGENT_PG_SCHEMA });
  await dpopReplay.migrate();
}
const server = await serve({
  agent: createAgent({ name: 'dpop', model: echoModel(), store: memoryStore() }),
  auth: [
    jwt({
      publicKey: jwk,
      issuer: 'https://issuer.example.com',
      audience: 'agent-api',
      dpop: process.env.DPOP_NONCE ? { required: true, nonce: true } : 'required',
      ...(dpopReplay && { dpopReplay }),
      ...(process.env.DPOP_MAX_AGE_SEC && { dpopMaxAgeSec: Number(process.env.DPOP_MAX_AGE_SEC) }),
      ...(process.env.CLOCK_TOLERANCE_SEC && { clockToleranceSec: Number(process.env.CLOCK_TOLERANCE_SEC) }),
    }),
  ],
  port: 0,
  log: 'off',
});
closeOnSignals(server);
console.log(`listening ${server.url}`);
