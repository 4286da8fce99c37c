// HTTP benchmark of the node server (`npm run bench:http [--json] [--seconds <n>] [--rounds <n>]`):
// requests/s on loopback at 50 connections, for `POST /agent` (suite `http`) and
// `GET /agent/health` (suite `http-health`), with the auth list open, apiToken(), HS256 jwt()
// and ES256 jwt() (`jwt-es256-cache`: with `cache: true`, design §13), and `owned`: apiToken() in front of an agent with `sessions: 'owned'` (what
// ownership costs is `owned` against `api-token`; target ≥ 0.95). The servers run in this process; autocannon runs in a child process, so
// the load generator never shares an event loop with the server. Cases are interleaved:
// each round measures every case once, in a fresh random order; the result is the median.
// Suite `stores`: sends/s (`POST /agent`, each starting a session) with the memory store, the
// file store, and the PostgreSQL store behind one and behind two server processes (autocannon
// spreads its connections over both), every server a child process (bench/store-server.ts);
// PostgreSQL is DATABASE_URL when set, else a throwaway cluster (tests/node/postgres-harness.ts)
// with fsync on, as the file store's writes are.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAgent, echoModel } from '../src/agent/index.ts';
import type { Agent, Store } from '../src/agent/types.ts';
import { apiToken, jwt } from '../src/auth/index.ts';
import type { AuthOption } from '../src/auth/index.ts';
import { encodeBase64url } from '../src/auth/jose/base64url.ts';
import { serve } from '../src/node/index.ts';
import { formatTable, jsonLine, median, parseArgs, shuffle, type CaseResult } from './lib.ts';

const CONNECTIONS = 50;
const AUDIENCE = 'agent-api';
const ISSUER = 'https://issuer.example.com';
const SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
const TARGETS: Readonly<Record<string, number>> = { 'api-token': 0.9, 'jwt-hs256': 0.7, 'jwt-es256-cache': 0.9 };
const OWNED_TARGET = 0.95;

/** One measurement the load generator runs (several URLs: autocannon spreads the connections over them). */
interface Load { key: string; url: string | string[]; method: 'GET' | 'POST'; headers: Record<string, string>; body?: string; seconds: number }

/** A store that keeps nothing: the benchmark measures the server, auth and run, not storage growth. */
function discardStore(): Store {
  return {
    loadSession: async () => undefined,
    saveSession: async () => undefined,
    loadCheckpoint: async () => undefined,
    saveCheckpoint: async () => undefined,
    deleteCheckpoint: async () => false,
    listCheckpoints: async () => [],
    loadMemory: async () => [],
    appendMemory: async () => undefined,
    listSessions: async () => [],
    deleteSession: async () => false,
  };
}

const encoder = new TextEncoder();
const b64json = (value: unknown) => encodeBase64url(encoder.encode(JSON.stringify(value)));

async function signedToken(alg: 'HS256' | 'ES256'): Promise<{ token: string; auth: AuthOption; cached?: AuthOption }> {
  const now = Math.floor(Date.now() / 1000);
  const input = `${b64json({ alg, typ: 'JWT' })}.${b64json({ sub: 'user-1234', iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 3600 })}`;
  if (alg === 'HS256') {
    const key = await crypto.subtle.importKey('raw', encoder.encode(SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const signature = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(input)));
    return { token: `${input}.${encodeBase64url(signature)}`, auth: [jwt({ secret: SECRET, issuer: ISSUER, audience: AUDIENCE })] };
  }
  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const signature = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, pair.privateKey, encoder.encode(input)));
  const { key_ops: _ops, ext: _ext, ...publicKey } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  const options = { publicKey, issuer: ISSUER, audience: AUDIENCE };
  return { token: `${input}.${encodeBase64url(signature)}`, auth: [jwt(options)], cached: [jwt({ ...options, cache: true })] };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const options = parseArgs(argv);
  // autocannon needs about a second per measurement to be steady: 3 s per case over 3 rounds unless told.
  const seconds = argv.some((a) => a.startsWith('--seconds')) ? options.seconds : 3;
  const rounds = argv.some((a) => a.startsWith('--rounds')) ? options.rounds : 3;
  const slice = Math.max(1, Math.round(seconds / rounds));
  const human = options.json ? console.error.bind(console) : console.log;
  delete process.env.AGENT_API_TOKEN;
  // The end of each measurement closes connections with requests in flight, which aborts their
  // runs; the route handler logs those aborts. They are expected here: keep them off the report.
  const logError = console.error;
  console.error = (...args: unknown[]) => {
    if (!args.some((arg) => (arg as Error | null)?.name === 'AbortError')) logError(...args);
  };

  const hs256 = await signedToken('HS256');
  const es256 = await signedToken('ES256');
  const agent = createAgent({ name: 'bench', model: echoModel(), store: discardStore() });
  const ownedAgent = createAgent({ name: 'bench', model: echoModel(), store: discardStore(), sessions: 'owned' });
  const cases: Record<string, { auth: AuthOption | undefined; authorization?: string; agent?: Agent }> = {
    open: { auth: undefined },
    'api-token': { auth: [apiToken('bench-api-token-0123456789')], authorization: 'Bearer bench-api-token-0123456789' },
    owned: { auth: [apiToken('bench-api-token-0123456789')], authorization: 'Bearer bench-api-token-0123456789', agent: ownedAgent },
    'jwt-hs256': { auth: hs256.auth, authorization: `Bearer ${hs256.token}` },
    'jwt-es256': { auth: es256.auth, authorization: `Bearer ${es256.token}` },
    // The same token on every request, as an agent client sends its access token: a cache hit after the first.
    'jwt-es256-cache': { auth: es256.cached, authorization: `Bearer ${es256.token}` },
  };
  const servers = new Map<string, Awaited<ReturnType<typeof serve>>>();
  for (const [name, { auth, agent: served }] of Object.entries(cases)) servers.set(name, await serve({ agent: served ?? agent, auth, port: 0, log: 'off' }));

  const generator = fork(new URL(import.meta.url), ['--load-generator'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const measure = (load: Load) =>
    new Promise<{ requestsPerSec: number; failed: number }>((resolve) => {
      generator.once('message', resolve);
      generator.send(load);
    });

  const suites = [
    { suite: 'http', method: 'POST' as const, path: '/agent', body: '{"message":"hello"}' },
    { suite: 'http-health', method: 'GET' as const, path: '/agent/health', body: undefined },
  ].filter((s) => options.filter === undefined || s.suite.startsWith(options.filter));
  const storesWanted = options.filter === undefined || 'stores'.startsWith(options.filter);

  try {
    for (const { suite, method, path, body } of suites) {
      if (options.json) console.error(`bench: measuring ${suite}…`);
      const loads = new Map<string, Load>();
      for (const [name, { authorization }] of Object.entries(cases)) {
        const headers: Record<string, string> = { 'content-type': 'application/json', ...(authorization !== undefined && { authorization }) };
        loads.set(name, { key: name, url: `${servers.get(name)!.url}${path}`, method, headers, ...(body !== undefined && { body }), seconds: slice });
      }
      for (const load of loads.values()) {
        const warm = await measure({ ...load, seconds: 1 });
        if (warm.failed > 0) throw new Error(`${suite} ${load.key}: ${warm.failed} requests failed during warm-up`);
      }
      const samples = new Map<string, number[]>([...loads.keys()].map((name) => [name, []]));
      for (let round = 0; round < rounds; round++) {
        for (const name of shuffle([...loads.keys()])) {
          const { requestsPerSec, failed } = await measure(loads.get(name)!);
          if (failed > 0) throw new Error(`${suite} ${name}: ${failed} requests failed`);
          samples.get(name)!.push(requestsPerSec);
        }
      }
      const base = median(samples.get('open')!);
      const results: CaseResult[] = [...samples].map(([name, values]) => ({
        suite,
        case: name,
        opsPerSec: median(values),
        ratio: median(values) / base,
        min: Math.min(...values),
        max: Math.max(...values),
        rounds: values.length,
      }));
      if (options.json) for (const result of results) process.stdout.write(jsonLine(result) + '\n');
      else human(formatTable({ suite, baseline: 'open' }, results));
      human(`requests/s at ${CONNECTIONS} connections, ${method} ${path}, median of ${rounds} rounds of ${slice} s (autocannon in a child process)`);
      if (suite === 'http') {
        human(
          Object.entries(TARGETS)
            .map(([name, target]) => {
              const ratio = results.find((r) => r.case === name)!.ratio;
              return `${name} ${ratio.toFixed(2)}x open (target ≥ ${target}x: ${ratio >= target ? 'met' : 'MISSED'})`;
            })
            .join('; '),
        );
        const owned = results.find((r) => r.case === 'owned')!.opsPerSec / results.find((r) => r.case === 'api-token')!.opsPerSec;
        human(`owned ${owned.toFixed(3)}x api-token (ownership costs ≤ 5%: ${owned >= OWNED_TARGET ? 'met' : 'MISSED'})`);
      }
      if (!options.json) human('');
    }
    if (storesWanted) await storeSuite(measure, { json: options.json, slice, rounds, human });
  } finally {
    generator.kill();
    await Promise.all([...servers.values()].map((server) => server.close()));
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
  const { startDatabase } = await import('../tests/node/postgres-harness.ts');
  const db = await startDatabase({ durable: true });
  const dataDir = await mkdtemp(join(tmpdir(), 'agentgate-bench-file-'));
  const children: ChildProcess[] = [];
  const start = async (kind: string, schema = ''): Promise<string> => {
    const env = { ...process.env, DATABASE_URL: db.url, AGENT_PG_SCHEMA: schema, BENCH_DATA_DIR: dataDir, AGENT_PG_POOL: '20' };
    const child = spawn(process.execPath, [STORE_SERVER, kind], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const line = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const found = /^listening (\S+)$/m.exec(text);
        if (found) resolve(found[1]!);
      });
      child.once('exit', (code) => reject(new Error(`bench/store-server.ts ${kind} exited (${code}) before listening`)));
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
    ]);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${STORE_TOKEN}` };
    const loadOf = (name: string, seconds: number): Load => {
      const urls = cases.get(name)!;
      return { key: name, url: urls.length === 1 ? urls[0]! : urls, method: 'POST', headers, body: '{"message":"hello"}', seconds };
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
    if (json) for (const result of results) process.stdout.write(jsonLine(result) + '\n');
    else human(formatTable({ suite, baseline: 'memory' }, results));
    const ops = (name: string) => results.find((r) => r.case === name)!.opsPerSec;
    human(`sends/s at ${CONNECTIONS} connections, POST /agent (a new session each), median of ${rounds} rounds of ${slice} s; servers in child processes`);
    human(`postgres x2 ${(ops('postgres x2') / ops('postgres')).toFixed(2)}x postgres (two server processes on one database against one)`);
    if (!json) human('');
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => (child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined)));
    await db.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

// autocannon ships no types: only what is used here.
interface AutocannonResult { requests: { average: number }; non2xx: number; errors: number; timeouts: number }
type Autocannon = (options: Load & { connections: number; duration: number; pipelining: number }) => Promise<AutocannonResult>;

if (process.argv[2] === '--load-generator') {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  process.on('message', async (load: Load) => {
    const result = await autocannon({ ...load, connections: CONNECTIONS, duration: load.seconds, pipelining: 1 });
    process.send?.({ requestsPerSec: result.requests.average, failed: result.non2xx + result.errors + result.timeouts });
  });
} else {
  await main();
}
