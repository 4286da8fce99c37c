// The audit log on PostgreSQL (design §34): one hash chain for every process on one database.
import { type AuditKey, type ChainedRecord, chainHasher, chainRecord } from '../agent/audit-chain.ts';
import { type AuditLog, readRange } from '../agent/audit-log.ts';
import { AuthConfigError, checkOptionNames } from '../auth/internal.ts';
import { sqlState, StoreError, storeFailure } from './errors.ts';
import { auditStatements, checkSchemaName } from './schema.ts';
import {
  connectWithin,
  hearErrors,
  type PgPool,
  type PgPoolClient,
  poolWait,
  POSTGRES_STORE_DEFAULTS,
} from './store.ts';
import { withPool } from '../agent/pools.ts';

export interface PostgresAuditLogOptions {
  /** The pool (the caller creates it, and ends it): node-postgres `Pool`, or anything with `query()` and `connect()`; never the store's. */
  client: PgPool;
  /** The schema holding the tables `audit_log` and `audit_head`: a plain identifier, default `agentward`. */
  schema?: string;
  /** A secret of at least 32 bytes: each `hash` is then an HMAC-SHA-256 under it, which whoever writes the table cannot rebuild. */
  key?: AuditKey;
}

/** An audit log on PostgreSQL, plus `migrate()`. */
export interface PostgresAuditLog extends AuditLog {
  /** Creates the schema and the tables when missing; idempotent. `postgresStore`'s `migrate()` creates them too. */
  migrate(): Promise<void>;
}

/** Records one `read()` query fetches at a time. */
const PAGE = 500;

const ignore = () => {};

/**
 * An audit log (design §34) in PostgreSQL, shared by every server process on one database: one
 * chain, never a fork. An append runs in one transaction that first locks the chain's head (one
 * row, `SELECT … FOR UPDATE`), so writers from any process take turns: each reads the last
 * `seq` and `hash`, hashes its record after it (in the process: the key never reaches the
 * database), inserts it and moves the head, and commits. A failed append leaves no record and no
 * gap. `read()` pages through the records in `seq` order. A lost database fails with
 * `StoreError` `STORE_UNAVAILABLE`; tables not made yet with `STORE_SCHEMA` (run `migrate()`).
 * Give it a pool of its own, never `postgresStore`'s: a turn holds a connection of the store's
 * pool while its events are appended (`agentHandler()` refuses that pool). An append waits for a
 * connection, and for the head, at most the pool's `connectionTimeoutMillis` (else
 * `POOL_WAIT_MS`), then fails with `STORE_UNAVAILABLE`.
 * @example
 * const log = postgresAuditLog({ client: new pg.Pool({ connectionString, max: 4 }), key: env.AUDIT_KEY });
 * await log.migrate();
 */
export function postgresAuditLog(options: PostgresAuditLogOptions): PostgresAuditLog {
  const helper = 'postgresAuditLog()';
  if (typeof options !== 'object' || options === null)
    throw new AuthConfigError(`${helper}: options must be { client, schema?, key? }`);
  checkOptionNames(helper, options, ['client', 'schema', 'key']);
  const { client, schema = POSTGRES_STORE_DEFAULTS.schema, key } = options;
  if (typeof client?.query !== 'function' || typeof client.connect !== 'function')
    throw new AuthConfigError(
      `${helper}: client must be a node-postgres Pool (or anything with query() and connect())`,
    );
  const s = checkSchemaName(schema, helper);
  const hasher = chainHasher(helper, key);
  hearErrors(client);
  const wait = poolWait(client);

  const failure = (error: unknown) => {
    const state = sqlState(error);
    // 42P01: no such table; 3F000: no such schema.
    if (state === '42P01' || state === '3F000')
      return new StoreError('STORE_SCHEMA', `${helper}: its tables are missing; run migrate()`, { cause: error });
    // 55P03: lock_timeout, the head row stayed locked past the wait.
    if (state === '55P03')
      return new StoreError('STORE_UNAVAILABLE', `${helper}: the chain's head stayed locked past ${wait} ms`, {
        cause: error,
      });
    return storeFailure(error);
  };

  async function query(text: string, values: unknown[] = [], on: Pick<PgPool, 'query'> = client) {
    try {
      return (await on.query(text, values)).rows;
    } catch (error) {
      throw failure(error);
    }
  }

  /** Runs `body` in one transaction on one pooled connection; rolls back (or drops the connection) when it fails. */
  async function transaction<T>(body: (conn: PgPoolClient) => Promise<T>): Promise<T> {
    const conn = await connectWithin(client, wait);
    conn.on?.('error', ignore);
    let broken = false;
    try {
      // The wait for the head row is bounded too (`wait` is a whole number of milliseconds, not a value).
      await query(`BEGIN; SET LOCAL lock_timeout = ${wait}`, [], conn);
      const result = await body(conn);
      await query('COMMIT', [], conn);
      return result;
    } catch (error) {
      try {
        await conn.query('ROLLBACK');
      } catch {
        broken = true;
      }
      throw error;
    } finally {
      conn.removeListener?.('error', ignore);
      conn.release(broken || undefined);
    }
  }

  const log: PostgresAuditLog = {
    async migrate() {
      // The lock the other stores' migrate() take: processes starting at once take turns.
      // (The schema name is a checked plain identifier: it may stand in the literal.)
      await query(
        [
          `SELECT pg_advisory_xact_lock(hashtextextended('agentward migrate ${schema}', 0))`,
          ...auditStatements(s),
        ].join(';\n'),
      );
    },
    append(record) {
      return transaction(async (conn) => {
        const [head] = await query(`SELECT seq, hash FROM ${s}.audit_head WHERE one FOR UPDATE`, [], conn);
        if (head === undefined)
          throw new StoreError('STORE_SCHEMA', `${helper}: the chain's head row is missing; run migrate()`);
        const chained = await chainRecord(record, Number(head.seq) + 1, String(head.hash), hasher);
        await query(
          `WITH added AS (INSERT INTO ${s}.audit_log (seq, time, record) VALUES ($1, $2, $3) RETURNING seq)
           UPDATE ${s}.audit_head SET seq = (SELECT seq FROM added), hash = $4 WHERE one`,
          [chained.seq, new Date(chained.time as string).toISOString(), JSON.stringify(chained), chained.hash],
          conn,
        );
        return chained;
      });
    },
    async *read(readOptions) {
      const range = readRange(readOptions);
      const bound = (ms: number) =>
        Number.isFinite(ms) ? new Date(ms).toISOString() : ms > 0 ? 'infinity' : '-infinity';
      let from = range.fromSeq;
      for (;;) {
        const rows = await query(
          `SELECT seq, record FROM ${s}.audit_log WHERE seq >= $1 AND time >= $2::timestamptz AND time < $3::timestamptz ORDER BY seq LIMIT ${PAGE}`,
          [from, bound(range.since), bound(range.until)],
        );
        for (const row of rows) yield JSON.parse(String(row.record)) as ChainedRecord;
        if (rows.length < PAGE) return;
        from = Number(rows[rows.length - 1]!.seq) + 1;
      }
    },
    async head() {
      const [row] = await query(`SELECT seq, hash FROM ${s}.audit_head WHERE one`);
      if (row === undefined || Number(row.seq) === 0) return undefined;
      return { seq: Number(row.seq), hash: String(row.hash) };
    },
  };
  // Its pool: agentHandler() refuses an audit log on the pool whose connection a postgresStore's turn holds.
  return withPool(log, client);
}
