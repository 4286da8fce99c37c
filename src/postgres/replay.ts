import { newDpopNonce, type DpopReplayStore } from '../auth/internal.ts';
import { poolOptions, type PgPool } from './store.ts';

export interface PostgresReplayStoreOptions {
  /** The pool (the caller creates it, and ends it): node-postgres `Pool`, or anything of its shape. */
  client: PgPool;
  /** The schema holding the tables `dpop_replay` and `dpop_nonce`: a plain identifier, default `agentward`. */
  schema?: string;
}

/** A DPoP replay store (`dpopReplay` of `jwt()`, `oidc()`, `introspection()`) shared by every process on one database. */
export interface PostgresReplayStore extends DpopReplayStore {
  /** Creates the schema and the table when missing; idempotent. */
  migrate(): Promise<void>;
}

/** Expired keys are deleted on one call in this many (and on the row a key takes again). */
const PURGE_EVERY = 1_000;

/**
 * The DPoP proofs seen by any process on one PostgreSQL database (design §16), so a proof
 * replayed to another instance behind the load balancer is refused too. One `INSERT … ON CONFLICT`
 * per proof: the key (a digest of the proof's key thumbprint and `jti`, never the proof) is new
 * when the row was inserted, or taken again after it expired; a row that is there and live means
 * the proof was seen. The keys expire after the proof's window (`dpopMaxAgeSec` + tolerance),
 * with the margin the entry adds for other instances' clocks; liveness is judged on the entry's
 * own clock reading (`nowSec`), the one it judged the proof's `iat` by. With `dpop: { nonce: true }`
 * the processes share their DPoP nonces through it too (table `dpop_nonce`; run `migrate()` again
 * after upgrading).
 * @example
 * const replay = postgresReplayStore({ client: pool });
 * await replay.migrate();
 * const entry = oidc({ issuer, audience, dpop: 'required', dpopReplay: replay });
 */
export function postgresReplayStore(options: PostgresReplayStoreOptions): PostgresReplayStore {
  // The pool's idle connections report a database that went away: poolOptions() hears them, or that event would crash the server.
  const { client, schema, s } = poolOptions('postgresReplayStore()', options);
  let calls = 0;
  return {
    async migrate() {
      // One simple query: one connection and one implicit transaction, holding the lock that
      // postgresStore's migrate() takes too, so processes starting at once take turns. Racing,
      // two CREATE TABLE IF NOT EXISTS failed with 'type "dpop_replay" already exists'.
      // (The schema name is a checked plain identifier: it may stand in the literal.)
      await client.query(
        [
          `SELECT pg_advisory_xact_lock(hashtextextended('agentward migrate ${schema}', 0))`,
          `CREATE SCHEMA IF NOT EXISTS ${s}`,
          `CREATE TABLE IF NOT EXISTS ${s}.dpop_replay (key text PRIMARY KEY, expires_at double precision NOT NULL)`,
          `CREATE INDEX IF NOT EXISTS dpop_replay_by_expiry ON ${s}.dpop_replay (expires_at)`,
          `CREATE TABLE IF NOT EXISTS ${s}.dpop_nonce (key text PRIMARY KEY, value text NOT NULL, expires_at double precision NOT NULL)`,
        ].join(';\n'),
      );
    },
    async seen(key, expiresAtSec, now = Date.now() / 1000) {
      if (++calls % PURGE_EVERY === 0) await client.query(`DELETE FROM ${s}.dpop_replay WHERE expires_at < $1`, [now]);
      const { rows } = await client.query(
        `INSERT INTO ${s}.dpop_replay AS seen (key, expires_at) VALUES ($1, $2)
         ON CONFLICT (key) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE seen.expires_at < $3
         RETURNING 1 AS fresh`,
        [key, expiresAtSec, now],
      );
      return rows.length === 0;
    },
    // DPoP server nonces (design §29): the first process to ask for a period's key keeps its
    // nonce; the no-op update makes every later insert, from any process, return that row's value.
    async nonce(key, expiresAtSec, now = Date.now() / 1000) {
      await client.query(`DELETE FROM ${s}.dpop_nonce WHERE expires_at < $1`, [now]);
      const { rows } = await client.query(
        `INSERT INTO ${s}.dpop_nonce AS kept (key, value, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET key = kept.key
         RETURNING value`,
        [key, newDpopNonce(), expiresAtSec],
      );
      return (rows[0] as { value: string }).value;
    },
  };
}
