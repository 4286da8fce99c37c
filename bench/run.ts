// Runs every suite of bench/suites/*.ts: `node bench/run.ts [--json] [--filter <suite>] [--seconds <n>] [--rounds <n>]`.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { formatTable, jsonLine, matchesFilter, measureSuite, pairedRatio, parseArgs } from './lib.ts';
import type { SuiteSpec } from './lib.ts';

const suitesDir = new URL('./suites/', import.meta.url);

async function loadSuites(): Promise<{ specs: SuiteSpec[]; failed: number }> {
  const files = readdirSync(fileURLToPath(suitesDir))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .sort();
  const specs: SuiteSpec[] = [];
  let failed = 0;
  for (const file of files) {
    try {
      const module = (await import(new URL(file, suitesDir).href)) as { default?: () => Promise<SuiteSpec[]> };
      if (typeof module.default !== 'function') throw new Error('no default-exported suites() function');
      specs.push(...(await module.default()));
    } catch (error) {
      failed++;
      console.error(`bench: skipping bench/suites/${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { specs, failed };
}

async function main(): Promise<void> {
  let options: ReturnType<typeof parseArgs>;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`bench: ${(error as Error).message}`);
    process.exitCode = 2;
    return;
  }
  const { specs, failed } = await loadSuites();
  const selected = specs.filter((spec) => matchesFilter(spec.suite, options.filter));
  if (selected.length === 0) {
    console.error(
      `bench: no suite matches ${options.filter ?? '(any)'}; suites: ${specs.map((s) => s.suite).join(', ') || 'none'}`,
    );
    process.exitCode = 1;
    return;
  }
  const human = options.json ? console.error : console.log;
  for (const spec of selected) {
    if (options.json) console.error(`bench: measuring ${spec.suite}…`);
    const results = await measureSuite(spec, options);
    if (options.json) {
      for (const result of results) process.stdout.write(`${jsonLine(result)}\n`);
    } else {
      human(formatTable(spec, results));
    }
    const medians = Object.fromEntries(results.map((r) => [r.case, r.opsPerSec]));
    if (spec.note !== undefined) human(spec.note);
    if (spec.verdict !== undefined) human(spec.verdict(medians, (a, b) => pairedRatio(results, a, b)));
    if (!options.json) human('');
  }
  if (failed > 0) process.exitCode = 1;
}

await main();
