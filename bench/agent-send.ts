// In-process benchmark of `agent.send()` (`node bench/agent-send.ts [--json] [--seconds <n>]
// [--rounds <n>] [--filter <case prefix>]`): the echo agent sending `hello` without a
// sessionId (a new session each time), as `POST /agent` with `{"message":"hello"}` does, with
// the options the HTTP handler passes (the apiToken() principal, a request's signal).
// Cases: `discard` (a store that keeps nothing, bench/http-shared.ts), `discard-owned` (the same
// with `sessions: 'owned'`), `memory` (memoryStore() at its defaults: past 1,000 sessions every
// send drops the oldest), `memory-owned`; `discard-telemetry` (the `discard` agent with
// `telemetry` whose tracer's spans do nothing, design §28); `route` (`POST /` through
// `agentHandler()` behind `apiToken()`, over the `discard` agent) and `route-telemetry` (the same,
// handler and agent with that tracer).
// `--before <dir>`: also runs every case on the tree at <dir> (its src/, e.g. `git archive
// f5c73b7 src | tar -x -C /tmp/before`), as `<case>@before`, in the same interleaved rounds, so
// that a change is measured against its parent under the same machine conditions.
// Rounds interleave: each round runs every case once, in a fresh random order, for one time
// slice; the result per case is the median over rounds of sends/s and of process CPU-µs per
// send (process.cpuUsage(): every thread, garbage collection too). One full collection comes
// after the warm-up, none between slices: a forced full collection leaves the young generation
// small and its next scavenges slow for about 30 ms, so that a 100 ms slice after one measured
// the collector's recovery (up to twice a send's steady CPU) more than the send, and penalized
// whichever case allocates more (docs/design.md §30).
// Ratios: owned/shared (issue 17: ownership costs ≤ 5% of req/s over HTTP) and memory/discard
// (issue 19: the memory store's send as close to the discarding one as it can be).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Principal, Store } from '../src/agent/types.ts';
import { discardStore } from './http-shared.ts';
import { formatOps, matchesFilter, median, parseArgs, shuffle } from './lib.ts';

// Runs with the plain `node bench/agent-send.ts` too: gc() is exposed at run time.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const TOKEN = 'bench-api-token-0123456789';
const MESSAGE = 'hello';

type AgentModule = typeof import('../src/agent/index.ts');
type AuthModule = typeof import('../src/auth/index.ts');
type HttpModule = typeof import('../src/http/index.ts');
interface Tree {
  agent: AgentModule;
  auth: AuthModule;
  http: HttpModule;
}

async function loadTree(root: URL): Promise<Tree> {
  const [agent, auth, http] = await Promise.all([
    import(new URL('src/agent/index.ts', root).href),
    import(new URL('src/auth/index.ts', root).href),
    import(new URL('src/http/index.ts', root).href),
  ]);
  return { agent: agent as AgentModule, auth: auth as AuthModule, http: http as HttpModule };
}

/** A tracer whose spans do nothing: what telemetry itself costs, without an SDK's. */
const NOOP_SPAN = {
  setAttribute: () => NOOP_SPAN,
  setStatus: () => NOOP_SPAN,
  recordException: () => undefined,
  addEvent: () => NOOP_SPAN,
  end: () => undefined,
};
const NOOP_TELEMETRY = {
  tracer: {
    startActiveSpan: <T>(_name: string, _options: unknown, fn: (span: typeof NOOP_SPAN) => T): T => fn(NOOP_SPAN),
  },
};

/** The principal an apiToken() entry of `tree` hands out, taken from the entry itself. */
function apiTokenPrincipal(tree: Tree): Principal {
  const entry = tree.auth.apiToken(TOKEN);
  const principal = entry(new Request('http://localhost/agent', { headers: { authorization: `Bearer ${TOKEN}` } }));
  if (principal === null || principal === undefined || principal instanceof Promise)
    throw new Error('apiToken() did not accept its own token');
  // apiToken() hands out a complete principal (makePrincipal()), authenticator 'api-token'.
  return principal as Principal;
}

type Send = () => Promise<unknown>;

function sender(tree: Tree, store: Store, sessions: 'shared' | 'owned', traced = false): Send {
  const agent = tree.agent.createAgent({
    name: 'bench',
    model: tree.agent.echoModel(),
    store,
    sessions,
    ...(traced && { telemetry: NOOP_TELEMETRY }),
  });
  const principal = apiTokenPrincipal(tree);
  const { signal } = new AbortController();
  // What the handler passes: parseSendBody() leaves sessionId and metadata undefined.
  return () => agent.send(MESSAGE, { principal, sessionId: undefined, metadata: undefined, signal });
}

/** `POST /` with `{"message":"hello"}` through the route handler, behind `apiToken()`, its answer read. */
function router(tree: Tree, traced = false): Send {
  const telemetry = traced ? { telemetry: NOOP_TELEMETRY } : {};
  const agent = tree.agent.createAgent({
    name: 'bench',
    model: tree.agent.echoModel(),
    store: discardStore(),
    ...telemetry,
  });
  const handler = tree.http.agentHandler(agent, { auth: tree.auth.apiToken(TOKEN), ...telemetry });
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  return async () => {
    const response = await handler(
      new Request('http://localhost/', { method: 'POST', headers, body: '{"message":"hello"}' }),
    );
    return response.text();
  };
}

/** Cases of this tree only: a tree before telemetry has no such option. */
const NEW_CASES = new Set(['discard-telemetry', 'route-telemetry']);

const CASES: Record<string, (tree: Tree) => Send> = {
  discard: (tree) => sender(tree, discardStore(), 'shared'),
  'discard-telemetry': (tree) => sender(tree, discardStore(), 'shared', true),
  route: (tree) => router(tree),
  'route-telemetry': (tree) => router(tree, true),
  'discard-owned': (tree) => sender(tree, discardStore(), 'owned'),
  memory: (tree) => sender(tree, tree.agent.memoryStore(), 'shared'),
  'memory-owned': (tree) => sender(tree, tree.agent.memoryStore(), 'owned'),
};

interface Sample {
  opsPerSec: number;
  cpuUs: number;
}

let sink: unknown;
async function slice(send: Send, ms: number): Promise<Sample> {
  let ops = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  let elapsed = 0;
  do {
    for (let i = 0; i < 64; i++) sink = await send();
    ops += 64;
    elapsed = performance.now() - start;
  } while (elapsed < ms);
  const used = process.cpuUsage(cpu);
  return { opsPerSec: (ops * 1000) / elapsed, cpuUs: (used.user + used.system) / ops };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const at = argv.findIndex((arg) => arg === '--before' || arg.startsWith('--before='));
  let before: string | undefined;
  if (at >= 0) {
    before = argv[at]!.includes('=') ? argv[at]!.slice('--before='.length) : argv[at + 1];
    if (before === undefined || before === '') throw new Error('--before needs a directory');
    argv.splice(at, argv[at]!.includes('=') ? 1 : 2);
  }
  const options = parseArgs(argv);
  // 96 rounds of 25 ms unless told: pairs of slices close in time, for differences of a few percent.
  if (!argv.some((arg) => arg.startsWith('--rounds'))) options.rounds = 96;
  const caseNames = Object.keys(CASES).filter((name) => matchesFilter(name, options.filter));
  if (caseNames.length === 0) throw new Error(`no case matches --filter ${options.filter}`);
  const sends = new Map<string, Send>();
  const current = await loadTree(new URL('../', import.meta.url));
  for (const name of caseNames) sends.set(name, CASES[name]!(current));
  if (before !== undefined) {
    const root = pathToFileURL(`${isAbsolute(before) ? before : resolve(before)}/`);
    const old = await loadTree(root);
    for (const name of caseNames) if (!NEW_CASES.has(name)) sends.set(`${name}@before`, CASES[name]!(old));
  }
  const names = [...sends.keys()];
  const sliceMs = (options.seconds * 1000) / options.rounds;
  // Warm-up: JIT, and the memory stores filled past their 1,000 sessions (the steady state).
  for (const name of names) await slice(sends.get(name)!, 300);
  gc();
  const samples = new Map<string, Sample[]>(names.map((name) => [name, []]));
  for (let round = 0; round < options.rounds; round++) {
    for (const name of shuffle(names)) {
      samples.get(name)!.push(await slice(sends.get(name)!, sliceMs));
    }
  }
  // Per-round ratios of two cases measured in the same round: steadier than a ratio of medians
  // when the machine's speed drifts between rounds.
  const paired = (a: string, b: string, of: (s: Sample) => number) =>
    median(samples.get(a)!.map((sample, round) => of(sample) / of(samples.get(b)![round]!)));
  const rows = names.map((name) => {
    const values = samples.get(name)!;
    const ops = values.map((s) => s.opsPerSec);
    return {
      case: name,
      opsPerSec: median(ops),
      cpuUs: median(values.map((s) => s.cpuUs)),
      min: Math.min(...ops),
      max: Math.max(...ops),
    };
  });
  const get = (name: string) => rows.find((r) => r.case === name);
  const ratios: { name: string; ops: number; cpu: number }[] = [];
  const pairs = [
    ['discard-owned', 'discard'],
    ['memory-owned', 'memory'],
    ['memory', 'discard'],
    ['memory-owned', 'discard-owned'],
    ['discard-telemetry', 'discard'],
    ['route-telemetry', 'route'],
  ];
  const withBefore =
    before === undefined
      ? pairs
      : [
          ...pairs,
          ...pairs.map(([a, b]) => [`${a}@before`, `${b}@before`]),
          ...caseNames.map((name) => [name, `${name}@before`]),
        ];
  for (const [a, b] of withBefore as [string, string][]) {
    const x = get(a);
    const y = get(b);
    if (x !== undefined && y !== undefined)
      ratios.push({ name: `${a}/${b}`, ops: paired(a, b, (s) => s.opsPerSec), cpu: paired(a, b, (s) => s.cpuUs) });
  }
  if (options.json) {
    for (const r of rows)
      process.stdout.write(
        `${JSON.stringify({ suite: 'agent-send', case: r.case, opsPerSec: Math.round(r.opsPerSec), cpuUsPerSend: Math.round(r.cpuUs * 10) / 10 })}\n`,
      );
    for (const r of ratios)
      process.stdout.write(
        `${JSON.stringify({ suite: 'agent-send', ratio: r.name, ops: Math.round(r.ops * 1e4) / 1e4, cpu: Math.round(r.cpu * 1e4) / 1e4 })}\n`,
      );
    return;
  }
  const header = ['case', 'sends/s (median)', 'CPU-µs/send', 'spread (min – max)'];
  const cells = rows.map((r) => [
    r.case,
    formatOps(r.opsPerSec),
    r.cpuUs.toFixed(1),
    `${formatOps(r.min)} – ${formatOps(r.max)}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)));
  const line = (row: readonly string[]) =>
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  console.log(
    `agent.send('hello'), a new session each, median of ${options.rounds} interleaved rounds of ${sliceMs.toFixed(0)} ms`,
  );
  console.log([line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n'));
  console.log("ratios: median over rounds of the two cases' ratio in the same round");
  for (const r of ratios) console.log(`${r.name}: ${r.ops.toFixed(3)}x sends/s, ${r.cpu.toFixed(3)}x CPU per send`);
  const owned = ratios.find((r) => r.name === 'discard-owned/discard');
  // In process, so that over HTTP (about 200 CPU-µs per request) ownership stays well under 5%.
  if (owned !== undefined)
    console.log(
      `ownership costs ≤ 3% more CPU per discard send: ${owned.cpu <= 1.03 ? 'met' : 'MISSED'} (${owned.cpu.toFixed(3)}x)`,
    );
  // Design §28: a tracer whose spans do nothing costs at most 5% of an echo send.
  for (const name of ['discard-telemetry/discard', 'route-telemetry/route']) {
    const traced = ratios.find((r) => r.name === name);
    if (traced !== undefined)
      console.log(
        `${name}: telemetry with a no-op tracer keeps ≥ 95% of sends/s: ${traced.ops >= 0.95 ? 'met' : 'MISSED'} (${traced.ops.toFixed(3)}x)`,
      );
  }
  void sink;
}

await main();
