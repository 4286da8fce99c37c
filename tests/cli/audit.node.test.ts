// `agentward audit export|head|verify` (design §34): the log is the one the agent directory's
// auth.ts exports as `audit = { log }` (here a memory log it fills as it loads); export writes
// JSON Lines, verify exits 0 on a whole or mid-chain export (with a note) and 1 naming the first
// broken seq, --head shows a chain rebuilt after the kept head, --key-env reads the key from the
// environment; a directory without such a log, and a wrong command line, are said plainly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cliFile = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const KEY = 'a-cli-test-audit-key-of-at-least-32-bytes';

/** Runs the CLI; resolves with its exit code and output (stdout, stderr), within 30 s. */
function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cliFile, ...args],
      { env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number((error as { code?: unknown }).code ?? 1), stdout, stderr }),
    );
  });
}

const AUTH_WITH_LOG = `import { memoryAuditLog } from 'agentward';
const log = memoryAuditLog({ key: process.env.AUDIT_KEY });
for (let n = 0; n < 6; n++)
  await log.append({ time: new Date(Date.UTC(2026, 0, 1, 0, n * 10)).toISOString(), operation: 'send', outcome: 'allowed', n });
export const audit = { log };
export default [];
`;

async function folder(t: { after(fn: () => Promise<void>): void }, files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentward-audit-cli-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  return dir;
}

test('agentward audit export writes the chain as JSON Lines; verify exits 0 on it, 1 naming the seq of an edited record', async (t) => {
  const dir = await folder(t, { 'auth.ts': AUTH_WITH_LOG });
  const exported = await cli(['audit', 'export', dir], { AUDIT_KEY: KEY });
  assert.equal(exported.code, 0, exported.stderr);
  const lines = exported.stdout.trimEnd().split('\n');
  assert.deepEqual(
    lines.map((line) => (JSON.parse(line) as { seq: number }).seq),
    [1, 2, 3, 4, 5, 6],
  );
  assert.match(exported.stderr, /6 records/);
  const file = join(dir, 'audit.jsonl');
  await writeFile(file, exported.stdout);

  const keyed = await cli(['audit', 'verify', file, '--key-env', 'AUDIT_KEY'], { AUDIT_KEY: KEY });
  assert.equal(keyed.code, 0, keyed.stderr);
  assert.match(keyed.stdout, /6 records, seq 1 to 6: the chain holds under the key/);
  assert.doesNotMatch(keyed.stdout + keyed.stderr, new RegExp(KEY));
  const unkeyed = await cli(['audit', 'verify', file]);
  assert.equal(unkeyed.code, 1, 'an HMAC chain does not verify as plain SHA-256');
  assert.match(unkeyed.stderr, /broken at seq 1 \(hash/);

  const edited = lines.map((line, i) => (i === 3 ? line.replace('"outcome":"allowed"', '"outcome":"refused"') : line));
  await writeFile(file, `${edited.join('\n')}\n`);
  const broken = await cli(['audit', 'verify', file, '--key-env', 'AUDIT_KEY'], { AUDIT_KEY: KEY });
  assert.equal(broken.code, 1);
  assert.match(broken.stderr, /broken at seq 4 \(hash: the record was edited/);
  await writeFile(file, `${lines.filter((_, i) => i !== 1).join('\n')}\n`);
  const removed = await cli(['audit', 'verify', file, '--key-env', 'AUDIT_KEY'], { AUDIT_KEY: KEY });
  assert.equal(removed.code, 1);
  assert.match(removed.stderr, /broken at seq 2 \(seq:/);
  await writeFile(file, `${lines[0]}\nnot json\n`);
  const garbled = await cli(['audit', 'verify', file]);
  assert.equal(garbled.code, 1);
  assert.match(garbled.stderr, /line 2 is not JSON/);
});

test('agentward audit export --since starts mid-chain: verify exits 0 and says so; head pins the chain for verify --head', async (t) => {
  const dir = await folder(t, { 'auth.ts': AUTH_WITH_LOG });
  const since = await cli([
    'audit',
    'export',
    dir,
    '--since',
    '2026-01-01T00:20:00Z',
    '--until',
    '2026-01-01T00:50:00Z',
  ]);
  assert.equal(since.code, 0, since.stderr);
  const file = join(dir, 'since.jsonl');
  await writeFile(file, since.stdout);
  const verified = await cli(['audit', 'verify', file]);
  assert.equal(verified.code, 0, verified.stderr);
  assert.match(verified.stdout, /3 records, seq 3 to 5: the chain holds/);
  assert.match(verified.stdout, /note: it starts mid-chain at seq 3: its first prev is taken as given/);

  const head = await cli(['audit', 'head', dir]);
  assert.equal(head.code, 0, head.stderr);
  const kept = JSON.parse(head.stdout) as { seq: number; hash: string };
  assert.equal(kept.seq, 6);
  assert.match(kept.hash, /^[0-9a-f]{64}$/);
  const all = join(dir, 'all.jsonl');
  await writeFile(all, (await cli(['audit', 'export', dir])).stdout);
  const pinned = await cli(['audit', 'verify', all, '--head', `${kept.seq}:${kept.hash}`]);
  assert.equal(pinned.code, 0, pinned.stderr);
  assert.match(pinned.stdout, /the kept head \(seq 6\) matches/);
  // Each run of this auth.ts fills a new log whose times are the same: another head, as after a rebuild.
  const other = `${kept.seq}:${'0'.repeat(64)}`;
  const rebuilt = await cli(['audit', 'verify', all, '--head', other]);
  assert.equal(rebuilt.code, 1);
  assert.match(rebuilt.stderr, /broken at seq 6 \(head: its hash is not the kept head/);
  assert.equal((await readFile(all, 'utf8')).trimEnd().split('\n').length, 6);
});

test('agentward audit: no log in the directory, and wrong command lines, are said plainly', async (t) => {
  const withoutAuth = await folder(t, {});
  const none = await cli(['audit', 'export', withoutAuth]);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /has no auth\.ts, so no audit log: export const audit = \{ log \}/);
  const withoutLog = await folder(t, { 'auth.ts': 'export default [];\n' });
  const noExport = await cli(['audit', 'head', withoutLog]);
  assert.equal(noExport.code, 1);
  assert.match(noExport.stderr, /auth\.ts: exports no audit log/);
  const aFunction = await folder(t, { 'auth.ts': 'export const audit = () => {};\nexport default [];\n' });
  assert.match((await cli(['audit', 'export', aFunction])).stderr, /its audit export is not \{ log \}/);

  const typo = await cli(['audit', 'exprot']);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /audit: unknown command "exprot" \(did you mean "export"\?\)/);
  const misplaced = await cli(['audit', 'export', '--head', '1:00']);
  assert.equal(misplaced.code, 2);
  assert.match(misplaced.stderr, /audit export: --head is an option of audit verify/);
  const badSince = await cli(['audit', 'export', '--since', 'yesterday']);
  assert.equal(badSince.code, 2);
  assert.match(badSince.stderr, /--since must be an ISO 8601 instant/);
  const badHead = await cli(['audit', 'verify', 'x.jsonl', '--head', '6-abc']);
  assert.equal(badHead.code, 2);
  assert.match(badHead.stderr, /--head must be <seq>:<hash>/);
  const unset = await cli(['audit', 'verify', 'x.jsonl', '--key-env', 'AGENTWARD_TEST_UNSET_KEY']);
  assert.equal(unset.code, 1);
  assert.match(unset.stderr, /AGENTWARD_TEST_UNSET_KEY \(--key-env\) is not set/);
  const short = await cli(['audit', 'verify', 'x.jsonl', '--key-env', 'SHORT_KEY'], {
    SHORT_KEY: 'short-secret-value',
  });
  assert.equal(short.code, 1);
  assert.match(short.stderr, /at least 32 bytes/);
  assert.doesNotMatch(short.stderr, /short-secret-value/);
  const option = await cli(['audit', 'verify', 'x.jsonl', '--key-evn', 'x']);
  assert.equal(option.code, 2);
  assert.match(option.stderr, /unknown option "--key-evn" \(did you mean "--key-env"\?\)/);
});
