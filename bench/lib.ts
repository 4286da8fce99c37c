/** One operation to measure; a returned promise is awaited before the next call. */
export type Op = () => unknown | Promise<unknown>;

export interface SuiteSpec {
  suite: string;
  /** The case every ratio is taken against: the floor or the baseline. */
  baseline: string;
  cases: Record<string, Op>;
  /** Printed under the suite's table. */
  note?: string;
  /**
   * `false`: no full collection before each slice. For cases of a few µs whose difference is a
   * few percent: after a forced collection the young generation is small and its scavenges slow
   * for about 30 ms, which bills a 100 ms slice for the collector's recovery (up to twice a
   * send's steady CPU), and bills most the case that allocates more. Default `true`.
   */
  collect?: boolean;
  /**
   * `true`: each case's `ratio` is the median over rounds of its ops/s over the baseline's in the
   * same round (as `paired` gives), not a ratio of the two medians. Default `false`.
   */
  paired?: boolean;
  /**
   * Optional verdict derived from the medians (ops/s by case), printed under the table. `paired(a,
   * b)`: the median over rounds of a's ops/s over b's in the same round, steadier than a ratio of
   * medians when the machine's speed drifts between rounds (a difference of a few percent).
   */
  verdict?: (opsPerSec: Readonly<Record<string, number>>, paired: (a: string, b: string) => number) => string;
}

export interface CaseResult {
  suite: string;
  case: string;
  /** Median ops/s over the rounds. */
  opsPerSec: number;
  /** `opsPerSec` divided by the baseline's median. */
  ratio: number;
  min: number;
  max: number;
  rounds: number;
  /** Ops/s of each round, in round order (measureSuite's results). */
  samples?: readonly number[];
}

export interface BenchOptions {
  json: boolean;
  filter: string | undefined;
  /** Measured time per case, in seconds, spread over `rounds`. */
  seconds: number;
  rounds: number;
}

// Many short rounds: on this kind of shared VM a case's speed flips between two levels every
// 50-100 ms (thread placement of the crypto worker), and a median over 24 rounds of 100 ms
// moves about 1% between runs where one over 6 rounds of 200 ms moved 10%.
export const DEFAULT_OPTIONS: BenchOptions = { json: false, filter: undefined, seconds: 2.4, rounds: 24 };

/** `--json`, `--filter <name>`, `--seconds <n>`, `--rounds <n>` (also `--name=value`). */
export function parseArgs(argv: readonly string[]): BenchOptions {
  const options = { ...DEFAULT_OPTIONS };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      const v = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (v === undefined || v === '') throw new Error(`${name} needs a value`);
      return v;
    };
    if (name === '--json') options.json = true;
    else if (name === '--filter') options.filter = value();
    else if (name === '--seconds') options.seconds = positive(name, value());
    else if (name === '--rounds') options.rounds = Math.max(1, Math.round(positive(name, value())));
    else throw new Error(`unknown argument ${arg} (use --json, --filter <suite>, --seconds <n>, --rounds <n>)`);
  }
  return options;
}

function positive(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number (got ${text})`);
  return n;
}

/** A suite runs when `--filter` is absent, equals its name, or is a prefix of it. */
export function matchesFilter(suite: string, filter: string | undefined): boolean {
  return filter === undefined || suite.startsWith(filter);
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function shuffle<T>(items: readonly T[], random: () => number = Math.random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Keeps results alive so that no call is optimized away. */
let sink: unknown;
export function lastSink(): unknown {
  return sink;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/** Runs `op` `count` times; awaits only when it returned a promise (sync ops stay sync). */
async function runBatch(op: Op, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const result = op();
    sink = isThenable(result) ? await result : result;
  }
}

/** Ops per batch so that one batch lasts about `targetMs`: timer reads stay rare next to the work. */
async function calibrate(op: Op, targetMs: number): Promise<number> {
  let count = 1;
  for (;;) {
    const start = performance.now();
    await runBatch(op, count);
    const elapsed = performance.now() - start;
    if (elapsed >= targetMs || count >= 1 << 24) {
      return Math.max(1, Math.round((count * targetMs) / Math.max(elapsed, 1e-3)));
    }
    count *= elapsed < targetMs / 16 ? 8 : 2;
  }
}

/**
 * A full collection before each slice (when run with `--expose-gc`, as `npm run bench` is), so
 * that a case pays for its own garbage and not for what the case before it left behind (the
 * jwks suite's cold-1000 left enough to swing its neighbours by 20%). `npm run bench` also fixes
 * the young generation at 16 MiB, its size in a busy server, so that a collection does not
 * shrink it and bill the next case for more scavenges.
 */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Calls `op` in batches for `sliceMs`; returns ops/s. */
async function measureSlice(op: Op, batch: number, sliceMs: number): Promise<number> {
  let ops = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    await runBatch(op, batch);
    ops += batch;
    elapsed = performance.now() - start;
  } while (elapsed < sliceMs);
  return (ops * 1000) / elapsed;
}

/**
 * Measures every case of a suite interleaved: after a warm-up, each round runs every case,
 * in a fresh random order, for one time slice; the result is the median over rounds, so
 * drift (GC, frequency, neighbours on the machine) touches every case alike.
 */
export async function measureSuite(
  spec: SuiteSpec,
  options: Pick<BenchOptions, 'seconds' | 'rounds'>,
): Promise<CaseResult[]> {
  const names = Object.keys(spec.cases);
  if (!names.includes(spec.baseline))
    throw new Error(`suite ${spec.suite}: baseline "${spec.baseline}" is not one of its cases`);
  const sliceMs = (options.seconds * 1000) / options.rounds;
  const batchMs = Math.min(5, Math.max(0.5, sliceMs / 50));
  const batches = new Map<string, number>();
  for (const name of names) {
    const op = spec.cases[name]!;
    await calibrate(op, batchMs); // warm-up: JIT, lazy caches
    await measureSlice(op, await calibrate(op, batchMs), Math.min(100, sliceMs / 2));
    batches.set(name, await calibrate(op, batchMs));
  }
  const samples = new Map<string, number[]>(names.map((name) => [name, []]));
  collectGarbage();
  for (let round = 0; round < options.rounds; round++) {
    for (const name of shuffle(names)) {
      if (spec.collect !== false) collectGarbage();
      samples.get(name)!.push(await measureSlice(spec.cases[name]!, batches.get(name)!, sliceMs));
    }
  }
  const baseline = samples.get(spec.baseline)!;
  const base = median(baseline);
  return names.map((name) => {
    const values = samples.get(name)!;
    const opsPerSec = median(values);
    return {
      suite: spec.suite,
      case: name,
      opsPerSec,
      ratio: spec.paired ? median(values.map((value, round) => value / baseline[round]!)) : opsPerSec / base,
      min: Math.min(...values),
      max: Math.max(...values),
      rounds: values.length,
      samples: values,
    };
  });
}

/** One line of `--json` output. */
export function jsonLine(result: CaseResult): string {
  return JSON.stringify({
    suite: result.suite,
    case: result.case,
    opsPerSec: round(result.opsPerSec, 2),
    ratio: round(result.ratio, 4),
  });
}

/** The median over rounds of `a`'s ops/s over `b`'s in the same round, for cases of `results`. */
export function pairedRatio(results: readonly CaseResult[], a: string, b: string): number {
  const of = (name: string) => {
    const found = results.find((r) => r.case === name);
    if (found?.samples === undefined) throw new Error(`no rounds of a case ${name}`);
    return found.samples;
  };
  const [x, y] = [of(a), of(b)];
  return median(x.map((value, round) => value / y[round]!));
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function formatOps(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (value >= 100) return Math.round(value).toLocaleString('en-US');
  return value.toPrecision(3);
}

/** The human table of one suite: case, median ops/s, ratio to the baseline, spread min–max. */
export function formatTable(spec: Pick<SuiteSpec, 'suite' | 'baseline'>, results: readonly CaseResult[]): string {
  const rows = results.map((r) => [
    r.case === spec.baseline ? `${r.case} (baseline)` : r.case,
    formatOps(r.opsPerSec),
    `${r.ratio.toFixed(r.ratio >= 10 ? 1 : 3)}x`,
    `${formatOps(r.min)} – ${formatOps(r.max)}`,
  ]);
  const header = ['case', 'ops/s (median)', 'ratio', 'spread (min – max)'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [`suite ${spec.suite}`, line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join(
    '\n',
  );
}
