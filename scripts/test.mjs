// Runs the whole suite: Biome and the type check, then the portable tests on Node 22, Bun and
// Deno, and the Node-only tests (servers, workerd through miniflare, builds) in the Node step.
// One failing step fails the run.
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

function run(name, command, commandArgs, count) {
  return new Promise((resolve) => {
    const started = Date.now();
    console.log(`\n=== ${name}: ${[relative(root, command) || command, ...commandArgs].join(' ')}`);
    const child = spawn(command, commandArgs, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let output = '';
    const tee = (stream, sink) =>
      stream.on('data', (chunk) => {
        output += chunk;
        sink.write(chunk);
      });
    tee(child.stdout, process.stdout);
    tee(child.stderr, process.stderr);
    child.on('close', (code) => {
      const counts = count ? count(stripColours(output)) : { passed: 0, failed: 0 };
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      console.log(`=== ${name}: exit ${code}, ${counts.passed} passed, ${counts.failed} failed, ${seconds}s`);
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
      resolve({ name, code, ...counts, failures, todos });
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

const steps = [];
const want = (name) => only === undefined || only === name;
if (want('biome') && filters.length === 0) steps.push(() => run('biome', bin('biome'), ['ci', '--colors=off', '.']));
if (want('tsc') && filters.length === 0) {
  steps.push(() => run('tsc', bin('tsc'), ['--noEmit', '-p', '.']));
  // The playground's browser script, checked with the browser's types only (its tsconfig.json).
  steps.push(() => run('tsc playground', bin('tsc'), ['-p', join('src', 'node', 'playground')]));
}
if (want('node') && portable.length + nodeOnly.length)
  steps.push(() =>
    run(
      'node',
      bin('node'),
      ['--test', '--test-reporter=spec', '--test-concurrency=1', ...portable, ...nodeOnly],
      nodeCounts,
    ),
  );
if (want('bun') && portable.length)
  steps.push(() =>
    run('bun', bin('bun'), ['test', '--timeout', '120000', ...portable.map((f) => `./${f}`)], bunCounts),
  );
if (want('deno') && portable.length)
  steps.push(() => run('deno', bin('deno'), ['test', '-A', '--no-check', ...portable], denoCounts));

if (steps.length === 0)
  usageError(`nothing to run: no ${only} test file matches ${filters.map((x) => `"${x}"`).join(', ')}`);

const results = [];
for (const step of steps) {
  const result = await step();
  // A test step that ran no test is a failure: a filter or a runner that found nothing is never green.
  if (result.code === 0 && result.passed === 0 && ['node', 'bun', 'deno'].includes(result.name)) {
    result.code = 1;
    result.failures.push(`${result.name} ran no test`);
  }
  results.push(result);
}
const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
const broken = results.filter((r) => r.code !== 0).map((r) => r.name);
console.log(
  `\n${results.map((r) => `${r.name}: ${r.code === 0 ? 'ok' : 'FAILED'} (${r.passed} passed, ${r.failed} failed)`).join('\n')}`,
);
for (const r of results)
  for (const line of r.todos ?? []) console.log(`${r.name} open (todo): ${line.replace(/^✖ /, '')}`);
for (const r of results) for (const line of r.failures.slice(0, 30)) console.log(`${r.name} failed: ${line}`);
if (broken.length) console.log(`failing runtimes: ${broken.join(', ')}`);
console.log(`total: ${passed} passed, ${broken.length ? Math.max(failed, 1) : failed} failed`);
if (broken.length) process.exitCode = 1;
