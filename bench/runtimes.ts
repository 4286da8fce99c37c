// The route handler on Bun (`Bun.serve`) and Deno (`Deno.serve`), beside each runtime's bare
// server answering the same route by hand: `node bench/runtimes.ts [--rounds <n>] [--seconds <n>]
// [--quiet-wait <s>]`. Each server runs in its own process of its runtime; the load generator
// (autocannon, 50 connections, from bench/http.ts) in a Node process. Rounds interleave every
// server of both runtimes in a fresh random order, each sample behind the quiet-machine gate;
// results are medians, with CPU-µs per request of the server process (process.cpuUsage()).
// Cases per runtime: `bare` (the runtime's server, JSON read and written by hand), `instant`
// (agentHandler() with a stand-in agent that answers at once, no auth), `api-token` (the same
// behind apiToken()), `open` (the echo agent on a store that keeps nothing, no auth).
import { agentHandler } from '../src/http/handler.ts';
import { createAgent, echoModel } from '../src/agent/index.ts';
import { apiToken } from '../src/auth/index.ts';
import { discardStore, runResult } from './http-shared.ts';

const TOKEN = 'bench-api-token-0123456789';
const CASES = ['bare', 'instant', 'api-token', 'open'] as const;
type Case = (typeof CASES)[number];
const RUNTIMES = ['bun', 'deno'] as const;

interface Runtime {
  serve(fetch: (request: Request) => Response | Promise<Response>): Promise<string>;
  cpuMicros(): number;
  args: readonly string[];
}

/** The runtime this process runs on, when it is Bun or Deno. */
function runtime(): Runtime | undefined {
  const g = globalThis as unknown as {
    Bun?: {
      serve(options: { port: number; hostname: string; fetch: (request: Request) => Response | Promise<Response> }): {
        port: number;
      };
    };
    Deno?: {
      serve(
        options: { port: number; hostname: string; onListen(addr: { port: number }): void },
        fetch: (request: Request) => Response | Promise<Response>,
      ): unknown;
      args: string[];
    };
    process?: { cpuUsage(): { user: number; system: number }; argv: string[] };
  };
  const cpuMicros = () => {
    const { user, system } = g.process!.cpuUsage();
    return user + system;
  };
  if (g.Bun !== undefined) {
    const bun = g.Bun;
    return {
      serve: async (fetch) => `http://127.0.0.1:${bun.serve({ port: 0, hostname: '127.0.0.1', fetch }).port}`,
      cpuMicros,
      args: g.process!.argv.slice(2),
    };
  }
  if (g.Deno !== undefined) {
    const deno = g.Deno;
    return {
      serve: (fetch) =>
        new Promise((resolve) =>
          deno.serve(
            { port: 0, hostname: '127.0.0.1', onListen: ({ port }) => resolve(`http://127.0.0.1:${port}`) },
            fetch,
          ),
        ),
      cpuMicros,
      args: deno.args,
    };
  }
  return undefined;
}

const HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' };

/** The handler of one case; `GET /__cpu` answers the process's CPU time in µs (for the orchestrator). */
function handlerFor(name: Case): (request: Request) => Response | Promise<Response> {
  if (name === 'bare') {
    return async (request) => {
      const { pathname } = new URL(request.url);
      if (request.method === 'GET' && pathname === '/agent/health')
        return new Response('{"status":"ok"}', { headers: HEADERS });
      if (request.method !== 'POST' || pathname !== '/agent')
        return new Response('{"error":"Not Found"}', { status: 404, headers: HEADERS });
      const { message } = (await request.json()) as { message: string };
      return new Response(JSON.stringify(runResult(message)), { headers: HEADERS });
    };
  }
  const echo = createAgent({ name: 'bench', model: echoModel(), store: discardStore() });
  const agent =
    name === 'open' ? echo : Object.freeze({ ...echo, send: async (message: string) => runResult(message) });
  return agentHandler(agent, { basePath: '/agent', ...(name === 'api-token' && { auth: [apiToken(TOKEN)] }) });
}

async function server(rt: Runtime, name: Case): Promise<void> {
  const handler = handlerFor(name);
  const url = await rt.serve((request) =>
    new URL(request.url).pathname === '/__cpu' ? new Response(String(rt.cpuMicros())) : handler(request),
  );
  console.log(url);
}

async function orchestrate(): Promise<void> {
  const { fork, spawn } = await import('node:child_process');
  const { createInterface } = await import('node:readline');
  const { ask, quietGate, QUIET_BUSY } = await import('./http-shared.ts');
  const { formatOps, median, shuffle } = await import('./lib.ts');
  type LoadResult = import('./http-shared.ts').LoadResult;
  const argv = process.argv.slice(2);
  const option = (name: string, fallback: number) => {
    const at = argv.indexOf(name);
    return at >= 0 ? Number(argv[at + 1]) : fallback;
  };
  const rounds = option('--rounds', 5);
  const seconds = option('--seconds', 3);
  const quietWaitMs = option('--quiet-wait', 15) * 1000;
  const bin = (name: string) => new URL(`../node_modules/.bin/${name}`, import.meta.url).pathname;
  const script = new URL(import.meta.url).pathname;

  const servers: { runtime: string; name: Case; url: string; kill(): void }[] = [];
  const generator = fork(new URL('./http.ts', import.meta.url), ['--load-generator'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    for (const rt of RUNTIMES) {
      for (const name of CASES) {
        const args = rt === 'bun' ? [script, '--server', name] : ['run', '-A', '--no-check', script, '--server', name];
        const child = spawn(bin(rt), args, { stdio: ['ignore', 'pipe', 'inherit'] });
        const url = await new Promise<string>((resolve, reject) => {
          createInterface({ input: child.stdout! }).once('line', resolve);
          child.once('exit', (code) => reject(new Error(`${rt} ${name} exited (${code}) before listening`)));
        });
        servers.push({ runtime: rt, name, url, kill: () => child.kill() });
      }
    }
    const cpu = async (url: string) => Number(await (await fetch(`${url}/__cpu`)).text());
    const suites = [
      { suite: 'POST /agent', method: 'POST' as const, path: '/agent', body: '{"message":"hello"}' },
      { suite: 'GET /agent/health', method: 'GET' as const, path: '/agent/health', body: undefined },
    ];
    let quiet = 0;
    let taken = 0;
    for (const { suite, method, path, body } of suites) {
      const load = (url: string, name: Case, secs: number) => ({
        url: url + path,
        method,
        headers: {
          'content-type': 'application/json',
          ...(name === 'api-token' && { authorization: `Bearer ${TOKEN}` }),
        },
        ...(body !== undefined && { body }),
        seconds: secs,
      });
      for (const s of servers) {
        const warm = await ask<LoadResult>(generator, load(s.url, s.name, 1));
        if (warm.failed > 0) throw new Error(`${s.runtime} ${s.name}: ${warm.failed} requests failed during warm-up`);
      }
      const rates = new Map(servers.map((s) => [s, [] as number[]]));
      const cpus = new Map(servers.map((s) => [s, [] as number[]]));
      for (let round = 0; round < rounds; round++) {
        console.error(`runtimes: ${suite}: round ${round + 1} of ${rounds}`);
        for (const s of shuffle(servers)) {
          const gate = await quietGate(quietWaitMs);
          taken++;
          if (gate.quiet) quiet++;
          const before = await cpu(s.url);
          const { requestsPerSec, ok, failed } = await ask<LoadResult>(generator, load(s.url, s.name, seconds));
          const used = (await cpu(s.url)) - before;
          if (failed > 0) throw new Error(`${s.runtime} ${s.name}: ${failed} requests failed`);
          rates.get(s)!.push(requestsPerSec);
          cpus.get(s)!.push(used / ok);
        }
      }
      console.log(
        `${suite}: requests/s at 50 connections, median of ${rounds} rounds of ${seconds} s; ratios to the same runtime's bare server`,
      );
      console.log(
        ['runtime', 'case', 'req/s', '× bare', 'CPU-µs/req']
          .map((h, i) => (i < 2 ? h.padEnd(10) : h.padStart(11)))
          .join(''),
      );
      for (const rt of RUNTIMES) {
        const bare = median(rates.get(servers.find((s) => s.runtime === rt && s.name === 'bare')!)!);
        for (const s of servers.filter((x) => x.runtime === rt)) {
          const rate = median(rates.get(s)!);
          console.log(
            [
              rt.padEnd(10),
              s.name.padEnd(10),
              formatOps(rate).padStart(11),
              `${(rate / bare).toFixed(3)}x`.padStart(11),
              median(cpus.get(s)!).toFixed(0).padStart(11),
            ].join(''),
          );
        }
      }
      console.log('');
    }
    console.log(
      `quiet-machine gate: ${quiet} of ${taken} samples began on a quiet machine (other processes under ${QUIET_BUSY * 100}% of the CPU; waited at most ${quietWaitMs / 1000} s each)`,
    );
  } finally {
    generator.kill();
    for (const s of servers) s.kill();
  }
}

const rt = runtime();
if (rt !== undefined && rt.args[0] === '--server') await server(rt, rt.args[1] as Case);
else await orchestrate();
