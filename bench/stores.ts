// The `stores` suite of `npm run bench:http` (run by bench/http.ts, or alone: `node bench/stores.ts
// [--json] [--seconds <n>] [--rounds <n>]`): sends/s (`POST /agent`, each starting a session) with
// the memory store, the file store, and the PostgreSQL store behind one and behind two server
// processes (autocannon spreads its connections over both), every server a child process
// (bench/store-server.ts); PostgreSQL is DATABASE_URL when set, else a throwaway cluster
// (tests/helpers/postgres.ts) with fsync on, as the file store's writes are. Case
// `memory + pg limits`: the memory store with `limits.requests` counted in PostgreSQL (design §22).
// Then the cost of one limit check (design §22): postgresLimitStore's statements one after
// another (latency) and 50 at once (throughput), beside the memory store's.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatTable, jsonLine, median, parseArgs, shuffle, type CaseResult } from './lib.ts';

const CONNECTIONS = 50;

/** One measurement the load generator runs (several URLs: autocannon spreads the connections over them). */
interface Load {
  key: string;
  url: string | string[];
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  seconds: number;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const options = parseArgs(argv);
  // autocannon needs about a second per measurement to be steady: 3 s per case over 3 rounds unless told.
  const seconds = argv.some((a) => a.startsWith('--seconds')) ? options.seconds : 3;
  const rounds = argv.some((a) => a.startsWith('--rounds')) ? options.rounds : 3;
  const slice = Math.max(1, Math.round(seconds / rounds));
  const human = options.json ? console.error.bind(console) : console.log;
  const generator = fork(new URL(import.meta.url), ['--load-generator'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const measure = (load: Load) =>
    new Promise<{ requestsPerSec: number; failed: number }>((resolve) => {
      generator.once('message', resolve);
      generator.send(load);
    });
  try {
    await storeSuite(measure, { json: options.json, slice, rounds, human });
  } finally {
    generator.kill();
  }
}

const STORE_SERVER = fileURLToPath(new URL('./store-server.ts', import.meta.url));
const STORE_TOKEN = 'bench-api-token-0123456789';

/** The `stores` suite: each case's servers in child processes, measured interleaved like the others. */
async function storeSuite(
  measure: (load: Load) => Promise<{ requestsPerSec: number; failed: number }>,
  { json, slice, rounds, human }: { json: boolean; slice: number; rounds: number; human: (...args: unknown[]) => void },
): Promise<void> {
  const suite = 'stores';
  if (json) console.error(`bench: measuring ${suite}…`);
  const { startDatabase } = await import('../tests/helpers/postgres.ts');
  const db = await startDatabase({ durable: true });
  const dataDir = await mkdtemp(join(tmpdir(), 'agentward-bench-file-'));
  const children: ChildProcess[] = [];
  const start = async (kind: string, schema = ''): Promise<string> => {
    const env = {
      ...process.env,
      DATABASE_URL: db.url,
      AGENT_PG_SCHEMA: schema,
      BENCH_DATA_DIR: dataDir,
      AGENT_PG_POOL: '20',
    };
    const child = spawn(process.execPath, [STORE_SERVER, kind], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const line = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const found = /^listening (\S+)$/m.exec(text);
        if (found) resolve(found[1]!);
      });
      child.once('exit', (code) =>
        reject(new Error(`bench/store-server.ts ${kind} exited (${code}) before listening`)),
      );
    });
    return `${line}/agent`;
  };
  try {
    const shared = db.schema();
    const cases = new Map<string, string[]>([
      ['memory', [await start('memory')]],
      ['file', [await start('file')]],
      ['postgres', [await start('postgres', db.schema())]],
      ['postgres x2', [await start('postgres', shared), await start('postgres', shared)]],
      ['memory + pg limits', [await start('memory-pg-limits', db.schema())]],
    ]);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${STORE_TOKEN}` };
    const loadOf = (name: string, seconds: number): Load => {
      const urls = cases.get(name)!;
      return {
        key: name,
        url: urls.length === 1 ? urls[0]! : urls,
        method: 'POST',
        headers,
        body: '{"message":"hello"}',
        seconds,
      };
    };
    for (const name of cases.keys()) {
      const warm = await measure(loadOf(name, 1));
      if (warm.failed > 0) throw new Error(`${suite} ${name}: ${warm.failed} requests failed during warm-up`);
    }
    const samples = new Map<string, number[]>([...cases.keys()].map((name) => [name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const name of shuffle([...cases.keys()])) {
        const { requestsPerSec, failed } = await measure(loadOf(name, slice));
        if (failed > 0) throw new Error(`${suite} ${name}: ${failed} requests failed`);
        samples.get(name)!.push(requestsPerSec);
      }
    }
    const base = median(samples.get('memory')!);
    const results: CaseResult[] = [...samples].map(([name, values]) => ({
      suite,
      case: name,
      opsPerSec: median(values),
      ratio: median(values) / base,
      min: Math.min(...values),
      max: Math.max(...values),
      rounds: values.length,
    }));
    if (json) for (const result of results) process.stdout.write(`${jsonLine(result)}\n`);
    else human(formatTable({ suite, baseline: 'memory' }, results));
    const ops = (name: string) => results.find((r) => r.case === name)!.opsPerSec;
    human(
      `sends/s at ${CONNECTIONS} connections, POST /agent (a new session each), median of ${rounds} rounds of ${slice} s; servers in child processes`,
    );
    human(
      `postgres x2 ${(ops('postgres x2') / ops('postgres')).toFixed(2)}x postgres (two server processes on one database against one)`,
    );
    human(
      `memory + pg limits ${(ops('memory + pg limits') / ops('memory')).toFixed(2)}x memory (a request counted in PostgreSQL)`,
    );
    if (!json) human('');
    await limitChecks(db, { json, rounds, human });
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(
      children.map((child) =>
        child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined,
      ),
    );
    await db.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * The cost of one limit check: each statement of postgresLimitStore (a count, a read, a failure slot
 * taken and given back as `failures` does on each request, a concurrency slot taken and given back)
 * one after another on a pool of its own, and 50 at once, beside memoryLimitStore.
 */
async function limitChecks(
  db: { pool(options?: { max?: number }): import('pg').Pool; schema(): string },
  { json, rounds, human }: { json: boolean; rounds: number; human: (...args: unknown[]) => void },
): Promise<void> {
  const { postgresLimitStore } = await import('../src/postgres/index.ts');
  const { memoryLimitStore } = await import('../src/http/limit-store.ts');
  const pg = postgresLimitStore({ client: db.pool({ max: 20 }), schema: db.schema() });
  await pg.migrate();
  const memory = memoryLimitStore();
  const MAX = Number.MAX_SAFE_INTEGER;
  let n = 0;
  const checks: Record<string, () => Promise<unknown>> = {
    'memory: count': () => memory.hit('requests/60:p["","api-token","bench"]', 60, 1, MAX),
    'postgres: count (requests)': () => pg.hit('requests/60:p["","api-token","bench"]', 60, 1, MAX),
    'postgres: count, 50 keys': () => pg.hit(`requests/60:p["","api-token","bench-${n++ % 50}"]`, 60, 1, MAX),
    'postgres: read (tokens)': () => pg.hit('tokens/60:p["","api-token","bench"]', 60, 0, MAX),
    'postgres: failure slot taken and given back': async () => {
      const taken = await pg.hit('failures/60:a192.0.2.1', 60, 1, MAX);
      await pg.settle('failures/60:a192.0.2.1', 60, taken.start, -1);
    },
    'postgres: slot taken and given back': async () => {
      const lease = crypto.randomUUID();
      await pg.acquire('concurrent:p["","api-token","bench"]', lease, 1_000_000, 60);
      await pg.release('concurrent:p["","api-token","bench"]', lease);
    },
  };
  const timeOf = async (check: () => Promise<unknown>, parallel: number, ms: number) => {
    let done = 0;
    const end = performance.now() + ms;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (performance.now() < end) {
          await check();
          done++;
        }
      }),
    );
    return done / ((performance.now() - started) / 1000);
  };
  for (const check of Object.values(checks)) await timeOf(check, 1, 300);
  const rows: string[] = [];
  for (const [name, check] of Object.entries(checks)) {
    const serial: number[] = [];
    const parallel: number[] = [];
    for (let round = 0; round < rounds; round++) {
      serial.push(await timeOf(check, 1, 1000));
      parallel.push(await timeOf(check, 50, 1000));
    }
    const one = median(serial);
    const many = median(parallel);
    rows.push(
      `${name.padEnd(36)} ${(1e6 / one).toFixed(1).padStart(8)} µs each, one at a time   ${Math.round(many).toLocaleString('en-US').padStart(8)} checks/s, 50 at once`,
    );
    if (json)
      process.stdout.write(
        `${JSON.stringify({ suite: 'limit-checks', case: name, usPerCheck: Number((1e6 / one).toFixed(1)), checksPerSecAt50: Math.round(many) })}\n`,
      );
  }
  human(
    [
      'suite limit-checks (one limit check: a statement of postgresLimitStore, or a call of memoryLimitStore; median of rounds of 1 s)',
      ...rows,
    ].join('\n'),
  );
}

// autocannon ships no types: only what is used here.
interface AutocannonResult {
  requests: { average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (
  options: Load & { connections: number; duration: number; pipelining: number },
) => Promise<AutocannonResult>;

if (process.argv[2] === '--load-generator') {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  process.on('message', async (load: Load) => {
    const result = await autocannon({ ...load, connections: CONNECTIONS, duration: load.seconds, pipelining: 1 });
    process.send?.({
      requestsPerSec: result.requests.average,
      failed: result.non2xx + result.errors + result.timeouts,
    });
  });
} else {
  await main();
}
