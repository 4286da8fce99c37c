import { AgentError } from '../agent/errors.ts';
import { keyedQueue } from '../agent/key-queue.ts';
import { withPool } from '../agent/pools.ts';
import { sessionTitle } from '../agent/sessions.ts';
import type { Checkpoint, OwnerKey, SessionRecord, SessionSummary, Store } from '../agent/types.ts';
import { AuthConfigError, checkOptionNames, kindOf } from '../auth/internal.ts';
import { sqlState, StoreError, storeFailure } from './errors.ts';
import { checkSchemaName, createStatements, KEY, SCHEMA_VERSION } from './schema.ts';

type Row = Record<string, unknown>;

/** A connection taken from the pool: node-postgres `PoolClient`, or anything of that shape. */
export interface PgPoolClient {
  query(text: string, values?: unknown[]): Promise<{ rows: Row[] }>;
  /** Gives the connection back; `true` closes it instead (it failed). */
  release(destroy?: boolean): void;
  on?(event: 'error', listener: (error: Error) => void): unknown;
  removeListener?(event: 'error', listener: (error: Error) => void): unknown;
}

/** What the store needs of the driver: a node-postgres `Pool` (or `@neondatabase/serverless`'s) has this shape. */
export interface PgPool {
  query(text: string, values?: unknown[]): Promise<{ rows: Row[] }>;
  connect(): Promise<PgPoolClient>;
  on?(event: 'error', listener: (error: Error) => void): unknown;
}

export interface PostgresStoreOptions {
  /** The pool the store takes its connections from (the caller creates it, and ends it). */
  client: PgPool;
  /** The schema holding the tables: a plain identifier, default `agentward`. */
  schema?: string;
  /** Milliseconds to wait for a free pooled connection before failing with `STORE_UNAVAILABLE`; default 5,000. */
  connectTimeout?: number;
}

/** The PostgreSQL store: a `Store` plus `migrate()`. */
export interface PostgresStore extends Store {
  /** Creates the schema and its tables when missing and records the schema version; idempotent. Refuses a newer schema. */
  migrate(): Promise<void>;
  withSession<T>(sessionId: string, turn: (store: Store) => Promise<T>): Promise<T>;
}

/** The defaults of `postgresStore()`'s options. */
export const POSTGRES_STORE_DEFAULTS: Readonly<{ schema: string; connectTimeout: number }> = Object.freeze({
  schema: 'agentward',
  connectTimeout: 5000,
});

const ignore = () => {};
/** Pools that already have the store's `error` listener. */
const listened = new WeakSet<object>();

/** An idle pooled connection that drops reports on the pool: an unheard `error` event would crash Node. One listener per pool. */
export function hearErrors(pool: Pick<PgPool, 'on'>): void {
  if (typeof pool.on === 'function' && !listened.has(pool)) {
    listened.add(pool);
    pool.on('error', ignore);
  }
}

/**
 * Milliseconds a write made inside a turn (an audit log's append, a limit store's statement)
 * waits for a connection of its pool, and an append for the chain's head row, when the pool sets
 * no `connectionTimeoutMillis` of its own: `connectTimeout`'s default. Such a write holds its
 * connection a few milliseconds (a count 0.4 to 1.6 ms; an append about 3 ms with fsync on: on a
 * shared 2-core machine 64 appenders queued on a pool of 4 waited at most 0.44 s, p99 0.41 s), so
 * a queue of writers stays far below it; a wait this long is a pool whose every connection is
 * held by turns waiting for this very write (a log or limit store on the store's pool), or a
 * writer cut off holding the head. The write then fails, as one that cannot be written, instead
 * of waiting for ever.
 */
export const POOL_WAIT_MS = 5_000;

/** The pool's own `connectionTimeoutMillis` (a node-postgres `Pool` keeps its options), when it sets one; else `POOL_WAIT_MS`. */
export function poolWait(pool: object): number {
  const own = (pool as { options?: { connectionTimeoutMillis?: unknown } }).options?.connectionTimeoutMillis;
  return typeof own === 'number' && Number.isFinite(own) && own > 0 ? Math.ceil(own) : POOL_WAIT_MS;
}

/**
 * A connection of `pool` within `ms`, else `StoreError` `STORE_UNAVAILABLE`: a wait for a pool
 * whose connections are all held never lasts for ever. One that comes after the wait ended goes
 * straight back to the pool; what `connect()` rejects with is thrown as `storeFailure` says.
 */
export function connectWithin(pool: Pick<PgPool, 'connect'>, ms: number): Promise<PgPoolClient> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      reject(new StoreError('STORE_UNAVAILABLE', `no database connection became free within ${ms} ms`));
    }, ms);
    pool.connect().then(
      (conn) => {
        if (settled) return conn.release();
        settled = true;
        clearTimeout(timer);
        resolve(conn);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(storeFailure(error));
      },
    );
  });
}

/**
 * The options of a store that needs only a pool and a schema (`postgresLimitStore`,
 * `postgresReplayStore`), checked: closed, `client` with `query()`, `schema` a plain identifier
 * (returned as it is and quoted, as `s`). The pool's `error` events are heard from here on.
 */
export function poolOptions<Client extends Pick<PgPool, 'query' | 'on'>>(
  helper: string,
  options: { client: Client; schema?: string },
): { client: Client; schema: string; s: string } {
  if (typeof options !== 'object' || options === null)
    throw new AuthConfigError(`${helper}: options must be { client, schema? }`);
  checkOptionNames(helper, options, ['client', 'schema']);
  const { client, schema = POSTGRES_STORE_DEFAULTS.schema } = options;
  if (typeof client?.query !== 'function')
    throw new AuthConfigError(`${helper}: client must be a node-postgres Pool (or anything with query())`);
  const s = checkSchemaName(schema, helper);
  hearErrors(client);
  return { client, schema, s };
}

/** A string as JSON escapes it, without the quotes: never NUL nor a lone surrogate, so PostgreSQL text holds it. */
function escapeText(value: unknown, what: string): string {
  if (typeof value !== 'string')
    throw new AgentError('INVALID_INPUT', `postgresStore(): ${what} must be a string; got ${kindOf(value)}`);
  return JSON.stringify(value).slice(1, -1);
}
const unescapeText = (text: unknown): string => JSON.parse(`"${String(text)}"`) as string;
const ownerText = (owner: unknown): string | null => (Array.isArray(owner) ? JSON.stringify(owner) : null);

/**
 * A `Store` on PostgreSQL (design §10), for any number of server processes on one database.
 * Zero dependencies: `client` is the caller's node-postgres `Pool` (or anything of that shape),
 * and nothing here needs Node, so it also runs on Workers behind a fetch-based driver.
 *
 * Values only ever reach SQL as parameters (`$1…`); the schema name, checked to be a plain
 * identifier, is the only configuration in the SQL text. `await store.migrate()` creates the
 * tables; every other call first checks (once per store, and again after a lost connection)
 * that the schema exists at a version this agentward knows, else fails with `STORE_SCHEMA`.
 *
 * One turn of a session (`withSession`, which the agent uses for every send, decision and
 * deletion) runs in one transaction on one connection holding a transaction-scoped advisory
 * lock on the session: turns of a session are serialized across processes and the turn's
 * writes commit together or not at all. So the pool's size bounds the turns that run at once
 * (each holds a connection while the model answers; within a process, turns of one session
 * queue without holding one). A lost connection, a database restart or no free connection
 * within `connectTimeout` fails the call with `StoreError` `STORE_UNAVAILABLE` (HTTP 503);
 * the next call uses a fresh connection. Side effects of tools that ran in a turn that is
 * then rolled back are the tools' own.
 * @example
 * import pg from 'pg';
 * const store = postgresStore({ client: new pg.Pool({ connectionString: databaseUrl, max: 20 }) });
 * await store.migrate();
 * const agent = createAgent({ name: 'support', model, store });
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  if (typeof options !== 'object' || options === null)
    throw new AuthConfigError('postgresStore(): options must be { client, schema?, connectTimeout? }');
  checkOptionNames('postgresStore()', options, ['client', 'schema', 'connectTimeout']);
  const {
    client: pool,
    schema = POSTGRES_STORE_DEFAULTS.schema,
    connectTimeout = POSTGRES_STORE_DEFAULTS.connectTimeout,
  } = options;
  if (typeof pool?.query !== 'function' || typeof pool.connect !== 'function') {
    throw new AuthConfigError(
      'postgresStore(): client must be a node-postgres Pool (or anything with query() and connect())',
    );
  }
  if (typeof connectTimeout !== 'number' || !(connectTimeout > 0) || !Number.isFinite(connectTimeout)) {
    throw new AuthConfigError('postgresStore(): connectTimeout must be a positive number of milliseconds');
  }
  const s = checkSchemaName(schema);
  hearErrors(pool);

  /** A pooled connection within `connectTimeout`, listened to while it is ours. */
  async function lease(): Promise<{ conn: PgPoolClient; done(failed: boolean): void }> {
    const conn = await connectWithin(pool, connectTimeout);
    conn.on?.('error', ignore);
    return {
      conn,
      done(failed) {
        conn.removeListener?.('error', ignore);
        // A connection that failed is closed, never handed to the next caller.
        conn.release(failed || undefined);
      },
    };
  }

  let ready: Promise<void> | undefined;
  const unavailable = (error: unknown) => error instanceof StoreError && error.code === 'STORE_UNAVAILABLE';

  async function query(conn: PgPoolClient, text: string, values: unknown[] = []): Promise<Row[]> {
    try {
      return (await conn.query(text, values)).rows;
    } catch (error) {
      const failure = storeFailure(error);
      if (unavailable(failure)) ready = undefined;
      throw failure;
    }
  }

  async function withConnection<T>(body: (conn: PgPoolClient) => Promise<T>): Promise<T> {
    const { conn, done } = await lease();
    let failed = false;
    try {
      return await body(conn);
    } catch (error) {
      failed = unavailable(error);
      throw error;
    } finally {
      done(failed);
    }
  }

  /** The version recorded in the schema, `undefined` when it has none; fails when the tables are missing. */
  async function recordedVersion(conn: PgPoolClient): Promise<number | undefined> {
    let rows: Row[];
    try {
      rows = await query(conn, `SELECT value FROM ${s}.meta WHERE key = $1`, ['schema_version']);
    } catch (error) {
      const state = sqlState(error);
      if (state === '42P01' || state === '3F000')
        throw new StoreError(
          'STORE_SCHEMA',
          `postgresStore(): schema ${schema} has no agentward tables: run \`await store.migrate()\` once first`,
          { cause: error },
        );
      throw error;
    }
    return rows.length === 0 ? undefined : Number(rows[0]!.value);
  }

  const tooNew = (version: number) =>
    new StoreError(
      'STORE_SCHEMA',
      `postgresStore(): schema ${schema} is at version ${version}, newer than this agentward knows (${SCHEMA_VERSION}): upgrade agentward; migrate() never downgrades a schema`,
    );

  function checked(): Promise<void> {
    return (ready ??= withConnection(async (conn) => {
      const version = await recordedVersion(conn);
      if (version !== undefined && version > SCHEMA_VERSION) throw tooNew(version);
      if (version !== SCHEMA_VERSION)
        throw new StoreError(
          'STORE_SCHEMA',
          `postgresStore(): schema ${schema} is at version ${version ?? 'none'}, older than this agentward's (${SCHEMA_VERSION}): run \`await store.migrate()\``,
        );
    }).catch((error: unknown) => {
      ready = undefined;
      throw error;
    }));
  }

  /** Runs `body` inside one transaction on `conn`; rolls back when it fails. */
  async function transaction<T>(conn: PgPoolClient, body: () => Promise<T>): Promise<T> {
    await query(conn, 'BEGIN');
    try {
      const result = await body();
      await query(conn, 'COMMIT');
      return result;
    } catch (error) {
      try {
        await conn.query('ROLLBACK');
      } catch (rollbackFailure) {
        // The connection is gone (the server rolls the transaction back itself): it is closed, not reused.
        ready = undefined;
        throw unavailable(error)
          ? error
          : new StoreError('STORE_UNAVAILABLE', 'the database is unavailable', { cause: rollbackFailure });
      }
      throw error;
    }
  }

  /** The store's calls, each one statement run by `run`. */
  function operations(run: (text: string, values: unknown[]) => Promise<Row[]>): Store {
    return {
      async loadSession(id) {
        const rows = await run(`SELECT record FROM ${s}.sessions WHERE key = ${KEY(1)}`, [
          escapeText(id, 'a session id'),
        ]);
        return rows.length === 0 ? undefined : (JSON.parse(String(rows[0]!.record)) as SessionRecord);
      },
      async sessionOwner(id) {
        const rows = await run(`SELECT owner FROM ${s}.sessions WHERE key = ${KEY(1)}`, [
          escapeText(id, 'a session id'),
        ]);
        if (rows.length === 0) return undefined;
        const owner = rows[0]!.owner;
        return typeof owner === 'string' ? (JSON.parse(owner) as OwnerKey) : null;
      },
      async saveSession(record) {
        const title = record.title ?? sessionTitle(record.messages);
        const owner = ownerText(record.owner);
        await run(
          `INSERT INTO ${s}.sessions (key, id, owner_key, owner, created_at, updated_at, title, record)
           VALUES (${KEY(1)}, $1, CASE WHEN $2::text IS NULL THEN NULL ELSE ${KEY(2)} END, $2, $3, $4, $5, $6)
           ON CONFLICT (key) DO UPDATE SET owner_key = EXCLUDED.owner_key, owner = EXCLUDED.owner, created_at = EXCLUDED.created_at,
             updated_at = EXCLUDED.updated_at, title = EXCLUDED.title, record = EXCLUDED.record`,
          [
            escapeText(record.id, 'a session id'),
            owner,
            escapeText(record.createdAt, 'createdAt'),
            escapeText(record.updatedAt, 'updatedAt'),
            escapeText(title, 'title'),
            JSON.stringify(record),
          ],
        );
      },
      async loadCheckpoint(approvalId) {
        const rows = await run(`SELECT body FROM ${s}.checkpoints WHERE key = ${KEY(1)}`, [
          escapeText(approvalId, 'an approval id'),
        ]);
        return rows.length === 0 ? undefined : (JSON.parse(String(rows[0]!.body)) as Checkpoint);
      },
      async saveCheckpoint(checkpoint) {
        await run(
          `INSERT INTO ${s}.checkpoints (key, session_key, owner_key, body, created_at)
           VALUES (${KEY(1)}, ${KEY(2)}, CASE WHEN $3::text IS NULL THEN NULL ELSE ${KEY(3)} END, $4, $5)
           ON CONFLICT (key) DO UPDATE SET session_key = EXCLUDED.session_key, owner_key = EXCLUDED.owner_key, body = EXCLUDED.body,
             created_at = EXCLUDED.created_at`,
          [
            escapeText(checkpoint.approvalId, 'an approval id'),
            escapeText(checkpoint.sessionId, 'a session id'),
            ownerText(checkpoint.owner),
            JSON.stringify(checkpoint),
            escapeText(checkpoint.createdAt ?? '', 'createdAt'),
          ],
        );
      },
      async deleteCheckpoint(approvalId) {
        // One statement: of concurrent callers, only the one whose DELETE removed the row sees it.
        const rows = await run(`DELETE FROM ${s}.checkpoints WHERE key = ${KEY(1)} RETURNING 1 AS gone`, [
          escapeText(approvalId, 'an approval id'),
        ]);
        return rows.length === 1;
      },
      async listCheckpoints(sessionId) {
        const rows = await run(`SELECT body FROM ${s}.checkpoints WHERE session_key = ${KEY(1)} ORDER BY key`, [
          escapeText(sessionId, 'a session id'),
        ]);
        return rows.map((row) => JSON.parse(String(row.body)) as Checkpoint);
      },
      // The queue (design §33): an index on (created_at, key), an owner's on (owner_key, created_at, key).
      // Ties in created_at go by key, the approval id's SHA-256: the cursor's approval id names its place.
      async listPendingApprovals(query) {
        const after = query.after;
        const rows = await run(
          `SELECT body FROM ${s}.checkpoints
           WHERE ($1::text IS NULL OR owner_key = CASE WHEN $1::text IS NULL THEN NULL ELSE ${KEY(1)} END)
             AND ($2::text IS NULL OR (created_at, key) > ($2::text COLLATE "C", ${KEY(3)}))
           ORDER BY created_at, key LIMIT $4`,
          [
            query.owner === undefined ? null : ownerText(query.owner),
            after === undefined ? null : escapeText(after.createdAt, 'a cursor'),
            after === undefined ? null : escapeText(after.approvalId, 'a cursor'),
            query.limit,
          ],
        );
        return rows.map((row) => JSON.parse(String(row.body)) as Checkpoint);
      },
      async countCheckpoints(owner: OwnerKey) {
        const rows = await run(`SELECT count(*)::int AS n FROM ${s}.checkpoints WHERE owner_key = ${KEY(1)}`, [
          ownerText(owner),
        ]);
        return Number(rows[0]?.n ?? 0);
      },
      async loadMemory(namespace) {
        const rows = await run(`SELECT note FROM ${s}.memory WHERE namespace_key = ${KEY(1)} ORDER BY seq`, [
          escapeText(namespace, 'a memory namespace'),
        ]);
        return rows.map((row) => unescapeText(row.note));
      },
      async appendMemory(namespace, note) {
        await run(`INSERT INTO ${s}.memory (namespace_key, note) VALUES (${KEY(1)}, $2)`, [
          escapeText(namespace, 'a memory namespace'),
          escapeText(note, 'a memory note'),
        ]);
      },
      async listSessions(query) {
        const { owner, limit, after } = query;
        const columns = `SELECT id, created_at, updated_at, title, (SELECT count(*)::int FROM ${s}.checkpoints c WHERE c.session_key = x.key) AS pending
          FROM ${s}.sessions x WHERE owner_key = ${KEY(1)}`;
        const order = 'ORDER BY updated_at DESC, id DESC LIMIT $2';
        const rows =
          after === undefined
            ? await run(`${columns} ${order}`, [ownerText(owner), limit])
            : await run(`${columns} AND (updated_at, id) < ($3, $4) ${order}`, [
                ownerText(owner),
                limit,
                escapeText(after.updatedAt, 'after.updatedAt'),
                escapeText(after.id, 'after.id'),
              ]);
        return rows.map(
          (row): SessionSummary => ({
            id: unescapeText(row.id),
            createdAt: unescapeText(row.created_at),
            updatedAt: unescapeText(row.updated_at),
            title: unescapeText(row.title),
            pendingApprovals: Number(row.pending),
          }),
        );
      },
      async deleteSession(id) {
        // One statement, so the session and its checkpoints go together.
        const rows = await run(
          `WITH gone_checkpoints AS (DELETE FROM ${s}.checkpoints WHERE session_key = ${KEY(1)} RETURNING 1),
                gone_session AS (DELETE FROM ${s}.sessions WHERE key = ${KEY(1)} RETURNING 1)
           SELECT ((SELECT count(*) FROM gone_checkpoints) + (SELECT count(*) FROM gone_session))::int AS n`,
          [escapeText(id, 'a session id')],
        );
        return Number(rows[0]?.n ?? 0) > 0;
      },
    };
  }

  /**
   * Version 2: the owner column of sessions a version 1 store wrote, read from their records
   * here (PostgreSQL's own JSON functions refuse the \u0000 a record may hold), in key order.
   */
  async function fillOwners(conn: PgPoolClient): Promise<void> {
    let after: unknown = null;
    for (;;) {
      const rows = await query(
        conn,
        `SELECT key, record FROM ${s}.sessions WHERE owner IS NULL AND owner_key IS NOT NULL AND ($1::bytea IS NULL OR key > $1) ORDER BY key LIMIT 100`,
        [after],
      );
      if (rows.length === 0) return;
      for (const row of rows) {
        await query(conn, `UPDATE ${s}.sessions SET owner = $2 WHERE key = $1`, [
          row.key,
          ownerText((JSON.parse(String(row.record)) as SessionRecord).owner),
        ]);
      }
      after = rows.at(-1)!.key;
    }
  }

  const pooled = operations(async (text, values) => {
    await checked();
    return withConnection((conn) => query(conn, text, values));
  });
  const local = keyedQueue();

  const store: PostgresStore = {
    ...pooled,
    async migrate() {
      await withConnection((conn) =>
        transaction(conn, async () => {
          // Concurrent migrations (several processes starting at once) take turns.
          await query(conn, 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`agentward migrate ${schema}`]);
          const [exists] = await query(conn, 'SELECT to_regclass($1) IS NOT NULL AS found', [`${schema}.meta`]);
          const version = exists?.found === true ? await recordedVersion(conn) : undefined;
          if (version !== undefined && version > SCHEMA_VERSION) throw tooNew(version);
          for (const statement of createStatements(s)) await query(conn, statement);
          await fillOwners(conn);
          await query(
            conn,
            `INSERT INTO ${s}.meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
            ['schema_version', String(SCHEMA_VERSION)],
          );
        }),
      );
      ready = Promise.resolve();
    },
    withSession(sessionId, turn) {
      const lockKey = `${schema}:${escapeText(sessionId, 'a session id')}`;
      // Within this process turns of a session queue here, so only one of them holds a connection.
      return local(sessionId, async () => {
        await checked();
        return withConnection((conn) =>
          transaction(conn, async () => {
            await query(conn, 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [lockKey]);
            return turn(operations((text, values) => query(conn, text, values)));
          }),
        );
      });
    },
  };
  // The pool each turn holds a connection of: agentHandler() refuses an audit log or limit store on it.
  return withPool(store, pool);
}
