// One PostgreSQL pool for the agent's store and its audit log (design §34), against a real server
// (tests/helpers/postgres.ts). Each turn of postgresStore holds a pooled connection while the
// run's audit events are appended, and each append takes another connection of its pool: with the
// store and the log on one pool and as many turns running as the pool has connections, nothing
// proceeds. agentHandler() and serve() refuse that pool at creation; separate pools serve the same
// load; and where the handler cannot see the pool (a store wrapped by the user's code) the log's
// bounded wait for a connection, or for the chain's head, ends the wait instead of hanging.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import type { Store } from '../../src/agent/types.ts';
import { AuthConfigError } from '../../src/auth/index.ts';
import { apiToken } from '../../src/auth/api-token.ts';
import { agentHandler } from '../../src/http/index.ts';
import { serve } from '../../src/node/server.ts';
import { postgresAuditLog, postgresLimitStore, postgresStore, StoreError } from '../../src/postgres/index.ts';
import { POOL_WAIT_MS } from '../../src/postgres/store.ts';
import { startDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { captureConsoleError } from '../helpers/console.ts';
import { readAll, record } from '../helpers/audit-log-contract.ts';

const TOKEN = 'shared-pool-token-0123456789abcdef';
let db: TestDatabase;
before(async () => {
  db = await startDatabase();
});
after(async () => {
  await db?.stop();
});

/** `promise`, or a rejection naming `what` once `ms` passed: a hang fails the test instead of stalling it. */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms (a hang)`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** An agent on `store` with one tool, `tick`, that records its runs; `/tool tick {}` calls it. */
function tickAgent(store: Store) {
  const ran: unknown[] = [];
  const agent = createAgent({
    name: 'shared-pool',
    model: echoModel(),
    store,
    tools: [
      { name: 'tick', description: 'Ticks', parameters: { type: 'object' }, execute: (a) => (ran.push(a), 'ok') },
    ],
  });
  return { agent, ran };
}

/** `count` sends at once, each to its own session, each calling the tool: as many turns running as sends. */
function sendAll(handler: (request: Request) => Promise<Response>, count: number): Promise<Response[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      handler(
        new Request('http://localhost/agent', {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ message: '/tool tick {"n":1}', sessionId: `load-${i}` }),
        }),
      ),
    ),
  );
}

const auth = apiToken(TOKEN, { id: 'ada' });
const sharedMessage = (helper: string) =>
  `${helper}: audit.log and store share one PostgreSQL pool; give the audit log a pool of its own; got the same pool`;

test('one pool for postgresStore and postgresAuditLog: agentHandler() and serve() refuse it at creation, a configuration error', async () => {
  const schema = db.schema();
  const pool = db.pool({ max: 2 });
  const store = postgresStore({ client: pool, schema });
  const log = postgresAuditLog({ client: pool, schema });
  const { agent } = tickAgent(store);
  const refused = (helper: string) => (error: unknown) =>
    error instanceof AuthConfigError &&
    error.code === 'AGENT_AUTH_CONFIG_INVALID' &&
    error.message === sharedMessage(helper);
  assert.throws(() => agentHandler(agent, { auth, audit: { log } }), refused('agentHandler()'));
  assert.throws(() => agentHandler(agent, { auth, audit: { log, required: true } }), refused('agentHandler()'));
  await assert.rejects(async () => {
    const server = await serve({ agent, auth, port: 0, log: 'off', audit: { log } });
    await server.close();
  }, refused('serve()'));
  // serve() building the agent from its options and the store: the same refusal.
  await assert.rejects(async () => {
    const server = await serve({
      agent: { name: 'built', model: echoModel() },
      store,
      auth,
      port: 0,
      log: 'off',
      audit: { log },
    });
    await server.close();
  }, refused('serve()'));
  // The limit store on the store's pool: refused the same way.
  const limitStore = postgresLimitStore({ client: pool, schema });
  assert.throws(
    () => agentHandler(agent, { auth, limits: { requests: { limit: 10, windowSec: 60 }, store: limitStore } }),
    (error: unknown) =>
      error instanceof AuthConfigError &&
      error.message ===
        'agentHandler(): limits.store and store share one PostgreSQL pool; give the limit store a pool of its own; got the same pool',
  );
});

test('one pool for postgresStore and postgresAuditLog under load: refused at creation; with a pool each, more sends than connections all complete', async () => {
  const schema = db.schema();
  const shared = db.pool({ max: 2 });
  const sharedStore = postgresStore({ client: shared, schema });
  await sharedStore.migrate();
  assert.throws(
    () =>
      agentHandler(tickAgent(sharedStore).agent, {
        auth,
        audit: { log: postgresAuditLog({ client: shared, schema }) },
      }),
    AuthConfigError,
  );
  // The answer the error points to: the same load, the log on a pool of its own (as small).
  const store = postgresStore({ client: db.pool({ max: 2 }), schema });
  const log = postgresAuditLog({ client: db.pool({ max: 2 }), schema });
  const { agent, ran } = tickAgent(store);
  const handler = agentHandler(agent, { basePath: '/agent', auth, audit: { log, required: true } });
  const sends = 6;
  const answers = await within(20_000, 'six sends on pools of two', sendAll(handler, sends));
  assert.deepEqual(
    answers.map((answer) => answer.status),
    Array(sends).fill(200),
  );
  assert.equal(ran.length, sends);
  const records = await readAll(log);
  assert.equal(records.filter((r) => r.type === 'tool-call').length, sends, 'each run wrote its tool call');
});

/** A store whose methods are copied into an object of the user's: the handler cannot see its pool. */
const wrapped = (store: Store): Store => Object.fromEntries(Object.entries(store)) as unknown as Store;

test('a shared pool the handler cannot see: the tool-call append gives up within its bound, and the runs complete (failing open, one stderr line)', async () => {
  const schema = db.schema();
  const pool = db.pool({ max: 2 });
  const store = postgresStore({ client: pool, schema, connectTimeout: 60_000 });
  await store.migrate();
  const log = postgresAuditLog({ client: pool, schema });
  const { agent, ran } = tickAgent(wrapped(store));
  const handler = agentHandler(agent, { basePath: '/agent', auth, audit: { log } });
  // Three sends on two connections: two turns hold both, and their appends wait for a third.
  const { result: answers, calls } = await captureConsoleError(() =>
    within(4 * POOL_WAIT_MS, 'three sends on one pool of two', sendAll(handler, 3)),
  );
  assert.deepEqual(
    answers.map((answer) => answer.status),
    [200, 200, 200],
  );
  assert.equal(ran.length, 3, 'failing open, every tool ran');
  assert.equal(calls.length, 1, 'one stderr line');
  assert.match(String(calls[0]!.join(' ')), /the audit log failed .*no database connection became free within 5000 ms/);
});

test('a shared pool the handler cannot see, with audit.required: the run stops before its tool and is answered 503, within the bound', async () => {
  const schema = db.schema();
  const pool = db.pool({ max: 1 });
  const store = postgresStore({ client: pool, schema, connectTimeout: 60_000 });
  await store.migrate();
  const log = postgresAuditLog({ client: pool, schema });
  const { agent, ran } = tickAgent(wrapped(store));
  const handler = agentHandler(agent, { basePath: '/agent', auth, audit: { log, required: true } });
  const { result: answers } = await captureConsoleError(() =>
    within(POOL_WAIT_MS + 10_000, 'one send on a pool of one', sendAll(handler, 1)),
  );
  assert.equal(answers[0]!.status, 503, await answers[0]!.clone().text());
  assert.deepEqual(ran, [], 'the tool did not run');
});

test("postgresAuditLog: a pool whose connections are all held elsewhere: the append fails STORE_UNAVAILABLE after the pool's connectionTimeoutMillis, or POOL_WAIT_MS", async () => {
  const schema = db.schema();
  const setup = postgresAuditLog({ client: db.pool({ max: 1 }), schema });
  await setup.migrate();
  // The pool's own bound, here a stand-in pool that never hands out a connection: the log's timer ends the wait.
  const never = {
    options: { connectionTimeoutMillis: 200 },
    query: () => new Promise<never>(() => {}),
    connect: () => new Promise<never>(() => {}),
  };
  await within(
    5_000,
    'an append on a pool that never connects',
    assert.rejects(
      postgresAuditLog({ client: never, schema }).append(record(1)),
      (error: unknown) =>
        error instanceof StoreError &&
        error.code === 'STORE_UNAVAILABLE' &&
        error.message === 'no database connection became free within 200 ms',
    ),
  );
  // A node-postgres pool of one without connectionTimeoutMillis, its connection held: POOL_WAIT_MS.
  const pool = db.pool({ max: 1 });
  const held = await pool.connect();
  try {
    const started = Date.now();
    await within(
      POOL_WAIT_MS + 5_000,
      'an append on a held pool of one',
      assert.rejects(
        postgresAuditLog({ client: pool, schema }).append(record(1)),
        (error: unknown) =>
          error instanceof StoreError &&
          error.code === 'STORE_UNAVAILABLE' &&
          error.message === `no database connection became free within ${POOL_WAIT_MS} ms`,
      ),
    );
    assert.ok(Date.now() - started >= POOL_WAIT_MS - 50, 'it waited its bound');
  } finally {
    held.release();
  }
  // The connection free again, the log appends: the failed append took no seq.
  const written = await postgresAuditLog({ client: pool, schema }).append(record(2));
  assert.equal(written.seq, 1);
});

test("postgresAuditLog: the chain's head locked by another writer past the bound: the append fails STORE_UNAVAILABLE, takes no seq", async () => {
  const schema = db.schema();
  const pool = db.pool({ max: 2, connectionTimeoutMillis: 300 });
  const log = postgresAuditLog({ client: pool, schema });
  await log.migrate();
  // A writer cut off while it holds the head: another connection's open transaction on the row.
  const holder = await db.pool({ max: 1 }).connect();
  await holder.query(`BEGIN; SELECT seq FROM "${schema}".audit_head WHERE one FOR UPDATE`);
  try {
    await within(
      5_000,
      'an append behind a locked head',
      assert.rejects(
        log.append(record(1)),
        (error: unknown) =>
          error instanceof StoreError &&
          error.code === 'STORE_UNAVAILABLE' &&
          error.message === "postgresAuditLog(): the chain's head stayed locked past 300 ms",
      ),
    );
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
  assert.equal((await log.append(record(2))).seq, 1);
});

test("postgresLimitStore: a pool whose connections are all held elsewhere: a count fails STORE_UNAVAILABLE after the pool's connectionTimeoutMillis, or POOL_WAIT_MS", async () => {
  const schema = db.schema();
  await postgresLimitStore({ client: db.pool({ max: 1 }), schema }).migrate();
  const unavailable = (ms: number) => (error: unknown) =>
    error instanceof StoreError &&
    error.code === 'STORE_UNAVAILABLE' &&
    error.message === `no database connection became free within ${ms} ms`;
  const never = {
    options: { connectionTimeoutMillis: 200 },
    query: () => new Promise<never>(() => {}),
    connect: () => new Promise<never>(() => {}),
  };
  await within(
    5_000,
    'a count on a pool that never connects',
    assert.rejects(postgresLimitStore({ client: never, schema }).hit('k', 60, 1, 10), unavailable(200)),
  );
  const pool = db.pool({ max: 1 });
  const limits = postgresLimitStore({ client: pool, schema });
  const held = await pool.connect();
  try {
    await within(
      POOL_WAIT_MS + 5_000,
      'a reservation on a held pool of one',
      assert.rejects(limits.reserve!('k', 60, 1, 100, 1_000), unavailable(POOL_WAIT_MS)),
    );
  } finally {
    held.release();
  }
  // The connection free again: the reservation that gave up counted nothing.
  assert.deepEqual(
    { allowed: (await limits.hit('k', 60, 0, 10)).allowed, count: (await limits.hit('k', 60, 0, 10)).count },
    { allowed: true, count: 0 },
  );
});
