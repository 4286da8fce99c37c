// The PostgreSQL store against a real PostgreSQL server (tests/helpers/postgres.ts): the
// store contract, values that try to break out of SQL, migrate(), and the faults: the server
// killed mid-turn, then restarted; a pool with no free connection.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import type { Model, Store } from '../../src/agent/types.ts';
import { apiToken } from '../../src/auth/api-token.ts';
import { serve } from '../../src/node/server.ts';
import { agentHandler } from '../../src/http/index.ts';
import { postgresStore, SCHEMA_VERSION, StoreError } from '../../src/postgres/index.ts';
import type { PgPool } from '../../src/postgres/index.ts';
import { sessionRecord, storeContract } from '../helpers/store-contract.ts';
import { startDatabase, type TestDatabase } from '../helpers/postgres.ts';

let db: TestDatabase;
before(async () => {
  db = await startDatabase();
});
after(async () => {
  await db?.stop();
});

/** A migrated store in a schema of its own. */
async function freshStore(options: { max?: number; connectTimeout?: number } = {}) {
  const schema = db.schema();
  const pool = db.pool({ max: options.max ?? 10 });
  const store = postgresStore({
    client: pool,
    schema,
    ...(options.connectTimeout !== undefined && { connectTimeout: options.connectTimeout }),
  });
  await store.migrate();
  return { store, schema, pool };
}

storeContract('postgresStore', async () => {
  const { store, schema, pool } = await freshStore();
  // Connections opened ahead: the contract times turns against each other, not connection set-up.
  const warm = await Promise.all(Array.from({ length: 4 }, () => pool.connect()));
  for (const conn of warm) conn.release();
  // A new instance on other connections, as another process would be.
  return { store, reopen: () => postgresStore({ client: db.pool(), schema }) };
});

/** A pool that records every SQL text it is given. */
function recording(pool: PgPool): { pool: PgPool; texts: string[] } {
  const texts: string[] = [];
  const record = (text: string) => {
    texts.push(text);
  };
  return {
    texts,
    pool: {
      query: (text, values) => (record(text), pool.query(text, values)),
      async connect() {
        const conn = await pool.connect();
        return {
          query: (text: string, values?: unknown[]) => (record(text), conn.query(text, values)),
          release: (destroy?: boolean) => conn.release(destroy),
        };
      },
    },
  };
}

const MARK = 'zq9mark';
const hostile = [
  `${MARK}'; DROP TABLE sessions; --`,
  `${MARK}"quoted" \\ back\\slash \\\\ two`,
  `${MARK} $1 $2 $$ dollar $$`,
  `${MARK} nul \u0000 inside \u0000`,
  `${MARK} lone surrogate \ud800 and emoji 😀`,
  `${MARK} newline\nand\ttab\r carriage return`,
];

test('postgresStore: ids, owners, memory scopes and messages with quotes, backslashes, $1, NUL and 1 MiB of text round-trip exactly; no SQL text holds a value', async () => {
  const schema = db.schema();
  const { pool, texts } = recording(db.pool());
  const store = postgresStore({ client: pool, schema });
  await store.migrate();
  const big = `${MARK}${'x'.repeat(1024 * 1024)}'\\\u0000$1`;
  for (const [index, value] of [...hostile, big].entries()) {
    const owner = ['jwt', value, value] as const;
    const record = sessionRecord(value, {
      owner,
      title: value,
      messages: [
        { role: 'user', content: value },
        { role: 'assistant', content: value },
      ],
    });
    await store.saveSession(record);
    assert.deepEqual(await store.loadSession(value), record);
    const checkpoint = { approvalId: value, sessionId: value, metadata: { value }, owner };
    await store.saveCheckpoint(checkpoint);
    assert.deepEqual(await store.loadCheckpoint(value), checkpoint);
    assert.deepEqual(await store.listCheckpoints(value), [checkpoint]);
    assert.equal(await store.countCheckpoints!(owner), 1);
    await store.appendMemory(value, value);
    await store.appendMemory(value, `second ${index}`);
    assert.deepEqual(await store.loadMemory(value), [value, `second ${index}`]);
    const [row] = await store.listSessions!({ owner, limit: 10 });
    assert.deepEqual(row, {
      id: value,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
      title: value,
      pendingApprovals: 1,
    });
    assert.equal(await store.deleteCheckpoint(value), true);
    assert.equal(await store.deleteSession!(value), true);
    assert.equal(await store.loadSession(value), undefined);
  }
  // Nothing else was touched: a value that looked like SQL stayed a value.
  assert.equal((await store.listSessions!({ owner: ['jwt', null, 'x'], limit: 1 })).length, 0);
  assert.ok(texts.length > 50);
  assert.deepEqual(
    texts.filter((text) => text.includes(MARK) || text.includes('\u0000')),
    [],
  );

  // Through an agent too: a session id, a memory scope and messages made of the same values.
  const agent = createAgent({
    name: 'hostile',
    model: echoModel(),
    store,
    memory: { scope: () => `${hostile[3]} agent scope` },
  });
  // Session ids are 1 to 256 characters without whitespace or control characters (the agent's rule).
  const sessionIds = [`${MARK}';DROP--`, `${MARK}"q\\b\\\\$1$$`, `${MARK}\ud800😀`, `${MARK}${'\\'.repeat(240)}`];
  for (const [index, value] of hostile.entries()) {
    const sessionId = sessionIds[index % sessionIds.length]! + index;
    const result = await agent.send(value, { sessionId });
    assert.equal(result.text, value);
    const remembered = await agent.send(`/tool remember ${JSON.stringify({ note: value })}`, { sessionId });
    assert.equal(remembered.status, 'completed');
    const { messages } = await agent.transcript(sessionId);
    assert.deepEqual(messages.slice(0, 2), [
      { role: 'user', content: value },
      { role: 'assistant', content: value },
    ]);
  }
  const bigReply = await agent.send(big, { sessionId: `${MARK}big` });
  assert.equal(bigReply.text, big);
  assert.deepEqual((await agent.transcript(`${MARK}big`)).messages, [
    { role: 'user', content: big },
    { role: 'assistant', content: big },
  ]);
  assert.deepEqual(await store.loadMemory(`${hostile[3]} agent scope`), hostile);
  assert.deepEqual(
    texts.filter((text) => text.includes(MARK) || text.includes('\u0000')),
    [],
  );
});

test('postgresStore: migrate() is idempotent, also run concurrently, and keeps the data', async () => {
  const { store, schema, pool } = await freshStore();
  await store.saveSession(sessionRecord('kept'));
  await store.appendMemory('ns', 'note');
  await Promise.all([
    store.migrate(),
    postgresStore({ client: db.pool(), schema }).migrate(),
    postgresStore({ client: db.pool(), schema }).migrate(),
  ]);
  await store.migrate();
  assert.deepEqual(await store.loadSession('kept'), sessionRecord('kept'));
  assert.deepEqual(await store.loadMemory('ns'), ['note']);
  const { rows } = await pool.query(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`);
  assert.deepEqual(rows, [{ value: String(SCHEMA_VERSION) }]);
  // Concurrent first migrations of a new schema (several processes starting at once) do not collide.
  const fresh = db.schema();
  await Promise.all(Array.from({ length: 4 }, () => postgresStore({ client: db.pool(), schema: fresh }).migrate()));
  assert.equal(await postgresStore({ client: db.pool(), schema: fresh }).loadSession('none'), undefined);
});

test('postgresStore: migrate() and every other call refuse a newer schema version; calls on a missing schema name migrate()', async () => {
  const { schema, pool } = await freshStore();
  await pool.query(`UPDATE "${schema}".meta SET value = $1 WHERE key = 'schema_version'`, [String(SCHEMA_VERSION + 1)]);
  const store = postgresStore({ client: pool, schema });
  const newer = (error: unknown) =>
    error instanceof StoreError &&
    error.code === 'STORE_SCHEMA' &&
    /newer/.test(error.message) &&
    /migrate\(\)/.test(error.message);
  await assert.rejects(store.migrate(), newer);
  await assert.rejects(store.loadSession('x'), newer);
  await assert.rejects(store.saveSession(sessionRecord('x')), newer);
  await assert.rejects(
    store.withSession('x', async () => 'ran'),
    newer,
  );
  const { rows } = await pool.query(`SELECT value FROM "${schema}".meta`);
  assert.deepEqual(rows, [{ value: String(SCHEMA_VERSION + 1) }], 'migrate() left the newer schema alone');
  const { rows: tables } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".sessions`);
  assert.deepEqual(tables, [{ n: 0 }]);

  const missing = postgresStore({ client: pool, schema: db.schema() });
  await assert.rejects(
    missing.loadSession('x'),
    (error: unknown) =>
      error instanceof StoreError && error.code === 'STORE_SCHEMA' && /migrate\(\)/.test(error.message),
  );
  await missing.migrate();
  assert.equal(await missing.loadSession('x'), undefined);

  for (const schemaName of ['Agentward', 'a-b', 'x"; DROP SCHEMA public; --', '', '1abc', 'a'.repeat(64)]) {
    assert.throws(() => postgresStore({ client: pool, schema: schemaName }), /plain identifier/);
  }
  assert.throws(() => postgresStore({ client: {} as PgPool }), /Pool/);
});

/**
 * A model for the turn "hold": it first calls the `lookup` tool (the turn then writes the call and
 * its result), and its next answer waits for `release()`. Any other message is echoed.
 */
function heldModel(): { model: Model; started: Promise<void>; release: () => void } {
  const echo = echoModel();
  let started!: () => void;
  let release!: () => void;
  const startedPromise = new Promise<void>((resolve) => (started = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    started: startedPromise,
    release,
    model: {
      async generate(request) {
        const last = request.messages.at(-1);
        if (last?.role === 'user' && last.content === 'hold')
          return { toolCalls: [{ id: 'call-1', name: 'lookup', arguments: {} }] };
        if (last?.role === 'tool') {
          started();
          await released;
          return { text: 'held reply' };
        }
        return echo.generate(request);
      },
    },
  };
}

const TOKEN = 'pg-test-token-0123456789';
const post = (url: string, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function serveOn(store: Store, model: Model) {
  const lookup = { name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, execute: () => 'found' };
  const agent = createAgent({ name: 'faults', model, store, tools: [lookup] });
  const server = await serve({ agent, auth: apiToken(TOKEN), port: 0, log: 'off' });
  return server;
}

test('postgresStore faults: the database killed mid-turn answers 503 and writes nothing of the turn; after a restart the same server works again', async (t) => {
  if (!db.owned) return t.skip('DATABASE_URL is set: the harness cannot kill a database it does not run');
  const { store, pool } = await freshStore({ max: 4, connectTimeout: 2000 });
  const held = heldModel();
  const server = await serveOn(store, held.model);
  t.after(() => server.close());

  const first = await post(`${server.url}/agent`, { message: 'before', sessionId: 's' });
  assert.equal(first.status, 200);
  const during = post(`${server.url}/agent`, { message: 'hold', sessionId: 's' });
  await held.started;
  await db.kill();
  held.release();
  const answer = await during;
  assert.equal(answer.status, 503);
  assert.deepEqual(await answer.json(), { error: 'Service Unavailable' });
  assert.equal(answer.headers.get('content-type'), 'application/json');

  // While the database is down: 503, and the process (its idle pooled connections failed) lives on.
  const down = await post(`${server.url}/agent`, { message: 'while down', sessionId: 's' });
  assert.equal(down.status, 503);
  assert.deepEqual(await down.json(), { error: 'Service Unavailable' });
  const transcriptDown = await fetch(`${server.url}/agent/chat/s`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(transcriptDown.status, 503);

  await db.restart();
  const again = await post(`${server.url}/agent`, { message: 'after', sessionId: 's' });
  assert.equal(again.status, 200);
  const transcript = (await (
    await fetch(`${server.url}/agent/chat/s`, { headers: { authorization: `Bearer ${TOKEN}` } })
  ).json()) as { messages: { content: string }[] };
  // The killed turn left nothing: not its user message, nor the tool call and result it had written.
  assert.deepEqual(
    transcript.messages.map((m) => m.content),
    ['before', 'before', 'after', 'after'],
  );
  assert.equal((await pool.query('SELECT 1 AS ok')).rows[0]?.ok, 1);
});

test('postgresStore faults: with no free pooled connection a request waits connectTimeout, then answers 503; once one is free it works', async (t) => {
  const { store, pool } = await freshStore({ max: 1, connectTimeout: 300 });
  const server = await serveOn(store, echoModel());
  t.after(() => server.close());
  assert.equal((await post(`${server.url}/agent`, { message: 'warm', sessionId: 'p' })).status, 200);

  const taken = await pool.connect();
  const started = performance.now();
  const refused = await post(`${server.url}/agent`, { message: 'no connection', sessionId: 'p' });
  const waited = performance.now() - started;
  assert.equal(refused.status, 503);
  assert.deepEqual(await refused.json(), { error: 'Service Unavailable' });
  assert.ok(waited >= 250, `waited ${waited} ms for a connection`);
  const reading = await fetch(`${server.url}/agent/chat/p`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(reading.status, 503);
  taken.release();

  const ok = await post(`${server.url}/agent`, { message: 'free again', sessionId: 'p' });
  assert.equal(ok.status, 200);
  const { messages } = await store.loadSession('p').then((record) => record!);
  assert.deepEqual(
    messages.map((m) => m.content),
    ['warm', 'warm', 'free again', 'free again'],
  );
});

test('postgresStore faults: an idle pooled connection that the server ends does not end the process; the next call works', async () => {
  const { store, pool } = await freshStore({ max: 2 });
  await store.saveSession(sessionRecord('idle'));
  const { rows } = await pool.query('SELECT pg_backend_pid() AS pid');
  const idle = rows[0]!.pid as number;
  assert.equal(pool.listenerCount('error'), 1, "the store listens for the pool's errors");
  const errors: Error[] = [];
  pool.on('error', (error) => errors.push(error));
  // Another connection ends the idle ones, as a database restart or a proxy would.
  const admin = db.pool({ max: 1 });
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1', [idle]);
  for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(errors.length > 0, 'the pool reported the dropped connection');
  assert.deepEqual(await store.loadSession('idle'), sessionRecord('idle'));
});

// Issue 28, finding 4: a streamed run sent `finish` inside the turn's transaction, before a COMMIT that then failed.
test('postgresStore faults: a COMMIT that fails (the backend ends at commit) ends the stream with an error event carrying STORE_UNAVAILABLE, never finish; nothing is stored', async (t) => {
  const { store, schema, pool } = await freshStore({ max: 4, connectTimeout: 2000 });
  const s = `"${schema}"`;
  // A deferred constraint trigger runs inside COMMIT: armed, it ends its own backend there, as a
  // database restart or an operator's pg_terminate_backend would between the turn and its commit.
  await pool.query(`CREATE TABLE ${s}.kill_switch (armed boolean NOT NULL)`);
  await pool.query(`INSERT INTO ${s}.kill_switch VALUES (true)`);
  await pool.query(`CREATE FUNCTION ${s}.end_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF (SELECT armed FROM ${s}.kill_switch) THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;
      RETURN NULL;
    END $$`);
  await pool.query(
    `CREATE CONSTRAINT TRIGGER end_at_commit AFTER INSERT OR UPDATE ON ${s}.sessions DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${s}.end_at_commit()`,
  );

  const agent = createAgent({ name: 'commit', model: echoModel(), store });
  const events: { type: string; code?: string }[] = [];
  await assert.rejects(
    agent.send('lost at commit', { sessionId: 'c1', onEvent: (event) => void events.push(event) }),
    (error: unknown) => (error as StoreError).code === 'STORE_UNAVAILABLE',
  );
  const types = events.map((event) => event.type);
  assert.deepEqual([types[0], types.at(-2), types.at(-1)], ['start', 'step-finish', 'error']);
  assert.equal(types.includes('finish'), false, 'no finish before the commit');
  assert.equal(events.at(-1)?.code, 'STORE_UNAVAILABLE');
  assert.equal(await store.loadSession('c1'), undefined, 'nothing of the turn was stored');

  // The same over HTTP: the SSE stream of POST <base>/chat ends with that error event, no finish.
  const server = await serve({ agent, auth: apiToken(TOKEN), port: 0, log: 'off' });
  t.after(() => server.close());
  const response = await fetch(`${server.url}/agent/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ message: 'lost again', sessionId: 'c2' }),
  });
  const text = await response.text();
  const streamed = [...text.matchAll(/^event: (.*)$/gm)].map((match) => match[1]);
  assert.equal(streamed.includes('finish'), false, text);
  assert.equal(streamed.at(-1), 'error');
  assert.match(text, /"code":"STORE_UNAVAILABLE"/);
  assert.equal(await store.loadSession('c2'), undefined);

  // Disarmed, the next turn lands and finishes.
  await pool.query(`UPDATE ${s}.kill_switch SET armed = false`);
  events.length = 0;
  const done = await agent.send('stored', { sessionId: 'c3', onEvent: (event) => void events.push(event) });
  assert.equal(events.at(-1)?.type, 'finish');
  assert.deepEqual(
    (await store.loadSession('c3'))?.messages.map((m) => m.content),
    ['stored', 'stored'],
  );
  assert.equal(done.text, 'stored');
});

test("postgresStore: migrate() brings a version 1 schema to version 2, filling each session's owner column from its record", async () => {
  const { store, schema, pool } = await freshStore();
  const owner: [string, string | null, string] = ['jwt', 'https://id.example', 'ada "quoted" \u0000 \\ é'];
  await store.saveSession(sessionRecord('v1-owned', { owner }));
  await store.saveSession(sessionRecord('v1-free'));
  // Back to what version 1 wrote: no owner column, version 1 recorded.
  await pool.query(`ALTER TABLE "${schema}".sessions DROP COLUMN owner`);
  await pool.query(`UPDATE "${schema}".meta SET value = '1' WHERE key = 'schema_version'`);
  const older = postgresStore({ client: pool, schema });
  await assert.rejects(
    older.loadSession('v1-owned'),
    (error: unknown) =>
      (error as StoreError).code === 'STORE_SCHEMA' &&
      /older than this agentward's \(\d+\): run `await store\.migrate\(\)`/.test((error as Error).message),
  );
  await older.migrate();
  assert.deepEqual(await older.sessionOwner!('v1-owned'), owner);
  assert.equal(await older.sessionOwner!('v1-free'), null);
  assert.equal(await older.sessionOwner!('v1-none'), undefined);
  assert.deepEqual((await older.loadSession('v1-owned'))?.owner, owner);
});

test("postgresStore: migrate() brings a version 2 schema to version 3, filling the queue's order of each pending checkpoint", async () => {
  const { store, schema, pool } = await freshStore();
  await store.saveCheckpoint({
    approvalId: 'v2-b',
    sessionId: 's',
    metadata: {},
    createdAt: '2026-01-01T00:00:02.000Z',
  });
  await store.saveCheckpoint({
    approvalId: 'v2-a',
    sessionId: 's',
    metadata: {},
    createdAt: '2026-01-01T00:00:01.000Z',
  });
  // Back to what version 2 wrote: no queue column, version 2 recorded.
  await pool.query(`ALTER TABLE "${schema}".checkpoints DROP COLUMN created_at`);
  await pool.query(`UPDATE "${schema}".meta SET value = '2' WHERE key = 'schema_version'`);
  const older = postgresStore({ client: pool, schema });
  await older.migrate();
  const queue = await older.listPendingApprovals!({ limit: 10 });
  assert.deepEqual(
    queue.map((checkpoint) => checkpoint.approvalId),
    ['v2-a', 'v2-b'],
  );
});

test('postgresStore: a send past approvals.ttlSec denies the expired approval in a turn of its own, then sends (design §33)', async () => {
  const { store } = await freshStore();
  const ran: unknown[] = [];
  const agent = createAgent({
    name: 'ttl',
    model: echoModel(),
    store,
    tools: [
      {
        name: 'deploy',
        description: 'Deploys',
        parameters: { type: 'object' },
        needsApproval: true,
        execute: (a) => (ran.push(a), 'ok'),
      },
    ],
  });
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: apiToken('ttl-token-0123456789abcdef', { id: 'ada' }),
    approvals: { ttlSec: 1 },
  });
  const send = (message: string) =>
    handler(
      new Request('http://localhost/agent', {
        method: 'POST',
        headers: { authorization: 'Bearer ttl-token-0123456789abcdef', 'content-type': 'application/json' },
        body: JSON.stringify({ message, sessionId: 'ttl-session' }),
      }),
    );
  const paused = (await (await send('/tool deploy {"env":"prod"}')).json()) as { approvals: { id: string }[] };
  const approvalId = paused.approvals[0]!.id;
  assert.equal((await send('too soon')).status, 409);
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const sent = await send('hello');
  assert.equal(sent.status, 200, await sent.clone().text());
  assert.equal(((await sent.json()) as { text: string }).text, 'hello');
  assert.deepEqual(ran, []);
  assert.equal(await store.loadCheckpoint(approvalId), undefined);
  const { messages, audit } = await agent.transcript('ttl-session');
  assert.deepEqual(
    [audit[0]?.approvalId, audit[0]?.approved, audit[0]?.reason, audit[0]?.decidedBy],
    [approvalId, false, 'expired', { id: 'ada', authenticator: 'api-token' }],
  );
  assert.deepEqual(
    messages.slice(2).map((m) => m.content),
    ['Denied by the user: expired', 'Tool results: deploy: Denied by the user: expired', 'hello', 'hello'],
  );
});
