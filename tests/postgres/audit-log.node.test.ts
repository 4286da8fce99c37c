// postgresAuditLog against a real PostgreSQL server (tests/helpers/postgres.ts), design §34: the
// audit log contract, with each kind of tampering done to the table itself; its options and
// migrate() (its own, and postgresStore's); a log not migrated yet; and two Node processes, each
// with its own pool (tests/helpers/children/audit-writer.ts), appending into one chain at once:
// no fork, no gap, every record once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ChainedRecord } from '../../src/agent/index.ts';
import { verifyAuditLog } from '../../src/index.ts';
import { postgresAuditLog, postgresStore, StoreError } from '../../src/postgres/index.ts';
import { auditLogContract, KEY, readAll, record } from '../helpers/audit-log-contract.ts';
import { startDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { lineMatching } from '../helpers/http-client.ts';

const writerChild = fileURLToPath(new URL('../helpers/children/audit-writer.ts', import.meta.url));
const serverChild = fileURLToPath(new URL('../helpers/children/postgres-server.ts', import.meta.url));
let db: TestDatabase;
const children: ChildProcessWithoutNullStreams[] = [];
before(async () => {
  db = await startDatabase();
});
after(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await db?.stop();
});

auditLogContract('postgresAuditLog', async ({ key }) => {
  const schema = db.schema();
  const pool = db.pool({ max: 10 });
  const log = postgresAuditLog({ client: pool, schema, ...(key === undefined ? {} : { key }) });
  await log.migrate();
  return {
    log,
    // What whoever can write the table does: replace its rows (position n holds the nth record given).
    async rewrite(change) {
      const { rows } = await pool.query(`SELECT record FROM "${schema}".audit_log ORDER BY seq`);
      const changed = change(rows.map((row) => JSON.parse(row.record) as ChainedRecord));
      await pool.query(`DELETE FROM "${schema}".audit_log`);
      for (const [i, entry] of changed.entries())
        await pool.query(`INSERT INTO "${schema}".audit_log (seq, time, record) VALUES ($1, $2, $3)`, [
          i + 1,
          entry.time,
          JSON.stringify(entry),
        ]);
    },
  };
});

test('postgresAuditLog: an edit made with SQL to a record in the table shows at its seq', async () => {
  const schema = db.schema();
  const pool = db.pool();
  const log = postgresAuditLog({ client: pool, schema, key: KEY });
  await log.migrate();
  for (let n = 1; n <= 4; n++) await log.append(record(n));
  await pool.query(
    `UPDATE "${schema}".audit_log SET record = replace(record, '"outcome":"allowed"', '"outcome":"refused"') WHERE seq = 2`,
  );
  const result = await verifyAuditLog(log.read(), { key: KEY });
  assert.deepEqual(
    { ok: result.ok, brokenSeq: result.brokenSeq, reason: result.reason },
    { ok: false, brokenSeq: 2, reason: 'hash' },
  );
  await pool.query(`DELETE FROM "${schema}".audit_log WHERE seq = 3`);
  assert.equal((await verifyAuditLog(log.read(), { key: KEY })).brokenSeq, 2);
  assert.deepEqual(
    (await readAll(log, { fromSeq: 3 })).map((r) => r.seq),
    [4],
  );
});

test("postgresAuditLog: its tables come from its own migrate() or postgresStore's; before either it fails with STORE_SCHEMA", async () => {
  const pool = db.pool();
  const fresh = db.schema();
  const log = postgresAuditLog({ client: pool, schema: fresh });
  await assert.rejects(
    log.append(record(1)),
    (error: unknown) =>
      error instanceof StoreError && error.code === 'STORE_SCHEMA' && /run migrate\(\)/.test(error.message),
  );
  await assert.rejects(readAll(log), (error: unknown) => error instanceof StoreError && error.code === 'STORE_SCHEMA');
  await postgresStore({ client: pool, schema: fresh }).migrate();
  assert.equal((await log.append(record(1))).seq, 1);
  await log.migrate();
  await log.migrate();
  assert.equal((await log.append(record(2))).seq, 2, 'migrate() again keeps the chain');
  assert.equal((await verifyAuditLog(log.read())).ok, true);
});

test('postgresAuditLog: options are closed, the schema a plain identifier, the client a pool, the key at least 32 bytes and never shown', () => {
  const client = db.pool();
  assert.throws(
    () => postgresAuditLog({ client, shema: 'x' } as never),
    /unknown option "shema" \(did you mean "schema"\?\)/,
  );
  for (const schema of ['Agent', 'a-b', 'a;drop', '"x"', ''])
    assert.throws(
      () => postgresAuditLog({ client, schema }),
      /postgresAuditLog\(\): schema must be a plain identifier/,
    );
  assert.throws(() => postgresAuditLog({ client: { query() {} } as never }), /client must be a node-postgres Pool/);
  assert.throws(() => postgresAuditLog(undefined as never), /options must be \{ client, schema\?, key\? \}/);
  assert.throws(
    () => postgresAuditLog({ client, key: 'too-short-secret' }),
    (error: Error) =>
      error.name === 'AuthConfigError' &&
      /at least 32 bytes/.test(error.message) &&
      !error.message.includes('too-short-secret'),
  );
});

/** Starts an audit-writer process; resolves once it is ready. */
function writer(env: Record<string, string>): Promise<ChildProcessWithoutNullStreams> {
  const child = spawn(process.execPath, [writerChild], { env: { ...process.env, ...env } });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`audit writer not ready within 20 s: ${out}${err}`)), 20_000);
    child.stderr.on('data', (chunk: Buffer) => (err += chunk));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk;
      if (out.includes('ready')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', (code) => reject(new Error(`audit writer exited ${code}: ${out}${err}`)));
  });
}

/** The `done <count> <ms>` line of a writer, within `ms`. */
function finished(child: ChildProcessWithoutNullStreams, ms = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`audit writer not done within ${ms} ms: ${out}${err}`)), ms);
    child.stderr.on('data', (chunk: Buffer) => (err += chunk));
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    child.once('exit', (code) => {
      clearTimeout(timer);
      const done = /done \d+ [\d.]+/.exec(out);
      if (code === 0 && done) resolve(done[0]);
      else reject(new Error(`audit writer exited ${code}: ${out}${err}`));
    });
  });
}

test('postgresAuditLog: two processes, each with its own pool, appending at once write one chain: no fork, no gap, every record once', async () => {
  const schema = db.schema();
  const log = postgresAuditLog({ client: db.pool(), schema, key: KEY });
  await log.migrate();
  const count = 150;
  const env = {
    DATABASE_URL: db.url,
    AGENT_PG_SCHEMA: schema,
    AUDIT_KEY: KEY,
    AUDIT_COUNT: String(count),
    AUDIT_CONCURRENCY: '4',
  };
  const writers = await Promise.all([writer({ ...env, AUDIT_WRITER: 'a' }), writer({ ...env, AUDIT_WRITER: 'b' })]);
  const done = writers.map((child) => finished(child));
  for (const child of writers) child.stdin.write('go\n');
  await Promise.all(done);
  const records = await readAll(log);
  assert.deepEqual(
    records.map((r) => r.seq),
    Array.from({ length: 2 * count }, (_, i) => i + 1),
    'seq 1 to 300, no gap',
  );
  for (const name of ['a', 'b'])
    assert.deepEqual(
      records
        .filter((r) => r.writer === name)
        .map((r) => r.n)
        .sort((x, y) => Number(x) - Number(y)),
      Array.from({ length: count }, (_, i) => i),
      `every record of writer ${name} once`,
    );
  // The writers interleaved: the chain is not one writer's records and then the other's.
  const switches = records.filter((r, i) => i > 0 && r.writer !== records[i - 1]!.writer).length;
  assert.ok(switches > 1, `the writers took turns (${switches} switches)`);
  const result = await verifyAuditLog(records, { key: KEY });
  assert.deepEqual(
    { ok: result.ok, midChain: result.midChain, records: result.records },
    { ok: true, midChain: false, records: 2 * count },
  );
  assert.deepEqual(await log.head(), result.last);
});

test('postgresAuditLog: two server processes on one database, serving at once, write one gapless chain of both their records', async () => {
  const schema = db.schema();
  // migrate() by postgresStore's (the first server's) makes the log's table too; one after the other, as in production.
  const urls: string[] = [];
  for (const _ of [1, 2]) {
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: db.url, AGENT_PG_SCHEMA: schema, AGENT_AUDIT: '1' };
    const child = spawn(process.execPath, [serverChild], { env });
    children.push(child);
    child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    urls.push(`${(await lineMatching(child.stdout, /^listening /)).slice('listening '.length)}/agent`);
  }
  const perServer = 20;
  // Each server gets sends of its own sessions, half of them a tool call that asks for approval (events in the chain).
  const answers = await Promise.all(
    Array.from({ length: 2 * perServer }, (_, n) =>
      fetch(urls[n % 2]!, {
        method: 'POST',
        headers: { authorization: 'Bearer alice-token-0123456789', 'content-type': 'application/json' },
        body: JSON.stringify({
          sessionId: `server-${n % 2}-${n}`,
          message: n % 4 < 2 ? `hello ${n}` : `/tool refund {"amount":${n}}`,
        }),
      }).then((response) => response.status),
    ),
  );
  assert.deepEqual(answers, Array(2 * perServer).fill(200));
  const log = postgresAuditLog({ client: db.pool(), schema });
  // A request's record is appended after its answer: wait until every one is in.
  let records: ChainedRecord[] = [];
  for (let i = 0; i < 200; i++) {
    records = await readAll(log);
    if (records.filter((r) => r.status === 200).length >= 2 * perServer) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const requests = records.filter((r) => r.status === 200);
  for (const server of [0, 1])
    assert.equal(
      requests.filter((r) => String(r.sessionId).startsWith(`server-${server}-`)).length,
      perServer,
      `every request of server ${server} recorded once`,
    );
  assert.equal(records.filter((r) => r.type === 'approval-requested').length, perServer, "the runs' events too");
  // The two processes served at once: their records interleave in the one chain.
  const server = (r: ChainedRecord) => String(r.sessionId).slice(0, 'server-0'.length);
  const switches = requests.filter((r, i) => i > 0 && server(r) !== server(requests[i - 1]!)).length;
  assert.ok(switches > 1, `the processes took turns (${switches} switches)`);
  assert.deepEqual(
    records.map((r) => r.seq),
    Array.from({ length: records.length }, (_, i) => i + 1),
    'one chain, no gap',
  );
  const result = await verifyAuditLog(records);
  assert.deepEqual({ ok: result.ok, records: result.records }, { ok: true, records: records.length });
});

test('postgresAuditLog faults: with the database down an append fails STORE_UNAVAILABLE and takes no seq; after a restart the chain goes on', async (t) => {
  if (!db.owned) return t.skip('DATABASE_URL is set: the harness cannot kill a database it does not run');
  const log = postgresAuditLog({
    client: db.pool({ max: 2, connectionTimeoutMillis: 2000 }),
    schema: db.schema(),
    key: KEY,
  });
  await log.migrate();
  await log.append(record(1));
  await db.kill();
  const unavailable = (error: unknown) => error instanceof StoreError && error.code === 'STORE_UNAVAILABLE';
  await assert.rejects(log.append(record(2)), unavailable);
  await assert.rejects(log.head(), unavailable);
  await db.restart();
  // The pool's connections died with the server: the first call after may still meet one.
  let next: Awaited<ReturnType<typeof log.append>> | undefined;
  for (let i = 0; i < 3 && next === undefined; i++) next = await log.append(record(3)).catch(() => undefined);
  assert.equal(next?.seq, 2, 'the failed append took no seq');
  const result = await verifyAuditLog(log.read(), { key: KEY });
  assert.deepEqual({ ok: result.ok, records: result.records }, { ok: true, records: 2 });
});
