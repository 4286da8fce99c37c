// The PostgreSQL audit log's appends per second (design §34): one and two writer processes
// (tests/helpers/children/audit-writer.ts, each its own pg pool, AUDIT_CONCURRENCY appends in
// flight) appending into one chain, on DATABASE_URL when set, else a throwaway cluster with fsync
// on (tests/helpers/postgres.ts). `node bench/audit-postgres.ts [--count <n per writer>]
// [--concurrency <n>]`. Every run ends by verifying the chain it wrote.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { verifyAuditLog } from '../src/agent/index.ts';
import { postgresAuditLog } from '../src/postgres/index.ts';
import { startDatabase, type TestDatabase } from '../tests/helpers/postgres.ts';

const WRITER = fileURLToPath(new URL('../tests/helpers/children/audit-writer.ts', import.meta.url));
const KEY = 'bench-audit-key-0123456789abcdefghijklmnopqrstuvwxyz';
const flag = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const count = flag('--count', 2000);
const concurrency = flag('--concurrency', 4);

function writer(env: Record<string, string>): Promise<{ child: ChildProcessWithoutNullStreams; done: Promise<void> }> {
  const child = spawn(process.execPath, [WRITER], { env: { ...process.env, ...env } });
  let out = '';
  child.stderr.pipe(process.stderr);
  return new Promise((resolve, reject) => {
    const done = new Promise<void>((finished, failed) =>
      child.once('exit', (code) => (code === 0 ? finished() : failed(new Error(`writer exited ${code}: ${out}`)))),
    );
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk;
      if (out.includes('ready')) resolve({ child, done });
    });
    setTimeout(() => reject(new Error('writer not ready within 20 s')), 20_000).unref();
  });
}

async function measure(db: TestDatabase, writers: number): Promise<number> {
  const schema = db.schema();
  const log = postgresAuditLog({ client: db.pool(), schema, key: KEY });
  await log.migrate();
  const env = {
    DATABASE_URL: db.url,
    AGENT_PG_SCHEMA: schema,
    AUDIT_KEY: KEY,
    AUDIT_COUNT: String(count),
    AUDIT_CONCURRENCY: String(concurrency),
  };
  const started = await Promise.all(
    Array.from({ length: writers }, (_, i) => writer({ ...env, AUDIT_WRITER: `w${i}` })),
  );
  const t0 = performance.now();
  for (const { child } of started) child.stdin.write('go\n');
  await Promise.all(started.map(({ done }) => done));
  const seconds = (performance.now() - t0) / 1000;
  const result = await verifyAuditLog(log.read(), { key: KEY });
  if (!result.ok || result.records !== writers * count)
    throw new Error(`the chain does not hold: ${JSON.stringify(result)}`);
  return (writers * count) / seconds;
}

const db = await startDatabase({ durable: true });
try {
  console.log(
    `postgresAuditLog, HMAC key, ${count} appends per writer, ${concurrency} in flight per writer, fsync on:`,
  );
  for (const writers of [1, 2, 1, 2])
    console.log(
      `  ${writers} writer${writers > 1 ? 's' : ''}: ${(await measure(db, writers)).toFixed(0)} appends/s (chain verified)`,
    );
} finally {
  await db.stop();
}
