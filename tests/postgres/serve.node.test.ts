// Two `serve()` processes on one PostgreSQL database (tests/helpers/children/postgres-server.ts):
// concurrent sends to one session from both land in turns that never interleave, one approval
// decided concurrently on both resumes once, and an approval paused on one is decided on the
// other, the run resuming as the principal it started with.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lineMatching } from '../helpers/http-client.ts';
import { startDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { SCHEMA_VERSION } from '../../src/postgres/index.ts';

const serverChild = fileURLToPath(new URL('../helpers/children/postgres-server.ts', import.meta.url));
const cliFile = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const pgPackage = realpathSync(fileURLToPath(new URL('../../node_modules/pg', import.meta.url)));
const ALICE = 'Bearer alice-token-0123456789';
const BOB = 'Bearer bob-token-0123456789';

let db: TestDatabase;
const children: ChildProcessWithoutNullStreams[] = [];
let urls: [string, string];

async function startChild(schema: string): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: db.url, AGENT_PG_SCHEMA: schema, AGENT_PG_POOL: '10' };
  delete env.AGENT_API_TOKEN;
  const child = spawn(process.execPath, [serverChild], { env });
  children.push(child);
  child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  const line = await lineMatching(child.stdout, /^listening /);
  return `${line.slice('listening '.length)}/agent`;
}

before(async () => {
  db = await startDatabase();
  const schema = db.schema();
  // One after the other: the second's migrate() finds the schema in place.
  urls = [await startChild(schema), await startChild(schema)];
});
after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await db?.stop();
});

async function call(url: string, authorization: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: await response.json() };
}

test('two server processes, one database: 50 concurrent sends to one session all land, in turns that never interleave', async () => {
  const sessionId = 'crowded-session';
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, n) => call(urls[n % 2]!, ALICE, { message: `message ${n}`, sessionId })),
  );
  assert.deepEqual(
    results.map((r) => r.status),
    Array(50).fill(200),
  );
  for (const [n, result] of results.entries()) assert.equal(result.json.text, `[alice] message ${n}`);

  for (const url of urls) {
    const { status, json } = await call(`${url}/chat/${sessionId}`, ALICE);
    assert.equal(status, 200);
    const messages = json.messages as { role: string; content: string }[];
    assert.equal(messages.length, 100);
    // Each turn is a user message followed at once by its own reply: no turn cut into another.
    for (let i = 0; i < messages.length; i += 2) {
      assert.equal(messages[i]!.role, 'user');
      assert.deepEqual(messages[i + 1], { role: 'assistant', content: `[alice] ${messages[i]!.content}` });
    }
    const sent = messages
      .filter((m) => m.role === 'user')
      .map((m) => m.content)
      .sort();
    assert.deepEqual(sent, Array.from({ length: 50 }, (_, n) => `message ${n}`).sort());
  }
});

test('two server processes, one database: of 20 concurrent decisions on one approval exactly one resumes the run, 19 get APPROVAL_NOT_FOUND', async () => {
  const paused = await call(urls[0], ALICE, { message: '/tool refund {"amount":7}', sessionId: 'decide-once' });
  assert.equal(paused.status, 200);
  assert.equal(paused.json.status, 'awaiting-approval');
  const approvalId = paused.json.approvals[0].id as string;

  const decisions = await Promise.all(
    Array.from({ length: 20 }, (_, n) =>
      call(`${urls[n % 2]}/approvals/${encodeURIComponent(approvalId)}`, BOB, { approved: true }),
    ),
  );
  const won = decisions.filter((d) => d.status === 200);
  const lost = decisions.filter((d) => d.status !== 200);
  assert.equal(won.length, 1);
  assert.equal(won[0]!.json.status, 'completed');
  assert.equal(lost.length, 19);
  for (const loser of lost) assert.deepEqual(loser, { status: 404, json: { error: 'Approval not found' } });

  const { json } = await call(`${urls[1]}/chat/decide-once`, ALICE);
  const toolMessages = (json.messages as { role: string }[]).filter((m) => m.role === 'tool');
  assert.equal(toolMessages.length, 1, 'the tool ran once');
  assert.deepEqual((await call(`${urls[0]}/approvals?sessionId=decide-once`, ALICE)).json, { approvals: [] });
});

test('two server processes, one database: an approval paused on one process is decided on the other, and the run resumes as its original principal', async () => {
  const paused = await call(urls[0], ALICE, { message: '/tool refund {"amount":12}', sessionId: 'cross-process' });
  assert.equal(paused.json.status, 'awaiting-approval');
  const approvalId = paused.json.approvals[0].id as string;

  const pending = await call(`${urls[1]}/approvals?sessionId=cross-process`, BOB);
  assert.deepEqual(
    pending.json.approvals.map((a: { id: string }) => a.id),
    [approvalId],
  );
  // Bob decides on the other process; the resumed run's model function still sees Alice.
  const decided = await call(`${urls[1]}/approvals/${encodeURIComponent(approvalId)}`, BOB, { approved: true });
  assert.equal(decided.status, 200);
  assert.equal(decided.json.status, 'completed');
  assert.match(decided.json.text, /^\[alice\] Tool results: refund: .*"refunded":12/);

  // Sending again works from either process: the session is no longer waiting.
  const next = await call(urls[0], ALICE, { message: 'after the refund', sessionId: 'cross-process' });
  assert.equal(next.json.text, '[alice] after the refund');
});

// What the README shows: the directory depends on pg, and its agent.ts picks the store from the environment.
const AGENT_SOURCE = `import pg from 'pg';
import { createAgent, echoModel } from 'agentward';
import { fileStore } from 'agentward/node';
import { postgresStore } from 'agentward/postgres';

const url = process.env.AGENT_DATABASE_URL;
export default createAgent({
  name: 'pg-start',
  model: echoModel(),
  store: url
    ? postgresStore({ client: new pg.Pool({ connectionString: url, max: 10 }), schema: process.env.AGENT_DATABASE_SCHEMA })
    : fileStore(process.env.AGENT_DATA_DIR || '.data'),
});
`;

async function agentDirWithPg(t: { after(fn: () => Promise<void>): void }, withDriver: boolean): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentward-pg-start-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'agent.ts'), AGENT_SOURCE);
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ private: true, type: 'module', dependencies: { pg: '^8' } }),
  );
  if (withDriver) {
    await mkdir(join(dir, 'node_modules'));
    await symlink(pgPackage, join(dir, 'node_modules', 'pg'), 'dir');
  }
  return dir;
}

interface Cli {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  exit: Promise<number | null>;
  url: Promise<string>;
}

/** `agentward start <dir>`; `url` is where it says it listens (read from all its output so far, so no line is missed). */
function startCli(dir: string, env: Record<string, string>): Cli {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', AGENT_LOG: 'off', ...env };
  delete childEnv.AGENT_DATA_DIR;
  const child = spawn(process.execPath, [cliFile, 'start', dir], { env: childEnv });
  children.push(child);
  let output = '';
  let listening!: (url: string) => void;
  const url = new Promise<string>((resolve) => (listening = resolve));
  const take = (chunk: Buffer) => {
    output += chunk.toString();
    const found = /listening on (\S+)/.exec(output);
    if (found) listening(found[1]!);
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const where = Promise.race([
    url,
    exit.then((code) => Promise.reject(new Error(`agentward start exited (${code}): ${output}`))),
    // Bounded: a start that neither listens nor exits fails the test instead of hanging it.
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`agentward start printed no "listening on" in 60 s: ${output}`));
      }, 60_000);
    }),
  ]).finally(() => clearTimeout(timer));
  where.catch(() => undefined); // a start that is meant to fail is awaited through `exit`
  return { child, output: () => output, exit, url: where };
}

test("agentward start with AGENT_DATABASE_URL: start migrates the schema with the directory's pg; two start processes share one database", async (t) => {
  const dir = await agentDirWithPg(t, true);
  const schema = db.schema();
  const env = { AGENT_DATABASE_URL: db.url, AGENT_DATABASE_SCHEMA: schema, AGENT_API_TOKEN: 'start-token-0123456789' };
  const servers = [startCli(dir, env), startCli(dir, env)];
  const bases: string[] = [];
  for (const server of servers) {
    bases.push(await server.url);
    assert.match(server.output(), new RegExp(`PostgreSQL schema ${schema} is at version ${SCHEMA_VERSION}`));
    assert.ok(!server.output().includes(db.url), 'the URL (it holds the password) is never printed');
  }
  const auth = 'Bearer start-token-0123456789';
  const first = await call(bases[0]!, auth, { message: 'stored in postgres', sessionId: 'via-start' });
  assert.equal(first.status, 200);
  const second = await call(bases[1]!, auth, { message: 'and continued elsewhere', sessionId: 'via-start' });
  assert.equal(second.status, 200);
  const transcript = await call(`${bases[0]}/chat/via-start`, auth);
  assert.deepEqual(
    transcript.json.messages.map((m: { content: string }) => m.content),
    ['stored in postgres', 'stored in postgres', 'and continued elsewhere', 'and continued elsewhere'],
  );
  // The sessions are in the database, not in a file store of the directory.
  const pool = db.pool({ max: 1 });
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".sessions`);
  assert.deepEqual(rows, [{ n: 1 }]);
  assert.equal(existsSync(join(dir, '.data', 'sessions')), false);
});

test('agentward start with AGENT_DATABASE_URL but no pg in the directory, or an unreachable database: a clear error, exit 1, the URL never printed', async (t) => {
  const bare = await agentDirWithPg(t, false);
  const missing = startCli(bare, { AGENT_DATABASE_URL: db.url, AGENT_API_TOKEN: 'start-token-0123456789' });
  assert.equal(await missing.exit, 1);
  assert.match(
    missing.output(),
    /AGENT_DATABASE_URL is set, but the PostgreSQL driver pg is not installed .*npm install pg/,
  );
  assert.ok(!missing.output().includes(db.url));

  const dir = await agentDirWithPg(t, true);
  const secret = 'not-this-password-9f1c';
  const unreachable = startCli(dir, {
    AGENT_DATABASE_URL: `postgres://postgres:${secret}@127.0.0.1:1/postgres`,
    AGENT_API_TOKEN: 'start-token-0123456789',
  });
  assert.equal(await unreachable.exit, 1);
  assert.match(unreachable.output(), /AGENT_DATABASE_URL: the database could not be migrated: .*ECONNREFUSED/);
  assert.ok(!unreachable.output().includes(secret));
});

test('agentward start of a node-server build with AGENT_DATABASE_URL: the output lists pg, and its server migrates and serves from the database', async (t) => {
  const { build } = await import('../../src/targets/build.ts');
  const dir = await agentDirWithPg(t, true);
  const out = await mkdtemp(join(tmpdir(), 'agentward-pg-out-'));
  t.after(() => rm(out, { recursive: true, force: true }));
  await build(dir, { target: 'node-server', out });
  const { readFile } = await import('node:fs/promises');
  const manifest = JSON.parse(await readFile(join(out, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  assert.deepEqual(manifest.dependencies, { pg: '^8' });
  // `npm install` in the output, as a deployment does.
  await mkdir(join(out, 'node_modules'));
  await symlink(pgPackage, join(out, 'node_modules', 'pg'), 'dir');

  const schema = db.schema();
  const server = startCli(out, {
    AGENT_DATABASE_URL: db.url,
    AGENT_DATABASE_SCHEMA: schema,
    AGENT_API_TOKEN: 'built-token-0123456789',
  });
  const base = await server.url;
  assert.match(server.output(), new RegExp(`PostgreSQL schema ${schema} is at version ${SCHEMA_VERSION}`));
  const sent = await call(base, 'Bearer built-token-0123456789', {
    message: 'from the built server',
    sessionId: 'built',
  });
  assert.equal(sent.status, 200);
  const { rows } = await db.pool({ max: 1 }).query(`SELECT count(*)::int AS n FROM "${schema}".sessions`);
  assert.deepEqual(rows, [{ n: 1 }]);
});
