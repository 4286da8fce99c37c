// postgresLimitStore against a real PostgreSQL server (tests/helpers/postgres.ts): the limit
// store contract, its options and migrate(), and two server processes on one database
// (tests/helpers/children/limits-server.ts) holding one budget exactly: of many concurrent
// requests at both, exactly `limit` admitted; requests in flight and model tokens counted across
// both; the scenarios of "limits count what was spent" (tests/helpers/limits-spent.ts: failures
// counted first, tokens per model turn). A read creates no row. A database that went away answers
// 503, and the next request once it is back works.
// `agentward start` with "limits" and AGENT_DATABASE_URL counts into PostgreSQL too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import { apiToken } from '../../src/auth/api-token.ts';
import { serve } from '../../src/node/server.ts';
import { postgresLimitStore, postgresReplayStore, postgresStore, StoreError } from '../../src/postgres/index.ts';
import { lineMatching } from '../helpers/http-client.ts';
import { limitStoreContract } from '../helpers/limit-store-contract.ts';
import { ALICE, BOB } from '../helpers/limits-fixture.ts';
import { limitsSpentScenarios } from '../helpers/limits-spent.ts';
import { captureConsoleError } from '../helpers/console.ts';
import { startDatabase, type TestDatabase } from '../helpers/postgres.ts';

const serverChild = fileURLToPath(new URL('../helpers/children/limits-server.ts', import.meta.url));

let db: TestDatabase;
const children: ChildProcessWithoutNullStreams[] = [];
before(async () => {
  db = await startDatabase();
});
after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await db?.stop();
});

async function migrated(schema = db.schema()) {
  const store = postgresLimitStore({ client: db.pool({ max: 20 }), schema });
  await store.migrate();
  return store;
}

let shared: Promise<Awaited<ReturnType<typeof migrated>>> | undefined;
limitStoreContract('postgresLimitStore', async () => ({ store: await (shared ??= migrated()), expiresLeases: true }));

test('postgresLimitStore: options are closed, the schema a plain identifier, the client a pool', () => {
  const client = db.pool();
  assert.throws(
    () => postgresLimitStore({ client, shema: 'x' } as never),
    /unknown option "shema" \(did you mean "schema"\?\)/,
  );
  for (const schema of ['Agent', 'a-b', 'a;drop', '"x"', '', 'x'.repeat(64)])
    assert.throws(() => postgresLimitStore({ client, schema }), /plain identifier/);
  assert.throws(() => postgresLimitStore({ client: {} as never }), /client must be a node-postgres Pool/);
  assert.throws(() => postgresLimitStore(undefined as never), /options must be \{ client, schema\? \}/);
});

test('postgresLimitStore: before migrate() every call fails with STORE_SCHEMA naming migrate()', async () => {
  const store = postgresLimitStore({ client: db.pool(), schema: db.schema() });
  await assert.rejects(
    store.hit('k', 60, 1, 5),
    (error: unknown) =>
      error instanceof StoreError && error.code === 'STORE_SCHEMA' && /run migrate\(\)/.test(error.message),
  );
  await assert.rejects(
    store.acquire('k', 'l', 1, 60),
    (error: unknown) => error instanceof StoreError && error.code === 'STORE_SCHEMA',
  );
});

test("postgresLimitStore: migrate() beside postgresStore and postgresReplayStore at once, from several processes' pools, under one lock; again, it changes nothing", async () => {
  const schema = db.schema();
  const migrations = [];
  for (let i = 0; i < 3; i++) {
    const client = db.pool();
    migrations.push(
      postgresLimitStore({ client, schema }).migrate(),
      postgresStore({ client, schema }).migrate(),
      postgresReplayStore({ client, schema }).migrate(),
    );
  }
  await Promise.all(migrations);
  const store = await migrated(schema);
  assert.equal((await store.hit('after', 60, 1, 1)).allowed, true);
  const { rows } = await db
    .pool()
    .query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name LIKE 'limit_%' ORDER BY 1`,
      [schema],
    );
  assert.deepEqual(
    rows.map((row) => row.table_name),
    ['limit_slots', 'limit_windows'],
  );
});

test('postgresLimitStore: migrate() on a table made before reserve() adds its reserved column; windows counted before stay', async () => {
  const schema = db.schema();
  const pool = db.pool();
  // The tables as an earlier migrate() made them, without the reserved column.
  await pool.query(
    [
      `CREATE SCHEMA ${schema}`,
      `CREATE TABLE ${schema}.limit_windows (key bytea PRIMARY KEY, start bigint NOT NULL, count bigint NOT NULL, ends_at bigint NOT NULL)`,
      `CREATE TABLE ${schema}.limit_slots (key bytea PRIMARY KEY, leases jsonb NOT NULL)`,
    ].join(';\n'),
  );
  const store = postgresLimitStore({ client: pool, schema });
  assert.equal((await store.hit('before', 3600, 7, 100)).count, 7);
  await assert.rejects(
    store.reserve!('k', 3600, 1, 1, 10),
    (error: unknown) =>
      error instanceof StoreError && error.code === 'STORE_SCHEMA' && /run migrate\(\)/.test(error.message),
  );
  await store.migrate();
  assert.equal((await store.hit('before', 3600, 0, 100)).count, 7, 'the window counted before stays');
  const reserved = await store.reserve!('k', 3600, 1, 1000, 10);
  assert.deepEqual([reserved.allowed, reserved.count, reserved.reserved], [true, 10, 10]);
});

test('postgresLimitStore: no key reaches the SQL text; keys are kept as their digest', async () => {
  const schema = db.schema();
  const pool = db.pool();
  const texts: string[] = [];
  const store = postgresLimitStore({
    client: { query: (text: string, values?: unknown[]) => (texts.push(text), pool.query(text, values)) },
    schema,
  });
  await store.migrate();
  const key = `requests/60:p["zq9mark'; DROP TABLE x; --","$1"]`;
  await store.hit(key, 60, 1, 5);
  await store.acquire(key, 'zq9lease', 1, 60);
  await store.release(key, 'zq9lease');
  for (const text of texts) assert.equal(/zq9/.test(text), false);
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".limit_windows`);
  assert.equal(rows[0].n, 1);
});

test('postgresLimitStore: a count commits without waiting for the disk, for its own transaction only: the pooled connection keeps its setting', async () => {
  const pool = db.pool({ max: 1 });
  const store = postgresLimitStore({ client: pool, schema: db.schema() });
  await store.migrate();
  await store.hit('k', 60, 1, 10);
  await store.acquire('k', 'lease', 1, 60);
  await store.release('k', 'lease');
  const { rows } = await pool.query('SHOW synchronous_commit');
  assert.deepEqual(rows, [{ synchronous_commit: 'on' }]);
});

async function startChild(schema: string, limits: unknown, delayMs = 0, maxOutputTokens?: number): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    AGENT_PG_SCHEMA: schema,
    AGENT_LIMITS: JSON.stringify(limits),
    AGENT_MODEL_DELAY_MS: String(delayMs),
    ...(maxOutputTokens !== undefined && { AGENT_MAX_OUTPUT_TOKENS: String(maxOutputTokens) }),
  };
  delete env.AGENT_API_TOKEN;
  const child = spawn(process.execPath, [serverChild], { env });
  children.push(child);
  child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const line = await Promise.race([
    lineMatching(child.stdout, /^listening /),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('limits-server.ts printed no "listening" line within 30 s')), 30_000);
    }),
  ]).finally(() => clearTimeout(timer));
  return `${line.slice('listening '.length)}/agent`;
}

limitsSpentScenarios('postgresLimitStore, two server processes', async ({ limits, maxOutputTokens }) => {
  const schema = db.schema();
  const urls = await Promise.all([0, 1].map(() => startChild(schema, limits, 0, maxOutputTokens)));
  const started = children.slice(-2);
  return {
    fetch: (n, path, init) => fetch(`${urls[n % 2]}${path}`, init),
    store: await migrated(schema),
    close: async () => {
      for (const child of started) child.kill('SIGKILL');
    },
  };
});

test('postgresLimitStore: a read creates no row; a refunded slot counts 0', async () => {
  const schema = db.schema();
  const store = await migrated(schema);
  const rows = async () =>
    (await db.pool().query(`SELECT count(*)::int AS n FROM "${schema}".limit_windows`)).rows[0].n as number;
  for (let n = 0; n < 20; n++) assert.equal((await store.hit(`tokens/60:p["","x","reader-${n}"]`, 60, 0, 10)).count, 0);
  assert.equal(await rows(), 0);
  const taken = await store.hit('failures/60:a192.0.2.1', 60, 1, 5);
  assert.equal((await store.settle('failures/60:a192.0.2.1', 60, taken.start, -1)).count, 0);
  assert.equal((await store.hit('failures/60:a192.0.2.1', 60, 0, 5)).count, 0);
});

const post = (url: string, token: string, message: string) =>
  fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message }),
  });

test('two server processes, one database: of 120 concurrent requests at both, exactly the limit (37) are admitted; another principal has a budget of its own', async () => {
  const schema = db.schema();
  const limits = { requests: { limit: 37, windowSec: 3600 } };
  const urls = await Promise.all([startChild(schema, limits), startChild(schema, limits)]);
  const answers = await Promise.all(Array.from({ length: 120 }, (_, n) => post(urls[n % 2]!, ALICE, `m${n}`)));
  const statuses = answers.map((answer) => answer.status);
  assert.equal(statuses.filter((status) => status === 200).length, 37);
  assert.equal(statuses.filter((status) => status === 429).length, 83);
  const pids = new Set<string>();
  for (const answer of answers) {
    const body = (await answer.json()) as { text?: string; error?: string };
    if (answer.status === 200) pids.add(body.text!.split(':')[0]!);
    else assert.deepEqual(body, { error: 'Too Many Requests' });
  }
  assert.equal(pids.size, 2, 'both processes admitted some');
  const remaining = answers
    .filter((answer) => answer.status === 200)
    .map((answer) => Number(/r=(\d+)/.exec(answer.headers.get('ratelimit')!)![1]))
    .sort((a, b) => a - b);
  assert.deepEqual(
    remaining,
    Array.from({ length: 37 }, (_, n) => n),
    'each admitted request saw its own count',
  );
  assert.equal((await post(urls[1]!, BOB, 'bob')).status, 200);
});

test('two server processes, one database: requests in flight are counted across both (concurrent 3 of 10 at once), and each slot comes back when its answer is out', async () => {
  const schema = db.schema();
  const limits = { concurrent: 3 };
  const urls = await Promise.all([startChild(schema, limits, 1500), startChild(schema, limits, 1500)]);
  const answers = await Promise.all(Array.from({ length: 10 }, (_, n) => post(urls[n % 2]!, ALICE, `m${n}`)));
  assert.equal(answers.filter((answer) => answer.status === 200).length, 3);
  for (const answer of answers.filter((answer) => answer.status === 429)) {
    assert.equal(answer.headers.get('ratelimit-policy'), '"concurrent";q=3;qu="concurrent-requests"');
    assert.equal(answer.headers.get('retry-after'), '1');
  }
  const again = await Promise.all(Array.from({ length: 3 }, (_, n) => post(urls[n % 2]!, ALICE, `again ${n}`)));
  assert.deepEqual(
    again.map((answer) => answer.status),
    [200, 200, 200],
  );
});

test('two server processes, one database: model tokens are counted across both, and the turn after the budget is spent is refused', async () => {
  const schema = db.schema();
  const limits = { tokens: { limit: 250, windowSec: 3600 } };
  const urls = await Promise.all([startChild(schema, limits), startChild(schema, limits)]);
  // Each turn reports 100 tokens: 0, 100, 200 are below 250, so three turns start; 300 is not.
  const statuses = [];
  for (let n = 0; n < 4; n++) statuses.push((await post(urls[n % 2]!, ALICE, `turn ${n}`)).status);
  assert.deepEqual(statuses, [200, 200, 200, 429]);
  const refused = await post(urls[0]!, ALICE, 'once more');
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('agentward-tokens-policy'), '"tokens";q=250;w=3600');
  assert.match(refused.headers.get('agentward-tokens')!, /^"tokens";r=0;t=\d+$/);
});

test('postgresLimitStore: a database that went away answers 503 {"error":"Service Unavailable"}; once it is back, the next request works', {
  skip: process.env.DATABASE_URL ? 'DATABASE_URL is set: the harness does not own the database' : false,
}, async () => {
  const store = await migrated();
  const agent = createAgent({ name: 'down', model: echoModel() });
  const server = await serve({
    agent,
    auth: apiToken('tok-0123456789abcdef'),
    limits: { requests: { limit: 100, windowSec: 60 }, store },
    port: 0,
    log: 'off',
  });
  try {
    const url = `${server.url}/agent`;
    assert.equal((await post(url, 'tok-0123456789abcdef', 'before')).status, 200);
    await db.kill();
    const { result: down, calls } = await captureConsoleError(() => post(url, 'tok-0123456789abcdef', 'down'));
    assert.equal(down.status, 503);
    assert.deepEqual(await down.json(), { error: 'Service Unavailable' });
    assert.equal(down.headers.get('cache-control'), 'no-store');
    assert.ok(calls.length >= 1, 'the store failure is logged');
    await db.restart();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await captureConsoleError(() => post(url, 'tok-0123456789abcdef', 'after'))).result.status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(status, 200);
  } finally {
    await server.close();
  }
});

const cliFile = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const pgPackage = realpathSync(fileURLToPath(new URL('../../node_modules/pg', import.meta.url)));

/** `agentward start <dir>` in a child; resolves with where it listens and what it printed so far. */
function startCli(dir: string, env: Record<string, string>): Promise<{ url: string; output: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', AGENT_LOG: 'off', ...env };
  delete childEnv.AGENT_DATA_DIR;
  const child = spawn(process.execPath, [cliFile, 'start', dir], { env: childEnv });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const take = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /listening on (\S+)/.exec(output);
      if (found) clearTimeout(timer), resolve({ url: found[1]!, output });
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    // Bounded: a start that neither listens nor exits fails the test instead of hanging it.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agentward start printed no "listening on" in 60 s: ${output}`));
    }, 60_000);
    child.once(
      'exit',
      (code) => (clearTimeout(timer), reject(new Error(`agentward start exited (${code}): ${output}`))),
    );
  });
}

test('agentward start with "limits" in agentward.json and AGENT_DATABASE_URL: two start processes count into one budget in PostgreSQL', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'agentward-limits-start-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(
    join(dir, 'agent.ts'),
    `import { createAgent, echoModel } from 'agentward';\nexport default createAgent({ name: 'limited-start', model: echoModel() });\n`,
  );
  await writeFile(join(dir, 'agentward.json'), JSON.stringify({ limits: { requests: { limit: 9, windowSec: 3600 } } }));
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ private: true, type: 'module', dependencies: { pg: '^8' } }),
  );
  await mkdir(join(dir, 'node_modules'));
  await symlink(pgPackage, join(dir, 'node_modules', 'pg'), 'dir');
  const schema = db.schema();
  const env = { AGENT_DATABASE_URL: db.url, AGENT_DATABASE_SCHEMA: schema, AGENT_API_TOKEN: 'start-token-0123456789' };
  const servers = await Promise.all([startCli(dir, env), startCli(dir, env)]);
  for (const server of servers) {
    assert.match(server.output, new RegExp(`limits are counted in PostgreSQL schema ${schema}`));
    assert.ok(!server.output.includes(db.url), 'the URL (it holds the password) is never printed');
  }
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, n) => post(`${servers[n % 2]!.url}`, 'start-token-0123456789', `m${n}`)),
  );
  assert.equal(answers.filter((answer) => answer.status === 200).length, 9);
  assert.equal(answers.filter((answer) => answer.status === 429).length, 21);
});
