// HTTP benchmark of the node server beside its peers (`npm run bench:http [--json] [--seconds <n>]
// [--rounds <n>] [--filter <suite>] [--quiet-wait <s>] [--cases <a,b,…>] [--against <file>] [--decay]`).
//
// Every server runs in its own process (`--server <case>`), the load generator (autocannon, 50
// connections) in another, so no two share an event loop. Suites: `POST /agent` with
// `{"message":"hello"}` (suite `http`) and `GET /agent/health` (suite `http-health`). Cases:
// - peers, answering the same routes with the same JSON: `raw-node` (node:http by hand, the
//   baseline of every "× raw node" ratio), `raw-node-2` (the same again, the run's noise floor),
//   `fastify`, `hono` (Hono on @hono/node-server);
// - ours, `serve()`: `instant` (a stand-in agent that answers at once), `open` (the echo agent
//   on a store that keeps nothing, no auth), `api-token`, `jwt-hs256`, `jwt-es256`,
//   `jwt-es256-cache` (jwt() with `cache: true`, the same token each time), `owned`
//   (apiToken() in front of an agent with `sessions: 'owned'`), `memory` (the echo agent on
//   memoryStore()), `api-token-log` (api-token with the request log on, as serve() defaults),
//   `api-token-limits` (api-token with `limits.requests` on the memory store, a limit never
//   reached: design §22, within 10% of api-token), `api-token-limits-all` (requests, concurrent,
//   tokens and failures, all four checked on every request), `api-token-tracer` (api-token with
//   `telemetry: { tracer }` on the agent and the server, a tracer whose spans do nothing: design
//   §28, within 5% of api-token), `api-token-audit` (api-token with `audit: { log: memoryAuditLog() }`:
//   each request's record hashed into the chain, design §34, within 5% of api-token).
// Rounds interleave: each round starts every server in a fresh process, warms it for 1 s, and
// measures every case once in a fresh random order, each sample
// after a quiet-machine gate (other processes' CPU use under 10% of the machine, waiting at most
// `--quiet-wait` seconds; samples taken without quiet are counted in the report). The result
// per case is the median over rounds; CPU-µs per request is the server process's CPU time
// (all its threads: garbage collection too) over the requests answered in the sample.
// `--decay`: 100,000 requests to the `memory` case in ten tenths; the last tenth's req/s
// against the first's (target: within 10%).
// Then suite `stores` (bench/stores.ts, in a child process): sends/s per store, PostgreSQL
// behind one and two server processes.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { createAgent, echoModel, memoryAuditLog, memoryStore } from '../src/agent/index.ts';
import type { Agent, Store } from '../src/agent/types.ts';
import type { TelemetryOptions, TelemetrySpan } from '../src/agent/index.ts';
import { apiToken, jwt } from '../src/auth/index.ts';
import type { AuthOption } from '../src/auth/index.ts';
import { encodeBase64url } from '../src/auth/jws/base64url.ts';
import { serve } from '../src/node.ts';
import { ask, discardStore, type Load, type LoadResult, QUIET_BUSY, quietGate, runResult } from './http-shared.ts';
import { formatOps, median, parseArgs, shuffle } from './lib.ts';

const CONNECTIONS = 50;
const AUDIENCE = 'agent-api';
const ISSUER = 'https://issuer.example.com';
const SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
const TOKEN = 'bench-api-token-0123456789';
// `raw-node-2` is a second raw node:http server, the same code in another process: its ratio to
// `raw-node` is the run's own noise floor (an A/A comparison), printed beside the verdicts.
const PEERS = ['raw-node', 'raw-node-2', 'fastify', 'hono'] as const;
const OURS = [
  'instant',
  'open',
  'api-token',
  'jwt-hs256',
  'jwt-es256',
  'jwt-es256-cache',
  'jwt-scopes',
  'owned',
  'memory',
  'api-token-log',
  'mcp-ask',
  'api-token-limits',
  'api-token-limits-all',
  'api-token-tracer',
  'api-token-audit',
] as const;
/** Limits no request of the benchmark reaches: every check runs, none refuses. */
const NEVER = { limit: Number.MAX_SAFE_INTEGER, windowSec: 60 };
// `mcp-ask`: the `open` server with `mcp: true`, its `POST /agent` load sent as the MCP tool call
// `tools/call ask` to `POST /agent/mcp` (design §18: within 15% of `POST <base>`).
const MCP_ASK = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'ask', arguments: { message: 'hello' } },
});
type CaseName = (typeof PEERS)[number] | (typeof OURS)[number];

// ---------------------------------------------------------------------------------------------
// The servers, one per process.

const encoder = new TextEncoder();
const b64json = (value: unknown) => encodeBase64url(encoder.encode(JSON.stringify(value)));

/** A signed token and the jwt() entry that accepts it; the same key for the server and the orchestrator (seeded by SECRET). */
// `cache`: jwt() with `cache: true` (design §13); the same token on every request, as an agent
// client sends its access token, so every request after the first is a hit.
// `jwt-scopes`: `jwt-hs256` with the entry's own scope and the send group's (design §32's one decision).
const SCOPE = 'agent:chat';

async function signedToken(
  alg: 'HS256' | 'ES256',
  cache = false,
  scoped = false,
): Promise<{ token: string; auth: AuthOption }> {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    sub: 'user-1234',
    iss: ISSUER,
    aud: AUDIENCE,
    iat: now,
    exp: now + 3600,
    ...(scoped && { scope: SCOPE }),
  };
  const input = `${b64json({ alg, typ: 'JWT' })}.${b64json(claims)}`;
  if (alg === 'HS256') {
    const key = await crypto.subtle.importKey('raw', encoder.encode(SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
    ]);
    const signature = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(input)));
    return {
      token: `${input}.${encodeBase64url(signature)}`,
      auth: [jwt({ secret: SECRET, issuer: ISSUER, audience: AUDIENCE, ...(scoped && { scopes: [SCOPE] }) })],
    };
  }
  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const signature = new Uint8Array(
    await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, pair.privateKey, encoder.encode(input)),
  );
  const { key_ops: _ops, ext: _ext, ...publicKey } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  return {
    token: `${input}.${encodeBase64url(signature)}`,
    auth: [jwt({ publicKey, issuer: ISSUER, audience: AUDIENCE, cache })],
  };
}

const HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' };

function rawNodeServer() {
  const reply = (res: import('node:http').ServerResponse, status: number, value: unknown) => {
    const text = JSON.stringify(value);
    res.writeHead(status, { ...HEADERS, 'content-length': Buffer.byteLength(text) }).end(text);
  };
  return createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/agent/health') return reply(res, 200, { status: 'ok' });
    if (req.method !== 'POST' || req.url !== '/agent') return reply(res, 404, { error: 'Not Found' });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        reply(res, 200, runResult((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { message: string }).message));
      } catch {
        reply(res, 400, { error: 'Request body must be valid JSON' });
      }
    });
  });
}

/** Starts the server of one case in this process; resolves to its origin and what the client sends. */
async function startServer(name: CaseName): Promise<{ origin: string; authorization?: string }> {
  const listen = (server: import('node:http').Server) =>
    new Promise<string>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
    );
  if (name === 'raw-node' || name === 'raw-node-2') return { origin: await listen(rawNodeServer()) };
  if (name === 'fastify') {
    const { default: Fastify } = await import('fastify');
    const app = Fastify();
    app.get('/agent/health', (_request, reply) => reply.headers(HEADERS).send({ status: 'ok' }));
    app.post('/agent', (request, reply) =>
      reply.headers(HEADERS).send(runResult((request.body as { message: string }).message)),
    );
    return { origin: await app.listen({ port: 0, host: '127.0.0.1' }) };
  }
  if (name === 'hono') {
    const { Hono } = await import('hono');
    const { serve: honoServe } = await import('@hono/node-server');
    const app = new Hono();
    app.get('/agent/health', (c) => c.json({ status: 'ok' }, 200, { 'cache-control': 'no-store' }));
    app.post('/agent', async (c) =>
      c.json(runResult((await c.req.json<{ message: string }>()).message), 200, { 'cache-control': 'no-store' }),
    );
    return new Promise((resolve) => {
      honoServe({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
        resolve({ origin: `http://127.0.0.1:${info.port}` }),
      );
    });
  }
  delete process.env.AGENT_API_TOKEN;
  // Closing connections at the end of a sample aborts runs in flight; the route handler logs those aborts.
  const logError = console.error;
  console.error = (...args: unknown[]) => {
    if (!args.some((arg) => (arg as Error | null)?.name === 'AbortError')) logError(...args);
  };
  const telemetry = name === 'api-token-tracer' ? NOOP_TRACER : undefined;
  const echo = (store: Store, sessions?: 'owned') =>
    createAgent({
      name: 'bench',
      model: echoModel(),
      store,
      ...(sessions && { sessions }),
      ...(telemetry && { telemetry }),
    });
  const bearer = { auth: [apiToken(TOKEN)], authorization: `Bearer ${TOKEN}` };
  let agent: Agent = echo(discardStore());
  let auth: AuthOption | undefined;
  let authorization: string | undefined;
  if (name === 'instant') {
    const send = async (message: string) => runResult(message);
    agent = Object.freeze({ ...agent, send });
  } else if (name === 'memory') agent = echo(memoryStore());
  else if (name === 'owned') agent = echo(discardStore(), 'owned');
  if (
    name === 'api-token' ||
    name === 'api-token-log' ||
    name === 'owned' ||
    name === 'api-token-tracer' ||
    name === 'api-token-audit' ||
    name.startsWith('api-token-limits')
  )
    ({ auth, authorization } = bearer);
  if (name === 'jwt-hs256' || name === 'jwt-es256' || name === 'jwt-es256-cache' || name === 'jwt-scopes') {
    const es = name === 'jwt-es256' || name === 'jwt-es256-cache';
    const signed = await signedToken(es ? 'ES256' : 'HS256', name === 'jwt-es256-cache', name === 'jwt-scopes');
    ({ auth } = signed);
    authorization = `Bearer ${signed.token}`;
  }
  const limits =
    name === 'api-token-limits'
      ? { requests: NEVER }
      : name === 'api-token-limits-all'
        ? { requests: NEVER, tokens: NEVER, failures: NEVER, concurrent: 1_000 }
        : undefined;
  // No auth is the open route: the key left out, since an auth key holding undefined is an error (design §20).
  const server = await serve({
    agent,
    ...(auth !== undefined && { auth }),
    port: 0,
    log: name === 'api-token-log' ? 'text' : 'off',
    mcp: name === 'mcp-ask',
    ...(name === 'jwt-scopes' && { scopes: { send: [SCOPE] } }),
    ...(limits !== undefined && { limits }),
    ...(telemetry !== undefined && { telemetry }),
    ...(name === 'api-token-audit' && { audit: { log: memoryAuditLog() } }),
  });
  return { origin: server.url, ...(authorization !== undefined && { authorization }) };
}

// ---------------------------------------------------------------------------------------------
// The orchestrator.

interface ServerHandle {
  name: CaseName;
  origin: string;
  authorization?: string;
  cpu(): Promise<number>;
  child: ChildProcess;
}

async function launch(name: CaseName): Promise<ServerHandle> {
  // The request log of `api-token-log` goes to a pipe that is read and dropped, as a log
  // collector would read it; the other servers write nothing on stdout.
  const child = fork(new URL(import.meta.url), ['--server', name], {
    stdio: ['ignore', name === 'api-token-log' ? 'pipe' : 'ignore', 'inherit', 'ipc'],
  });
  child.stdout?.resume();
  const started = await ask<{ origin: string; authorization?: string }>(child, 'start');
  return { name, ...started, child, cpu: () => ask<number>(child, 'cpu') };
}

interface Row {
  suite: string;
  case: CaseName;
  reqPerSec: number;
  min: number;
  max: number;
  cpuUs: number;
  xNode: number;
  xOpen: number;
  rounds: number;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  // --quiet-wait <s> and --decay are this benchmark's own; the rest are bench/lib.ts's.
  let quietWaitMs = 15_000;
  const quietAt = argv.findIndex((a) => a === '--quiet-wait' || a.startsWith('--quiet-wait='));
  if (quietAt >= 0) {
    const [arg, next] = argv.splice(quietAt, argv[quietAt]!.includes('=') ? 1 : 2);
    quietWaitMs = Number(arg!.includes('=') ? arg!.slice(arg!.indexOf('=') + 1) : next) * 1000;
    if (!(quietWaitMs >= 0)) throw new Error('--quiet-wait needs a number of seconds');
  }
  // --against <file>: the `--json` output of an earlier run; every ratio of this run is compared
  // with that run's (issue 19: two consecutive runs agree within 5% on every ratio).
  // It is read now, so a wrong file fails before the run rather than after it.
  let against: Map<string, EarlierRatios> | undefined;
  const againstAt = argv.findIndex((a) => a === '--against' || a.startsWith('--against='));
  if (againstAt >= 0) {
    const [arg, next] = argv.splice(againstAt, argv[againstAt]!.includes('=') ? 1 : 2);
    const file = arg!.includes('=') ? arg!.slice(arg!.indexOf('=') + 1) : next;
    if (!file) throw new Error('--against needs the file of an earlier --json run');
    against = readEarlierRun(file, await readFile(file, 'utf8'));
  }
  // --cases a,b,…: only these cases (raw-node, raw-node-2 and open always run: the ratios need them).
  let only: string[] | undefined;
  const casesAt = argv.findIndex((a) => a === '--cases' || a.startsWith('--cases='));
  if (casesAt >= 0) {
    const [arg, next] = argv.splice(casesAt, argv[casesAt]!.includes('=') ? 1 : 2);
    only = (arg!.includes('=') ? arg!.slice(arg!.indexOf('=') + 1) : next!).split(',');
  }
  const decay = argv.includes('--decay');
  const options = parseArgs(argv.filter((a) => a !== '--decay'));
  // autocannon needs about a second per sample to be steady: 5 rounds of 3 s unless told.
  const rounds = argv.some((a) => a.startsWith('--rounds')) ? options.rounds : 5;
  const slice = argv.some((a) => a.startsWith('--seconds')) ? Math.max(1, Math.round(options.seconds / rounds)) : 3;
  const human = options.json ? console.error.bind(console) : console.log;

  const generator = fork(new URL(import.meta.url), ['--load-generator'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const measure = (load: Load) => ask<LoadResult>(generator, load);
  const names: CaseName[] = decay
    ? ['memory']
    : [...PEERS, ...OURS].filter(
        (name) => only === undefined || ['raw-node', 'raw-node-2', 'open', ...only].includes(name),
      );
  const servers = new Map<CaseName, ServerHandle>();
  try {
    for (const name of names) servers.set(name, await launch(name));
    const loadFor = (server: ServerHandle, method: 'GET' | 'POST', path: string): Load => {
      const mcp = server.name === 'mcp-ask' && method === 'POST';
      return {
        url: server.origin + path + (mcp ? '/mcp' : ''),
        method,
        headers: {
          'content-type': 'application/json',
          ...(mcp && { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }),
          ...(server.authorization !== undefined && { authorization: server.authorization }),
        },
        ...(method === 'POST' && { body: mcp ? MCP_ASK : '{"message":"hello"}' }),
      };
    };

    if (decay) {
      const server = servers.get('memory')!;
      await measure({ ...loadFor(server, 'POST', '/agent'), amount: 2_000 });
      // One run of 100,000 requests; the load generator notes the time of every 10,000th answer.
      const { tenths, failed } = await ask<{ tenths: number[]; failed: number }>(generator, {
        ...loadFor(server, 'POST', '/agent'),
        amount: 100_000,
        tenths: true,
      });
      if (failed > 0) throw new Error(`decay: ${failed} requests failed`);
      tenths.forEach((rate, i) => human(`tenth ${i + 1}: ${formatOps(rate)} req/s`));
      const ratio = tenths[9]! / tenths[0]!;
      // Beside the literal criterion, the median of the last three tenths over that of the first
      // three: one burst of load from another process moves a single tenth by 20% on a shared machine.
      const steady = median(tenths.slice(7)) / median(tenths.slice(0, 3));
      human(
        `memory (echo agent on memoryStore()): 100,000 requests, last tenth ${ratio.toFixed(3)}x the first (no decay, within 10%: ${ratio >= 0.9 ? 'met' : 'MISSED'}); median of tenths 8-10 ${steady.toFixed(3)}x that of tenths 1-3`,
      );
      if (options.json)
        process.stdout.write(
          `${JSON.stringify({ suite: 'http-decay', case: 'memory', tenths: tenths.map(Math.round), lastOverFirst: Number(ratio.toFixed(4)), steady: Number(steady.toFixed(4)) })}\n`,
        );
      return;
    }

    const suites = [
      { suite: 'http', method: 'POST' as const, path: '/agent' },
      { suite: 'http-health', method: 'GET' as const, path: '/agent/health' },
    ].filter((s) => options.filter === undefined || s.suite.startsWith(options.filter));
    // All waits of a run together are bounded too: 3 minutes, so a machine that never quiets
    // down costs a run at most that much.
    let quietBudgetMs = 180_000;
    let noisy = 0;
    let samplesTaken = 0;
    let worstBusy = 0;
    const allRows: Row[] = [];
    for (const { suite, method, path } of suites) {
      const rates = new Map<CaseName, number[]>(names.map((name) => [name, []]));
      const cpus = new Map<CaseName, number[]>(names.map((name) => [name, []]));
      for (let round = 0; round < rounds; round++) {
        human(`bench: ${suite}: round ${round + 1} of ${rounds} (fresh server processes, warmed 1 s each)`);
        // Each round on fresh processes: one server process can run a third slower than another
        // of the same code for its whole life (the same GET /agent/health answered at 23 and at
        // 37 CPU-µs per request by two of our servers in one run, rounds agreeing within each
        // process), so the median over rounds is a median over processes too.
        if (round > 0) {
          for (const server of servers.values()) server.child.kill();
          for (const name of names) servers.set(name, await launch(name));
        }
        for (const server of servers.values()) {
          const warm = await measure({ ...loadFor(server, method, path), seconds: 1 });
          if (warm.failed > 0)
            throw new Error(`${suite} ${server.name}: ${warm.failed} requests failed during warm-up`);
        }
        for (const name of shuffle(names)) {
          const server = servers.get(name)!;
          const gate = await quietGate(Math.min(quietWaitMs, quietBudgetMs));
          quietBudgetMs = Math.max(0, quietBudgetMs - gate.waitedMs);
          samplesTaken++;
          if (!gate.quiet) noisy++;
          worstBusy = Math.max(worstBusy, gate.busy);
          const before = await server.cpu();
          const { requestsPerSec, ok, failed } = await measure({ ...loadFor(server, method, path), seconds: slice });
          const cpu = (await server.cpu()) - before;
          if (failed > 0) throw new Error(`${suite} ${name}: ${failed} requests failed`);
          rates.get(name)!.push(requestsPerSec);
          cpus.get(name)!.push(cpu / ok);
        }
      }
      const node = median(rates.get('raw-node')!);
      const open = median(rates.get('open')!);
      const rows: Row[] = names.map((name) => {
        const values = rates.get(name)!;
        const reqPerSec = median(values);
        return {
          suite,
          case: name,
          reqPerSec,
          min: Math.min(...values),
          max: Math.max(...values),
          cpuUs: median(cpus.get(name)!),
          xNode: reqPerSec / node,
          xOpen: reqPerSec / open,
          rounds,
        };
      });
      if (options.json) {
        for (const r of rows) {
          const round = (v: number, d: number) => Math.round(v * 10 ** d) / 10 ** d;
          process.stdout.write(
            `${JSON.stringify({ suite, case: r.case, opsPerSec: round(r.reqPerSec, 1), ratio: round(r.xNode, 4), ratioToOpen: round(r.xOpen, 4), cpuUsPerRequest: round(r.cpuUs, 1) })}\n`,
          );
        }
      }
      allRows.push(...rows);
      human(table(suite, rows));
      human(
        `requests/s at ${CONNECTIONS} connections, ${method} ${path}, median of ${rounds} rounds of ${slice} s; each server in its own process`,
      );
      const control = rows.find((r) => r.case === 'raw-node-2')!.xNode;
      human(
        `noise floor: raw-node-2, a second raw node:http server of the same code, read ${control.toFixed(3)}x raw node in this run`,
      );
      human(verdicts(rows).join('\n'));
      human('');
    }
    if ((options.filter === undefined || 'stores'.startsWith(options.filter)) && only === undefined) {
      for (const server of servers.values()) server.child.kill();
      await storesSuite(argv, human);
    }
    if (against !== undefined) human(agreement(allRows, against));
    human(
      `quiet-machine gate: ${samplesTaken - noisy} of ${samplesTaken} samples began on a quiet machine (other processes under ${QUIET_BUSY * 100}% of the CPU; waited at most ${quietWaitMs / 1000} s each, 180 s in all); busiest gate reading ${(worstBusy * 100).toFixed(0)}%`,
    );
  } finally {
    generator.kill();
    for (const server of servers.values()) server.child.kill();
  }
}

/** Suite `stores` (sends/s per store, PostgreSQL behind one and two processes): bench/stores.ts in a child process, after the servers above are stopped. */
async function storesSuite(argv: readonly string[], human: (...args: unknown[]) => void): Promise<void> {
  const passed = argv.filter((a, i) => !a.startsWith('--filter') && argv[i - 1] !== '--filter');
  const child = spawn(process.execPath, [fileURLToPath(new URL('./stores.ts', import.meta.url)), ...passed], {
    stdio: 'inherit',
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) human(`bench: stores: bench/stores.ts exited ${code}`);
}

interface EarlierRatios {
  ratio: number;
  ratioToOpen: number;
}

/** The ratios of an earlier `--json` run of this benchmark, by `<suite> <case>`. */
function readEarlierRun(file: string, text: string): Map<string, EarlierRatios> {
  const earlier = new Map<string, EarlierRatios>();
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    let row: { suite?: unknown; case?: unknown; ratio?: unknown; ratioToOpen?: unknown } | null = null;
    try {
      row = JSON.parse(line);
    } catch {
      // Reported below, with the line's number.
    }
    if (typeof row?.suite !== 'string' || typeof row.case !== 'string') {
      throw new Error(`--against: ${file} is not the --json output of bench:http (line ${index + 1})`);
    }
    // The decay and stores suites print other objects: only rows with both ratios are compared.
    if (typeof row.ratio === 'number' && typeof row.ratioToOpen === 'number')
      earlier.set(`${row.suite} ${row.case}`, { ratio: row.ratio, ratioToOpen: row.ratioToOpen });
  });
  if (earlier.size === 0) throw new Error(`--against: ${file} holds no ratios of an http suite`);
  return earlier;
}

/** Each ratio of this run beside the same ratio of an earlier `--json` run, and whether they agree within 5%. */
function agreement(rows: readonly Row[], earlier: ReadonlyMap<string, EarlierRatios>): string {
  const out: string[] = [];
  let compared = 0;
  let agreeing = 0;
  for (const row of rows) {
    const before = earlier.get(`${row.suite} ${row.case}`);
    if (before === undefined) continue;
    for (const [label, now, then] of [
      ['× raw node', row.xNode, before.ratio],
      ['× open', row.xOpen, before.ratioToOpen],
    ] as const) {
      if (row.case === (label === '× open' ? 'open' : 'raw-node')) continue;
      const apart = Math.abs(now / then - 1);
      compared++;
      if (apart <= 0.05) agreeing++;
      else
        out.push(
          `  ${row.suite} ${row.case} ${label}: ${then.toFixed(3)} then, ${now.toFixed(3)} now (${(apart * 100).toFixed(1)}% apart)`,
        );
    }
  }
  const verdict = compared > 0 && agreeing === compared ? 'met' : 'MISSED';
  return [
    `against the earlier run: ${agreeing} of ${compared} ratios within 5% (every ratio within 5%: ${verdict})`,
    ...out,
  ].join('\n');
}

function table(suite: string, rows: readonly Row[]): string {
  const header = ['case', 'req/s (median)', '× raw node', '× open', 'CPU-µs/req', 'spread (min – max)'];
  const cells = rows.map((r) => [
    r.case,
    formatOps(r.reqPerSec),
    `${r.xNode.toFixed(3)}x`,
    `${r.xOpen.toFixed(3)}x`,
    r.cpuUs.toFixed(0),
    `${formatOps(r.min)} – ${formatOps(r.max)}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)));
  const line = (row: readonly string[]) =>
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [`suite ${suite}`, line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

function verdicts(rows: readonly Row[]): string[] {
  if (rows.length < PEERS.length + OURS.length) return limitVerdicts(rows);
  const get = (name: CaseName) => rows.find((r) => r.case === name)!;
  const check = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const instant = get('instant');
  const vsFastify = instant.reqPerSec / get('fastify').reqPerSec;
  const vsHono = instant.reqPerSec / get('hono').reqPerSec;
  const out = [
    `instant ${instant.xNode.toFixed(2)}x raw node (target ≥ 0.8x: ${check(instant.xNode >= 0.8)}); ${vsHono.toFixed(2)}x hono (ahead: ${check(vsHono > 1)}); ${vsFastify.toFixed(2)}x fastify (level, ≥ 0.95x: ${check(vsFastify >= 0.95)})`,
  ];
  if (rows[0]!.suite === 'http') {
    const apiToken = get('api-token');
    // jwt-hs256 has no target here: its Web Crypto HMAC is a thread-pool job per request (issue 3 judges it against that floor, in `npm run bench`).
    out.push(
      `api-token ${apiToken.xOpen.toFixed(2)}x open (target ≥ 0.9x: ${check(apiToken.xOpen >= 0.9)}); jwt-hs256 ${get('jwt-hs256').xOpen.toFixed(2)}x open`,
    );
    out.push(
      `jwt-es256-cache ${get('jwt-es256-cache').xOpen.toFixed(2)}x open (target ≥ 0.9x: ${check(get('jwt-es256-cache').xOpen >= 0.9)}); jwt-es256 ${get('jwt-es256').xOpen.toFixed(2)}x open`,
    );
    const owned = get('owned').reqPerSec / apiToken.reqPerSec;
    out.push(`owned ${owned.toFixed(3)}x api-token (ownership costs ≤ 5%: ${check(owned >= 0.95)})`);
    out.push(
      `memory ${get('memory').xNode.toFixed(2)}x raw node (target ≥ 0.35x: ${check(get('memory').xNode >= 0.35)})`,
    );
    out.push(
      `mcp-ask (tools/call ask over POST /agent/mcp) ${get('mcp-ask').xOpen.toFixed(3)}x open (POST /agent; within 15%, ≥ 0.85x: ${check(get('mcp-ask').xOpen >= 0.85)}), ${(get('mcp-ask').cpuUs - get('open').cpuUs).toFixed(0)} CPU-µs/req more`,
    );
    out.push(
      `request log on: api-token-log ${(get('api-token-log').reqPerSec / apiToken.reqPerSec).toFixed(3)}x api-token, ${(get('api-token-log').cpuUs - apiToken.cpuUs).toFixed(0)} CPU-µs/req more`,
    );
  }
  return [...out, ...limitVerdicts(rows)];
}

/** `a` over `b` as a signed percentage. */
const pct = (a: number, b: number) => `${a >= b ? '+' : ''}${((a / b - 1) * 100).toFixed(1)}%`;

/** A tracer whose spans do nothing: what the library's own span code costs, without an SDK's. */
const NOOP_SPAN: TelemetrySpan = {
  setAttribute: () => NOOP_SPAN,
  setStatus: () => NOOP_SPAN,
  recordException: () => undefined,
  addEvent: () => NOOP_SPAN,
  end: () => undefined,
};
const NOOP_TRACER: TelemetryOptions = { tracer: { startActiveSpan: (_name, _options, fn) => fn(NOOP_SPAN) } };

/** design §22, §25: all four limits add at most 10% to an apiToken route on the memory store; design §28: a no-op tracer at most 5%. */
function limitVerdicts(rows: readonly Row[]): string[] {
  const get = (name: CaseName) => rows.find((r) => r.case === name);
  const apiToken = get('api-token');
  if (apiToken === undefined) return [];
  const out: string[] = [];
  for (const name of ['api-token-limits', 'api-token-limits-all'] as const) {
    const limited = get(name);
    if (limited === undefined) continue;
    const ratio = limited.reqPerSec / apiToken.reqPerSec;
    const what = name === 'api-token-limits' ? 'requests' : 'requests, concurrent, tokens, failures';
    out.push(
      `${name} (${what} on the memory store) ${ratio.toFixed(3)}x api-token (at most 10% slower, ≥ 0.9x: ${ratio >= 0.9 ? 'met' : 'MISSED'}), ${(limited.cpuUs - apiToken.cpuUs).toFixed(1)} CPU-µs/req more (${apiToken.cpuUs.toFixed(1)} against ${limited.cpuUs.toFixed(1)}: ${pct(limited.cpuUs, apiToken.cpuUs)}; at most +10%: ${limited.cpuUs <= apiToken.cpuUs * 1.1 ? 'met' : 'MISSED'})`,
    );
  }
  const traced = get('api-token-tracer');
  if (traced !== undefined)
    out.push(
      `api-token-tracer (a no-op tracer, design §28) ${(traced.reqPerSec / apiToken.reqPerSec).toFixed(3)}x api-token, ${(traced.cpuUs - apiToken.cpuUs).toFixed(1)} CPU-µs/req more (${apiToken.cpuUs.toFixed(1)} against ${traced.cpuUs.toFixed(1)}: ${pct(traced.cpuUs, apiToken.cpuUs)}; at most +5%: ${traced.cpuUs <= apiToken.cpuUs * 1.05 ? 'met' : 'MISSED'})`,
    );
  const audited = get('api-token-audit');
  if (audited !== undefined)
    out.push(
      `api-token-audit (memoryAuditLog, design §34) ${(audited.reqPerSec / apiToken.reqPerSec).toFixed(3)}x api-token, ${(audited.cpuUs - apiToken.cpuUs).toFixed(1)} CPU-µs/req more (${apiToken.cpuUs.toFixed(1)} against ${audited.cpuUs.toFixed(1)}: ${pct(audited.cpuUs, apiToken.cpuUs)}; at most +5%: ${audited.cpuUs <= apiToken.cpuUs * 1.05 ? 'met' : 'MISSED'})`,
    );
  const floor = get('raw-node-2');
  const node = get('raw-node');
  if (floor !== undefined && node !== undefined)
    out.push(
      `A/A floor: raw-node-2 against raw-node, the same server twice, ${pct(floor.cpuUs, node.cpuUs)} CPU-µs/req (${node.cpuUs.toFixed(1)} against ${floor.cpuUs.toFixed(1)}), ${(floor.reqPerSec / node.reqPerSec).toFixed(3)}x req/s`,
    );
  return out;
}

// ---------------------------------------------------------------------------------------------
// Child processes.

// autocannon ships no types: only what is used here.
interface AutocannonResult {
  requests: { average: number; total: number };
  duration: number;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
}
interface AutocannonInstance {
  on(event: 'response', listener: () => void): void;
}
type Autocannon = (
  options: Load & { connections: number; duration?: number; pipelining: number },
  done?: (error: Error | null, result?: AutocannonResult) => void,
) => Promise<AutocannonResult> | AutocannonInstance;

if (process.argv[2] === '--load-generator') {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  process.on('message', async (load: Load & { tenths?: boolean }) => {
    const { seconds, amount, tenths: byTenth, ...rest } = load;
    const options = {
      ...rest,
      connections: CONNECTIONS,
      pipelining: 1,
      ...(amount !== undefined ? { amount } : { duration: seconds }),
    };
    if (byTenth === true && amount !== undefined) {
      // The rate of each tenth of the requests, from the times its answers came back.
      const step = amount / 10;
      const marks = [performance.now()];
      let answered = 0;
      const result = await new Promise<AutocannonResult>((resolve, reject) => {
        const instance = autocannon(options, (error, done) =>
          error ? reject(error) : resolve(done!),
        ) as AutocannonInstance;
        instance.on('response', () => {
          if (++answered % step === 0) marks.push(performance.now());
        });
      });
      const tenths = marks.slice(1).map((mark, i) => (step * 1000) / (mark - marks[i]!));
      process.send?.({ tenths, failed: result.non2xx + result.errors + result.timeouts });
      return;
    }
    const started = performance.now();
    const result = await (autocannon(options) as Promise<AutocannonResult>);
    // A fixed amount: its own clock (autocannon's duration is in whole seconds).
    const requestsPerSec =
      amount !== undefined ? (result['2xx'] * 1000) / (performance.now() - started) : result.requests.average;
    process.send?.({
      requestsPerSec,
      ok: result['2xx'],
      failed: result.non2xx + result.errors + result.timeouts,
    } satisfies LoadResult);
  });
} else if (process.argv[2] === '--server') {
  const name = process.argv[3] as CaseName;
  process.on('message', async (message: string) => {
    if (message === 'start') process.send?.(await startServer(name));
    else if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send?.(user + system);
    }
  });
  process.on('disconnect', () => process.exit(0));
} else {
  await main();
}
