// AGENT_DATABASE_URL: `agentward start` (and `dev`, which runs it) and the built server bring the
// PostgreSQL store's schema up to date before the agent loads, with the driver the agent
// directory depends on (`npm install pg` there); the agent's own `postgresStore` then finds its
// tables. The URL holds a password: it is never printed, nor put into an error.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LimitStore } from '../http/limit-store.ts';
import { CliError } from './errors.ts';
import { postgresLimitStore, postgresStore, SCHEMA_VERSION } from '../postgres/index.ts';
import type { PgPool } from '../postgres/index.ts';

interface Driver {
  Pool: new (config: { connectionString: string; max?: number }) => PgPool & { end(): Promise<void> };
}

/** The `pg` that `dir` (an agent directory, or a build output) depends on. */
async function driverOf(dir: string): Promise<Driver> {
  try {
    const file = createRequire(join(dir, 'package.json')).resolve('pg');
    const module = (await import(pathToFileURL(file).href)) as Driver & { default?: Driver };
    const driver = module.default ?? module;
    if (typeof driver.Pool === 'function') return driver;
  } catch {
    // Not installed, or not loadable: the same way out.
  }
  throw new CliError(
    'CLI_ENV_INVALID',
    `AGENT_DATABASE_URL is set, but the PostgreSQL driver pg is not installed for ${dir}: run npm install pg there`,
  );
}

/** Runs `migrate()` on AGENT_DATABASE_URL (schema AGENT_DATABASE_SCHEMA, default agentward); nothing when it is not set. */
export async function migrateDatabase(dir: string, log: (line: string) => void = console.log): Promise<void> {
  const url = process.env.AGENT_DATABASE_URL;
  if (!url) return;
  const schema = process.env.AGENT_DATABASE_SCHEMA || undefined;
  const { Pool } = await driverOf(dir);
  let pool: (PgPool & { end(): Promise<void> }) | undefined;
  try {
    pool = new Pool({ connectionString: url, max: 1 });
    await postgresStore({ client: pool, ...(schema !== undefined && { schema }) }).migrate();
  } catch (error) {
    // The driver's messages name a host, a user or a SQLSTATE, never the password; the URL itself is left out.
    const cause = (error as { cause?: { message?: unknown } })?.cause?.message ?? (error as Error)?.message;
    throw new CliError(
      'CLI_DATABASE',
      `AGENT_DATABASE_URL: the database could not be migrated: ${typeof cause === 'string' ? cause : 'unknown error'}`,
    );
  } finally {
    await pool?.end().catch(() => undefined);
  }
  log(`agentward: PostgreSQL schema ${schema ?? 'agentward'} is at version ${SCHEMA_VERSION} (AGENT_DATABASE_URL)`);
}

/**
 * The store of agentward.json's `"limits"`: with AGENT_DATABASE_URL, PostgreSQL (a pool of its
 * own, its table migrated now), so every instance of the server counts into one budget; else
 * `undefined` (this process's memory).
 */
export async function limitStoreOf(
  dir: string,
  log: (line: string) => void = console.log,
): Promise<LimitStore | undefined> {
  const url = process.env.AGENT_DATABASE_URL;
  if (!url) return undefined;
  const schema = process.env.AGENT_DATABASE_SCHEMA || undefined;
  const { Pool } = await driverOf(dir);
  const store = postgresLimitStore({
    client: new Pool({ connectionString: url, max: 4 }),
    ...(schema !== undefined && { schema }),
  });
  try {
    await store.migrate();
  } catch (error) {
    const cause = (error as { cause?: { message?: unknown } })?.cause?.message ?? (error as Error)?.message;
    throw new CliError(
      'CLI_DATABASE',
      `AGENT_DATABASE_URL: the limits table could not be created: ${typeof cause === 'string' ? cause : 'unknown error'}`,
    );
  }
  log(
    `agentward: limits are counted in PostgreSQL schema ${schema ?? 'agentward'} (AGENT_DATABASE_URL), shared by every instance`,
  );
  return store;
}
