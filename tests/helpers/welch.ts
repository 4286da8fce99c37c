/**
 * dudect-style leak detection (Reparaz, Balasch, Verbauwhede, "Dude, is my code constant time?",
 * 2017): time two classes of inputs in random interleaved order, crop the slow tail, and run
 * Welch's t-test on the two samples. |t| above `LEAK_THRESHOLD` means the classes differ.
 */
import type { Random } from './prng.ts';

/** dudect's threshold: |t| over 4.5 is a leak with overwhelming confidence (p ≈ 1e-5 per test). */
export const LEAK_THRESHOLD = 4.5;

/**
 * Welch's t statistic of two samples. A sample with fewer than two values (a crop that kept
 * none of one class: the classes do not even overlap) counts as an infinite difference.
 */
export function welchT(a: readonly number[], b: readonly number[]): number {
  if (a.length < 2 || b.length < 2) return a.length < b.length ? Infinity : -Infinity;
  const [meanA, varA] = meanAndVariance(a);
  const [meanB, varB] = meanAndVariance(b);
  const standardError = Math.sqrt(varA / a.length + varB / b.length);
  return standardError === 0 ? 0 : (meanA - meanB) / standardError;
}

function meanAndVariance(xs: readonly number[]): [number, number] {
  let mean = 0;
  for (const x of xs) mean += x;
  mean /= xs.length;
  let squares = 0;
  for (const x of xs) squares += (x - mean) ** 2;
  return [mean, squares / (xs.length - 1)];
}

/** The `p`-th percentile (0–100) of the pooled samples. */
export function pooledPercentile(a: readonly number[], b: readonly number[], p: number): number {
  const sorted = [...a, ...b].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The percentile crops tested: timing noise on a shared machine lives in the slow tail. */
export const CROPS = [50, 75, 90] as const;

export interface LeakReport {
  /** The largest |t| over the crops: the statistic compared with `LEAK_THRESHOLD`. */
  readonly maxAbsT: number;
  readonly crops: readonly {
    readonly percentile: number;
    readonly t: number;
    readonly kept: readonly [number, number];
  }[];
  /** Median time per call of each class, in microseconds. */
  readonly medians: readonly [number, number];
  /** The smallest mean difference (ns) the 90% crop could tell apart at the threshold. */
  readonly resolutionNs: number;
}

/** Welch's t over several crops of the pooled samples (each crop keeps samples below a pooled percentile). */
export function leakReport(a: readonly number[], b: readonly number[]): LeakReport {
  const crops = CROPS.map((percentile) => {
    const limit = pooledPercentile(a, b, percentile);
    const keptA = a.filter((x) => x < limit);
    const keptB = b.filter((x) => x < limit);
    return { percentile, t: welchT(keptA, keptB), kept: [keptA.length, keptB.length] as const, keptA, keptB };
  });
  const widest = crops[crops.length - 1]!;
  const [, varA] = meanAndVariance(widest.keptA);
  const [, varB] = meanAndVariance(widest.keptB);
  const median = (xs: readonly number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1]! * 1000;
  return {
    maxAbsT: Math.max(...crops.map((c) => Math.abs(c.t))),
    crops: crops.map(({ percentile, t, kept }) => ({ percentile, t, kept })),
    medians: [median(a), median(b)],
    resolutionNs: LEAK_THRESHOLD * Math.sqrt(varA / widest.keptA.length + varB / widest.keptB.length) * 1e6,
  };
}

/**
 * Times `calls[0]` and `calls[1]` `samples` times each, in one random interleaved order (so
 * drift and bursts of load fall on both classes alike), after `warmup` untimed calls of each.
 * Each sample is the milliseconds `performance.now()` measures around one awaited call.
 * Resolves `null` when `deadline` (a `performance.now()` value) passes first: on a machine so
 * overloaded that the calls crawl, the caller reports that it could not measure.
 */
export async function measureInterleaved(
  calls: readonly [() => Promise<unknown>, () => Promise<unknown>],
  options: { samples: number; warmup: number; random: Random; deadline?: number },
): Promise<[number[], number[]] | null> {
  const { samples, warmup, random, deadline = Infinity } = options;
  for (let i = 0; i < warmup; i++) {
    await calls[0]();
    await calls[1]();
  }
  const order = new Uint8Array(2 * samples);
  order.fill(1, samples);
  for (let i = order.length - 1; i > 0; i--) {
    const j = random.int(i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const times: [number[], number[]] = [[], []];
  for (const [i, which] of order.entries()) {
    if (i % 256 === 0 && performance.now() > deadline) return null;
    const call = calls[which as 0 | 1];
    const start = performance.now();
    await call();
    times[which as 0 | 1].push(performance.now() - start);
  }
  return times;
}

/** One line for the test log: the statistic per crop and the medians. */
export function describeReport(name: string, report: LeakReport): string {
  const crops = report.crops.map((c) => `p${c.percentile} t=${c.t.toFixed(2)}`).join(', ');
  return `${name}: max|t|=${report.maxAbsT.toFixed(2)} (${crops}); medians ${report.medians[0].toFixed(2)}/${report.medians[1].toFixed(2)} µs; resolution ${report.resolutionNs.toFixed(0)} ns`;
}
