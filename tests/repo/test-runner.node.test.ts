// The test runner refuses what it cannot run (design §26): a mistyped option, step or filter
// exits non-zero with the usage, never "0 passed" and 0, so a CI job cannot pass on no tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** `node scripts/test.mjs <args>`, bounded: none of these cases runs a test. */
function runner(...args: string[]) {
  const result = spawnSync(process.execPath, ['scripts/test.mjs', ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(result.error, undefined, `scripts/test.mjs ${args.join(' ')} ended within 60 s`);
  return { status: result.status, output: result.stdout + result.stderr };
}

test('the test runner exits 2 with the usage for an unknown option, an unknown runtime (did you mean) and a filter that matches no file, running nothing (design §26)', () => {
  const cases: [string[], RegExp][] = [
    [['--bogus'], /unknown option "--bogus"/],
    [['--only', 'nod'], /unknown step "nod" \(did you mean "node"\?\)/],
    [['--only', 'rust'], /unknown step "rust"/],
    [['--only', 'node', 'zzz-no-such-test-file'], /no test file matches "zzz-no-such-test-file"/],
  ];
  for (const [args, message] of cases) {
    const { status, output } = runner(...args);
    assert.equal(status, 2, `${args.join(' ')}: ${output}`);
    assert.match(output, message);
    assert.match(output, /Usage: node scripts\/test\.mjs/);
    assert.doesNotMatch(output, /passed/, `${args.join(' ')} ran nothing`);
  }
});

test('the test runner prints its usage for --help and exits 0', () => {
  const { status, output } = runner('--help');
  assert.equal(status, 0);
  assert.match(output, /Usage: node scripts\/test\.mjs/);
  assert.match(output, /--only <step>/);
});
