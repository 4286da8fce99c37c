// The limit store on PostgreSQL (design §22, §25): the counters of `limits` shared by every process
// on one database, so several instances behind a load balancer hold one budget exactly.
import { withPool } from '../agent/pools.ts';
import type { LimitStore } from '../http/limit-store.ts';
import { sqlState, StoreError, storeFailure } from './errors.ts';
import { connectWithin, poolOptions, poolWait, type PgPool } from './store.ts';

export interface PostgresLimitStoreOptions {
  /**
   * The pool (the caller creates it, and ends it): node-postgres `Pool`, or anything with `query()`.
   * Give it a pool of its own: a turn of `postgresStore` holds its connection while its tokens are
   * reserved and settled, so a pool shared with it and full of turns would wait for itself
   * (`agentHandler()` refuses the store's pool). A statement waits for a connection at most the
   * pool's `connectionTimeoutMillis`, else 5,000 ms, then fails with `STORE_UNAVAILABLE`.
   */
  client: Pick<PgPool, 'query' | 'on'> & Partial<Pick<PgPool, 'connect'>>;
  /** The schema holding the tables `limit_windows` and `limit_slots`: a plain identifier, default `agentward`. */
  schema?: string;
}

/** A limit store on PostgreSQL, plus `migrate()`. */
export interface PostgresLimitStore extends LimitStore {
  /** Creates the schema and the tables when missing; idempotent. */
  migrate(): Promise<void>;
}

const ignore = () => {};

/** Windows that ended and slots without a live lease are deleted on one call in this many. */
const PURGE_EVERY = 1_000;

/** The database's clock, in seconds: one clock for every instance. */
const NOW = 'extract(epoch FROM clock_timestamp())::float8';
/** The row key of parameter `$1` (the store key as JSON text, so no NUL and no lone surrogate): its SHA-256. */
const KEY = "sha256(convert_to($1::text, 'UTF8'))";
/**
 * The clock of a writing statement, which also commits it without waiting for the WAL to reach
 * the disk (`synchronous_commit` off for its own transaction): a count, and the row lock it holds,
 * are several times shorter (docs/design.md §30, "Speed tricks and what they bought"). Atomicity and visibility are the
 * same; a database crash may forget the counts of its last moments, never half of one.
 */
const CLOCK = `clock AS (SELECT ${NOW} AS now, set_config('synchronous_commit', 'off', true) AS commit_mode)`;
/** Adds `excluded.count` to the row's window, or starts the current window with it when the row's has ended. */
const ADD = `count = CASE WHEN w.start >= excluded.start THEN w.count + excluded.count ELSE excluded.count END,
             start = greatest(w.start, excluded.start),
             ends_at = greatest(w.ends_at, excluded.ends_at)`;

/** The row key's text of one key's window of `windowSec`: one key's windows of different lengths never share a row. */
const windowName = (key: string, windowSec: number) => `${windowSec} ${JSON.stringify(key)}`;

/** The window a row of `{ count, start, now }` holds now: its count, or 0 where it has ended (or there is none). */
function current(row: Record<string, unknown>, windowSec: number) {
  const now = Number(row.now);
  const start = Math.floor(now / windowSec) * windowSec;
  const live = row.start !== null && Number(row.start) >= start;
  return { count: live ? Number(row.count) : 0, resetSec: start + windowSec - now, start };
}

/**
 * The counters of the route handler's `limits` (design §22) in PostgreSQL, for any number of
 * server processes on one database. Fixed windows on the database's clock (aligned to multiples
 * of their length), so instances whose clocks differ still count into the same window. Every
 * check is one statement, atomic on its own: an `INSERT … ON CONFLICT DO UPDATE … WHERE` adds to
 * a window only while it stays within its limit (a reservation also counts as much of its
 * `more` as fits, and keeps what it counted in the row's `reserved`), and takes a concurrency slot only while fewer
 * than the limit are held (a slot is a lease that ends `ttlSec` after it was last taken, so a
 * process that died holding slots gives them back); a settle is one `UPDATE` of the window it
 * names, or an `INSERT` into the current one when that has ended. A read writes nothing. Keys
 * are stored as their SHA-256. A lost
 * database answers `StoreError` `STORE_UNAVAILABLE` (the route answers 503).
 * @example
 * const limitStore = postgresLimitStore({ client: new pg.Pool({ connectionString, max: 4 }) });
 * await limitStore.migrate();
 * agentHandler(agent, { auth, limits: { requests: { limit: 60, windowSec: 60 }, store: limitStore } });
 */
export function postgresLimitStore(options: PostgresLimitStoreOptions): PostgresLimitStore {
  const { client, schema, s } = poolOptions('postgresLimitStore()', options);
  const wait = poolWait(client);
  let calls = 0;

  /**
   * One statement on a connection taken within `wait` (a count is written inside a turn: a pool
   * whose connections the turns hold never keeps it waiting for ever), or with `query()` on a
   * pool without `connect()`. A connection that failed is closed, never handed to the next caller.
   */
  async function statement(text: string, values?: unknown[]): Promise<Record<string, unknown>[]> {
    if (typeof client.connect !== 'function') return (await client.query(text, values)).rows;
    const conn = await connectWithin(client as Pick<PgPool, 'connect'>, wait);
    conn.on?.('error', ignore);
    let failed = false;
    try {
      return (await conn.query(text, values)).rows;
    } catch (error) {
      failed = sqlState(error) === undefined;
      throw error;
    } finally {
      conn.removeListener?.('error', ignore);
      conn.release(failed || undefined);
    }
  }

  async function query(text: string, values: unknown[]): Promise<Record<string, unknown>[]> {
    try {
      if (++calls % PURGE_EVERY === 0) {
        await statement(`DELETE FROM ${s}.limit_windows WHERE ends_at < ${NOW}`);
        await statement(
          `DELETE FROM ${s}.limit_slots WHERE NOT EXISTS (SELECT FROM jsonb_each(leases) AS lease(id, ends) WHERE ends::float8 > ${NOW})`,
        );
      }
      return await statement(text, values);
    } catch (error) {
      // 42P01: no such table; 3F000: no such schema; 42703: no such column (a table from before reserve()).
      const state = sqlState(error);
      if (state === '42P01' || state === '3F000' || state === '42703')
        throw new StoreError('STORE_SCHEMA', 'postgresLimitStore(): its tables are missing; run migrate()', {
          cause: error,
        });
      throw storeFailure(error);
    }
  }

  const store: PostgresLimitStore = {
    async migrate() {
      // The lock postgresStore's and postgresReplayStore's migrate() take: processes starting at once take turns.
      // (The schema name is a checked plain identifier: it may stand in the literal.)
      try {
        await client.query(
          [
            `SELECT pg_advisory_xact_lock(hashtextextended('agentward migrate ${schema}', 0))`,
            `CREATE SCHEMA IF NOT EXISTS ${s}`,
            `CREATE TABLE IF NOT EXISTS ${s}.limit_windows (key bytea PRIMARY KEY, start bigint NOT NULL, count bigint NOT NULL, ends_at bigint NOT NULL)`,
            `CREATE INDEX IF NOT EXISTS limit_windows_by_end ON ${s}.limit_windows (ends_at)`,
            // What the last reserve() counted (design §25): its statement answers it, as RETURNING sees only the new row.
            `ALTER TABLE ${s}.limit_windows ADD COLUMN IF NOT EXISTS reserved bigint NOT NULL DEFAULT 0`,
            // The slots of a key: lease id → when it ends (epoch seconds), in one row, so one row lock orders the takers.
            `CREATE TABLE IF NOT EXISTS ${s}.limit_slots (key bytea PRIMARY KEY, leases jsonb NOT NULL)`,
          ].join(';\n'),
        );
      } catch (error) {
        throw storeFailure(error);
      }
    },
    async hit(key, windowSec, cost, limit) {
      const k = windowName(key, windowSec);
      if (cost === 0) {
        // A read: no row is written or locked.
        const [row] = await query(
          `SELECT w.start, w.count, ${NOW} AS now FROM (SELECT) AS one LEFT JOIN ${s}.limit_windows AS w ON w.key = ${KEY}`,
          [k],
        );
        const counted = current(row!, windowSec);
        return { ...counted, allowed: counted.count <= limit };
      }
      const [row] = await query(
        `WITH ${CLOCK},
         counted AS (
           INSERT INTO ${s}.limit_windows AS w (key, start, count, ends_at)
           SELECT ${KEY}, floor(now / $2::bigint)::bigint * $2::bigint, $3::bigint, floor(now / $2::bigint)::bigint * $2::bigint + $2::bigint FROM clock WHERE $3::bigint <= $4::bigint
           ON CONFLICT (key) DO UPDATE SET ${ADD}
           WHERE CASE WHEN w.start >= excluded.start THEN w.count ELSE 0 END + excluded.count <= $4::bigint
           RETURNING count, start
         )
         SELECT counted.count, counted.start, clock.now, was.count AS was_count, was.start AS was_start
         FROM clock LEFT JOIN counted ON true LEFT JOIN ${s}.limit_windows AS was ON was.key = ${KEY}`,
        [k, windowSec, cost, limit],
      );
      if (row!.count === null) {
        // Refused: the count as the statement's snapshot saw it, at least the least count that refuses.
        const seen = current({ count: row!.was_count, start: row!.was_start, now: row!.now }, windowSec);
        return { ...seen, allowed: false, count: Math.max(limit - cost + 1, seen.count) };
      }
      return { ...current(row!, windowSec), allowed: true };
    },
    async reserve(key, windowSec, cost, more, limit) {
      // The window's count now ($was, 0 when it has ended); what is counted: cost and as much of more as fits.
      const was = 'CASE WHEN w.start >= excluded.start THEN w.count ELSE 0 END';
      const [row] = await query(
        `WITH ${CLOCK},
         counted AS (
           INSERT INTO ${s}.limit_windows AS w (key, start, count, ends_at, reserved)
           SELECT ${KEY}, floor(now / $2::bigint)::bigint * $2::bigint, $3::bigint + least($5::bigint, $4::bigint - $3::bigint),
                  floor(now / $2::bigint)::bigint * $2::bigint + $2::bigint, $3::bigint + least($5::bigint, $4::bigint - $3::bigint)
           FROM clock WHERE $3::bigint <= $4::bigint
           ON CONFLICT (key) DO UPDATE SET
             count = ${was} + $3::bigint + least($5::bigint, $4::bigint - ${was} - $3::bigint),
             reserved = $3::bigint + least($5::bigint, $4::bigint - ${was} - $3::bigint),
             start = greatest(w.start, excluded.start),
             ends_at = greatest(w.ends_at, excluded.ends_at)
           WHERE ${was} + $3::bigint <= $4::bigint
           RETURNING count, start, reserved
         )
         SELECT counted.count, counted.start, counted.reserved, clock.now, was.count AS was_count, was.start AS was_start
         FROM clock LEFT JOIN counted ON true LEFT JOIN ${s}.limit_windows AS was ON was.key = ${KEY}`,
        [windowName(key, windowSec), windowSec, cost, limit, more],
      );
      if (row!.count === null) {
        const seen = current({ count: row!.was_count, start: row!.was_start, now: row!.now }, windowSec);
        return { ...seen, allowed: false, count: Math.max(limit - cost + 1, seen.count), reserved: 0 };
      }
      return { ...current(row!, windowSec), allowed: true, reserved: Number(row!.reserved) };
    },
    async settle(key, windowSec, start, delta) {
      // The window that began at $3 while it lasts; else a positive delta counts in the current one.
      const [row] = await query(
        `WITH ${CLOCK},
         settled AS (
           UPDATE ${s}.limit_windows AS w SET count = greatest(0, w.count + $4::bigint) FROM clock
           WHERE w.key = ${KEY} AND w.start = $3::bigint AND w.ends_at > clock.now
           RETURNING w.count, w.start
         ),
         counted AS (
           INSERT INTO ${s}.limit_windows AS w (key, start, count, ends_at)
           SELECT ${KEY}, floor(now / $2::bigint)::bigint * $2::bigint, $4::bigint, floor(now / $2::bigint)::bigint * $2::bigint + $2::bigint FROM clock
           WHERE $4::bigint > 0 AND NOT EXISTS (SELECT FROM settled)
           ON CONFLICT (key) DO UPDATE SET ${ADD}
           RETURNING count, start
         )
         SELECT coalesce(settled.count, counted.count, was.count) AS count, coalesce(settled.start, counted.start, was.start) AS start, clock.now
         FROM clock LEFT JOIN settled ON true LEFT JOIN counted ON true
         LEFT JOIN ${s}.limit_windows AS was ON was.key = ${KEY}`,
        [windowName(key, windowSec), windowSec, start, delta],
      );
      return { ...current(row!, windowSec), allowed: true };
    },
    async acquire(key, lease, limit, ttlSec) {
      const rows = await query(
        `WITH ${CLOCK}
         INSERT INTO ${s}.limit_slots AS slots (key, leases)
         SELECT ${KEY}, jsonb_build_object($2::text, now + $4::float8) FROM clock
         ON CONFLICT (key) DO UPDATE SET leases = (
           SELECT coalesce(jsonb_object_agg(id, ends), '{}'::jsonb) FROM jsonb_each(slots.leases) AS lease(id, ends), clock WHERE ends::float8 > now
         ) || excluded.leases
         WHERE slots.leases ? $2::text
            OR (SELECT count(*) FROM jsonb_each(slots.leases) AS lease(id, ends), clock WHERE ends::float8 > now) < $3::bigint
         RETURNING 1 AS taken`,
        [JSON.stringify(key), lease, limit, ttlSec],
      );
      return rows.length === 1;
    },
    async release(key, lease) {
      await query(
        `WITH ${CLOCK} UPDATE ${s}.limit_slots SET leases = leases - $2::text FROM clock WHERE key = ${KEY}`,
        [JSON.stringify(key), lease],
      );
    },
  };
  // Its pool: agentHandler() refuses a limit store on the pool of the agent's postgresStore.
  return withPool(store, client);
}
