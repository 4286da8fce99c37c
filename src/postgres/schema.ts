// The tables of the PostgreSQL store (design §10). Only `migrate()` runs these statements.
//
// Every value column is `text` holding JSON text or a JSON-escaped string (see `escape` in
// store.ts): PostgreSQL text cannot hold NUL nor a lone surrogate, JSON escapes both, so any
// JavaScript string round-trips exactly. Keys sort with `COLLATE "C"` (byte order), as the
// store contract's string comparison does.
import { AUDIT_GENESIS } from '../agent/audit-chain.ts';
import { AuthConfigError } from '../auth/internal.ts';

/**
 * The schema version this agentward writes and reads. 2: sessions.owner, the owner's JSON, read
 * before the record. 3: checkpoints.created_at, the queue's order (design §33).
 */
export const SCHEMA_VERSION = 3;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** A schema name as SQL text: a plain identifier, checked (it is configuration, never a value). `helper` names the store in the error. */
export function checkSchemaName(schema: unknown, helper = 'postgresStore()'): string {
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
    throw new AuthConfigError(`${helper}: schema must be a plain identifier ([a-z_][a-z0-9_]*, at most 63 characters)`);
  }
  return `"${schema}"`;
}

/**
 * The statements of version 1, for schema `s` (already quoted). All of them are idempotent.
 * Rows are found by `key`, the SHA-256 of the stored id (`KEY` below): a btree cannot index a
 * value of a megabyte, and a hash column can; the id itself is kept beside it.
 */
export const createStatements = (s: string): string[] => [
  `CREATE SCHEMA IF NOT EXISTS ${s}`,
  `CREATE TABLE IF NOT EXISTS ${s}.meta (key text PRIMARY KEY, value text NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${s}.sessions (
    key bytea PRIMARY KEY,
    id text COLLATE "C" NOT NULL,
    owner_key bytea,
    created_at text COLLATE "C" NOT NULL,
    updated_at text COLLATE "C" NOT NULL,
    title text NOT NULL,
    record text NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS sessions_by_owner ON ${s}.sessions (owner_key, updated_at DESC) WHERE owner_key IS NOT NULL`,
  // Version 2: the owner as JSON beside the record, so an 'owned' agent compares it before it reads the transcript.
  `ALTER TABLE ${s}.sessions ADD COLUMN IF NOT EXISTS owner text`,
  `CREATE TABLE IF NOT EXISTS ${s}.checkpoints (
    key bytea PRIMARY KEY,
    session_key bytea NOT NULL,
    owner_key bytea,
    body text NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS checkpoints_by_session ON ${s}.checkpoints (session_key)`,
  `CREATE INDEX IF NOT EXISTS checkpoints_by_owner ON ${s}.checkpoints (owner_key) WHERE owner_key IS NOT NULL`,
  // Version 3: the queue of pending approvals across sessions, oldest first (design §33), filled by
  // migrate() from each body; ties in created_at go by key (an approval id may be too long for an index).
  `ALTER TABLE ${s}.checkpoints ADD COLUMN IF NOT EXISTS created_at text COLLATE "C"`,
  `UPDATE ${s}.checkpoints SET created_at = COALESCE(body::json->>'createdAt', '') WHERE created_at IS NULL`,
  `CREATE INDEX IF NOT EXISTS checkpoints_queue ON ${s}.checkpoints (created_at, key)`,
  `CREATE INDEX IF NOT EXISTS checkpoints_queue_by_owner ON ${s}.checkpoints (owner_key, created_at, key) WHERE owner_key IS NOT NULL`,
  `CREATE TABLE IF NOT EXISTS ${s}.memory (
    namespace_key bytea NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    note text NOT NULL,
    PRIMARY KEY (namespace_key, seq)
  )`,
  ...auditStatements(s),
];

/**
 * The audit log's tables (design §34), made by `postgresAuditLog`'s `migrate()` and by
 * `postgresStore`'s: the records (each as its JSON text, with its `seq` and `time` beside it to
 * find it by), and the head of the one chain, one row that every writer locks in turn.
 */
export const auditStatements = (s: string): string[] => [
  `CREATE SCHEMA IF NOT EXISTS ${s}`,
  `CREATE TABLE IF NOT EXISTS ${s}.audit_log (seq bigint PRIMARY KEY, time timestamptz NOT NULL, record text NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS audit_log_by_time ON ${s}.audit_log (time)`,
  `CREATE TABLE IF NOT EXISTS ${s}.audit_head (one boolean PRIMARY KEY DEFAULT true CHECK (one), seq bigint NOT NULL, hash text NOT NULL)`,
  `INSERT INTO ${s}.audit_head (one, seq, hash) VALUES (true, 0, '${AUDIT_GENESIS}') ON CONFLICT (one) DO NOTHING`,
];

/** The SQL of the key of parameter `$n` (a JSON-escaped string, so valid text): its SHA-256. */
export const KEY = (n: number): string => `sha256(convert_to($${n}::text, 'UTF8'))`;
