import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  formatTable,
  jsonLine,
  matchesFilter,
  measureSuite,
  median,
  pairedRatio,
  parseArgs,
  shuffle,
} from '../../bench/lib.ts';

test('bench: --filter runs the suites whose name equals it or starts with it', () => {
  assert.equal(matchesFilter('jwt', 'jwt'), true);
  assert.equal(matchesFilter('jwt-rs256', 'jwt'), true);
  assert.equal(matchesFilter('auth', 'jwt'), false);
  assert.equal(matchesFilter('oidc-jwt', 'jwt'), false);
  assert.equal(matchesFilter('auth', undefined), true);
});

test('bench: arguments --json, --filter <suite>, --seconds <n>; anything else is refused', () => {
  assert.deepEqual(parseArgs(['--json', '--filter', 'auth', '--seconds', '0.5']), {
    json: true,
    filter: 'auth',
    seconds: 0.5,
    rounds: 24,
  });
  assert.equal(parseArgs(['--filter=jwt']).filter, 'jwt');
  assert.equal(parseArgs([]).json, false);
  assert.throws(() => parseArgs(['--seconds', '0']));
  assert.throws(() => parseArgs(['--filter']));
  assert.throws(() => parseArgs(['--fast']));
});

test('bench: the reported value is the median of the rounds', () => {
  assert.equal(median([5, 1, 3]), 3);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.deepEqual(shuffle([1, 2, 3, 4], () => 0).sort(), [1, 2, 3, 4]);
});

test('bench: --json prints exactly { suite, case, opsPerSec, ratio }', () => {
  const line = jsonLine({
    suite: 'auth',
    case: 'basic-1',
    opsPerSec: 1234.5678,
    ratio: 0.123456,
    min: 1,
    max: 2,
    rounds: 6,
  });
  assert.deepEqual(Object.keys(JSON.parse(line)), ['suite', 'case', 'opsPerSec', 'ratio']);
  assert.deepEqual(JSON.parse(line), { suite: 'auth', case: 'basic-1', opsPerSec: 1234.57, ratio: 0.1235 });
});

test('bench: every case is measured each round, async ops are awaited, ratios are against the baseline', async () => {
  const calls = { sync: 0, async: 0 };
  let inFlight = 0;
  const results = await measureSuite(
    {
      suite: 'demo',
      baseline: 'sync',
      cases: {
        sync: () => calls.sync++,
        async: async () => {
          inFlight++;
          assert.equal(inFlight, 1, 'an async op started before the previous one settled');
          await Promise.resolve();
          inFlight--;
          calls.async++;
        },
      },
    },
    { seconds: 0.03, rounds: 3 },
  );
  assert.deepEqual(
    results.map((r) => [r.case, r.rounds]),
    [
      ['sync', 3],
      ['async', 3],
    ],
  );
  assert.equal(results[0]!.ratio, 1);
  assert.ok(calls.sync > 0 && calls.async > 0);
  for (const r of results) {
    assert.ok(r.min <= r.opsPerSec && r.opsPerSec <= r.max);
    assert.ok(Math.abs(r.ratio - r.opsPerSec / results[0]!.opsPerSec) < 1e-9);
  }
  const table = formatTable({ suite: 'demo', baseline: 'sync' }, results);
  assert.match(table, /sync \(baseline\)/);
});

test('bench: a baseline that is not one of the cases is refused', async () => {
  await assert.rejects(
    measureSuite({ suite: 'x', baseline: 'missing', cases: { a: () => 1 } }, { seconds: 0.01, rounds: 1 }),
  );
});

test('bench: a paired ratio is the median over rounds of two cases measured in the same round', async () => {
  const result = (name: string, samples: number[]) => ({
    suite: 's',
    case: name,
    opsPerSec: median(samples),
    ratio: 1,
    min: 0,
    max: 0,
    rounds: samples.length,
    samples,
  });
  // Round 2 ran on a slow machine for both: paired, it does not move the ratio.
  const results = [result('a', [100, 50, 100]), result('b', [96, 48, 95])];
  assert.equal(pairedRatio(results, 'b', 'a'), 0.96);
  assert.throws(() => pairedRatio(results, 'c', 'a'), /no rounds of a case c/);
  const measured = await measureSuite(
    { suite: 'demo', baseline: 'x', cases: { x: () => 1, y: () => 2 }, collect: false },
    { seconds: 0.02, rounds: 4 },
  );
  for (const r of measured) assert.equal(r.samples?.length, 4, r.case);
  assert.ok(Number.isFinite(pairedRatio(measured, 'y', 'x')));
  // paired: the table's ratio is the paired one.
  const pairedSuite = await measureSuite(
    { suite: 'demo', baseline: 'x', cases: { x: () => 1, y: () => 2 }, collect: false, paired: true },
    { seconds: 0.02, rounds: 5 },
  );
  assert.equal(pairedSuite[1]!.ratio, pairedRatio(pairedSuite, 'y', 'x'));
  assert.equal(pairedSuite[0]!.ratio, 1);
});
