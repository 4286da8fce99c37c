// JSR (design §23): jsr.json names the entries that run on every runtime, ships src/ only (and the
// licence), and `deno publish --dry-run` passes without --allow-slow-types: every exported symbol
// has an explicit type. The dry run needs no network: it runs without one where the machine can take it away.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const jsr = JSON.parse(readFileSync(join(root, 'jsr.json'), 'utf8')) as {
  name: string;
  version: string;
  exports: Record<string, string>;
  publish: { include: string[]; exclude: string[] };
};

test('jsr.json names the runtime-neutral entries (., ./auth, ./postgres: never ./node) and publishes src/ only', () => {
  assert.match(jsr.name, /^@[a-z0-9-]+\/[a-z0-9-]+$/);
  assert.deepEqual(jsr.exports, {
    '.': './src/index.ts',
    './auth': './src/auth/index.ts',
    './postgres': './src/postgres/index.ts',
  });
  for (const file of Object.values(jsr.exports)) assert.ok(existsSync(join(root, file)), file);
  assert.deepEqual(jsr.publish.include, ['src/**/*.ts', 'LICENSE']);
  // The Node-only folders (and what runs inside the built Worker, which no entry imports) stay out.
  for (const folder of ['src/node/', 'src/cli/', 'src/targets/', 'src/cloudflare/'])
    assert.ok(jsr.publish.exclude.includes(folder), folder);
});

/** `unshare -rn` (a new user and network namespace: no network but loopback) where the machine allows it. */
function offlinePrefix(): string[] {
  const probe = spawnSync('unshare', ['-rn', 'true'], { encoding: 'utf8' });
  return probe.status === 0 ? ['unshare', '-rn'] : [];
}

test('deno publish --dry-run passes without --allow-slow-types, offline, and would upload src/ and the licence only', (t) => {
  const offline = offlinePrefix();
  if (offline.length === 0)
    t.diagnostic('unshare -rn is not available here: the dry run ran with the network as it is');
  const deno = join(root, 'node_modules', '.bin', 'deno');
  const [command, ...args] = [...offline, deno, 'publish', '--dry-run', '--allow-dirty'];
  const result = spawnSync(command!, args, {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', DENO_NO_PROMPT: '1' },
    timeout: 180_000,
  });
  if (result.error) throw result.error;
  const output = `${result.stdout}\n${result.stderr}`;
  assert.equal(result.status, 0, output);
  assert.match(output, /Checking for slow types in the public API/);
  assert.match(
    output,
    new RegExp(`Simulating publish of ${jsr.name.replace('/', '\\/')}@${jsr.version.replaceAll('.', '\\.')}`),
  );
  assert.match(output, /Success Dry run complete/);
  const files = [...output.matchAll(/file:\/\/(\S+)/g)].map(([, path]) => path!.slice(root.length).replace(/^\//, ''));
  assert.ok(
    files.includes('src/auth/index.ts') && files.includes('src/postgres/index.ts') && files.includes('src/index.ts'),
    files.join('\n'),
  );
  const outside = files.filter((file) => !(file.startsWith('src/') || file === 'LICENSE' || file === 'jsr.json'));
  assert.deepEqual(outside, []);
  assert.deepEqual(
    files.filter((file) => /^src\/(?:node|cli|targets|worker)\//.test(file)),
    [],
  );
});
