// No usable secret in any build output: the baked token is replaced by its SHA-256 digest,
// the docker context keeps out local secrets and data, and the build prints no warning.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { build } from '../../src/targets/build.ts';
import { initAgentDir } from '../../src/cli/scaffold.ts';
import { bearer, nodeBin, root, sendMessage, startBuiltServer, tempFolder } from '../helpers/build.ts';

const TARGETS = ['node-server', 'docker', 'cloudflare-worker'] as const;
const cliFile = join(root, 'src', 'cli', 'main.ts');

/** Every file under `folder`, dot-files included, with its content. */
function filesUnder(folder: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile())
      files.set(join(entry.parentPath, entry.name), readFileSync(join(entry.parentPath, entry.name), 'latin1'));
  }
  return files;
}

async function freshAgent(t: { after(fn: () => void): void }): Promise<{ dir: string; token: string }> {
  const dir = join(tempFolder(t), 'secret-agent');
  const { apiToken } = await initAgentDir(dir);
  // What a user keeps beside the agent and never wants shipped.
  writeFileSync(join(dir, '.env'), `MODEL_API_KEY=sk-live-from-dotenv\nAGENT_API_TOKEN=${apiToken}\n`);
  mkdirSync(join(dir, '.data', 'sessions'), { recursive: true });
  writeFileSync(join(dir, '.data', 'sessions', 's1.json'), '{"secret":"session-data-from-dot-data"}');
  return { dir, token: apiToken };
}

describe('build outputs hold no usable secret', () => {
  for (const target of TARGETS) {
    test(`${target}: no file of the output holds the baked token, .env values or .data`, async (t) => {
      const { dir, token } = await freshAgent(t);
      const out = join(tempFolder(t), 'out');
      await build(dir, { target, out });
      const files = filesUnder(out);
      assert.ok(files.size > 0);
      for (const [file, content] of files) {
        for (const secret of [
          token,
          Buffer.from(token, 'base64url').toString('latin1'),
          'sk-live-from-dotenv',
          'session-data-from-dot-data',
        ]) {
          assert.equal(content.includes(secret), false, `${file} holds a secret`);
        }
      }
    });
  }

  test('node-server: app/agentward.json holds the SHA-256 digest of the token, and the built server accepts the token', async (t) => {
    const { dir, token } = await freshAgent(t);
    const out = join(tempFolder(t), 'out');
    await build(dir, { target: 'node-server', out });
    const settings = JSON.parse(readFileSync(join(out, 'app', 'agentward.json'), 'utf8'));
    assert.deepEqual(settings, {
      name: 'secret-agent',
      basePath: '/agent',
      apiTokenSha256: createHash('sha256').update(token).digest('hex'),
    });
    assert.equal(statSync(join(out, 'app', 'agentward.json')).mode & 0o777, 0o600);
    const server = await startBuiltServer(out, { AGENT_DATA_DIR: join(tempFolder(t), 'data') });
    t.after(() => server.stop());
    assert.equal((await sendMessage(server.agentUrl)).status, 401);
    assert.equal((await sendMessage(server.agentUrl, bearer(`${token}x`))).status, 401);
    assert.equal(
      (await sendMessage(server.agentUrl, bearer(createHash('sha256').update(token).digest('hex')))).status,
      401,
      'the digest is not a credential',
    );
    const accepted = await sendMessage(server.agentUrl, bearer(token));
    assert.equal(accepted.status, 200);
    assert.equal(accepted.text, 'who am I?');
  });

  test('docker: .dockerignore keeps .env*, .data, node_modules, logs and VCS files out of the image context', async (t) => {
    const { dir } = await freshAgent(t);
    const out = join(tempFolder(t), 'out');
    await build(dir, { target: 'docker', out });
    const ignored = readFileSync(join(out, '.dockerignore'), 'utf8').split('\n');
    // Every pattern at any depth (Docker reads a plain pattern at the context root only).
    for (const pattern of [
      '**/.env*',
      '**/.data',
      '**/node_modules',
      '**/*.log',
      '**/.git',
      '**/.npmrc',
      '**/*.pem',
      '**/*.key',
    ])
      assert.ok(ignored.includes(pattern), pattern);
  });
});

describe('agentward build prints no warning', () => {
  for (const target of TARGETS) {
    test(`${target}: stderr is empty (no stripTypeScriptTypes ExperimentalWarning)`, async (t) => {
      const { dir } = await freshAgent(t);
      const out = join(tempFolder(t), 'out');
      const result = spawnSync(nodeBin, [cliFile, 'build', dir, '--target', target, '--out', out], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(result.status, 0, result.stderr);
      assert.equal(result.stderr, '');
      assert.doesNotMatch(result.stdout, /Warning/);
    });
  }
});

describe('agentward start on a build output', () => {
  test('a cloudflare-worker output is not run; the message says what runs it (npx wrangler dev), exit 1', async (t) => {
    const { dir } = await freshAgent(t);
    const out = join(tempFolder(t), 'out');
    await build(dir, { target: 'cloudflare-worker', out });
    const result = spawnSync(nodeBin, [cliFile, 'start', out], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /is a cloudflare-worker build output/);
    assert.match(result.stderr, /npx wrangler dev/);
    assert.doesNotMatch(result.stderr, /agent\.ts: not found/);
  });
});
