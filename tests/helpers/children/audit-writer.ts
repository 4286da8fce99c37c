// A process appending to one PostgreSQL audit log, for the test of several writers on one chain
// (tests/postgres/audit-log.node.test.ts) and its benchmark (bench/audit-postgres.ts): its own
// pg pool on DATABASE_URL, schema AGENT_PG_SCHEMA, key AUDIT_KEY (optional). It prints `ready`,
// waits for a line `go` on stdin (so the writers start together), appends AUDIT_COUNT records,
// AUDIT_CONCURRENCY at a time, each naming AUDIT_WRITER and its number, then prints
// `done <count> <milliseconds>` and exits.
import { createInterface } from 'node:readline';
import pg from 'pg';
import { postgresAuditLog } from '../../../src/postgres/index.ts';

const { DATABASE_URL, AGENT_PG_SCHEMA, AUDIT_KEY, AUDIT_WRITER = String(process.pid) } = process.env;
const count = Number(process.env.AUDIT_COUNT || 100);
const concurrency = Number(process.env.AUDIT_CONCURRENCY || 4);
if (!DATABASE_URL || !AGENT_PG_SCHEMA) throw new Error('audit-writer.ts needs DATABASE_URL and AGENT_PG_SCHEMA');

const pool = new pg.Pool({ connectionString: DATABASE_URL, max: concurrency });
const log = postgresAuditLog({ client: pool, schema: AGENT_PG_SCHEMA, ...(AUDIT_KEY ? { key: AUDIT_KEY } : {}) });
console.log('ready');
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line.trim() === 'go') break;
lines.close();

const started = performance.now();
let next = 0;
async function writer() {
  while (next < count) {
    const n = next++;
    await log.append({
      time: new Date().toISOString(),
      writer: AUDIT_WRITER,
      n,
      operation: 'send',
      outcome: 'allowed',
    });
  }
}
await Promise.all(Array.from({ length: concurrency }, writer));
const ms = performance.now() - started;
console.log(`done ${count} ${ms.toFixed(1)}`);
await pool.end();
