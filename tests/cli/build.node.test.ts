// The CLI verbs around an agent directory, run as child processes: init, build, and start through the resolver.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  BAKED_TOKEN,
  ENV_TOKEN,
  LIST_TOKEN,
  basicAuth,
  bearer,
  fixture,
  nodeBin,
  root,
  sendMessage,
  startNodeServer,
  tempFolder,
} from '../helpers/build.ts';

const cli = join(root, 'bin', 'agentward.js');

function agentward(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.AGENT_API_TOKEN;
  const result = spawnSync(nodeBin, [cli, ...args], { encoding: 'utf8', env, timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('agentward init <dir>', () => {
  test('bakes a fresh random API token into agentward.json and prints it once', (t) => {
    const dir = join(tempFolder(t), 'bot');
    const { status, stdout } = agentward('init', dir);
    assert.equal(status, 0);
    const { apiToken } = JSON.parse(readFileSync(join(dir, 'agentward.json'), 'utf8'));
    assert.match(apiToken, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(stdout.split(apiToken).length - 1, 1, 'printed exactly once');
    for (const file of ['agent.ts', 'agent.json']) assert.ok(existsSync(join(dir, file)), file);
  });

  test('refuses to overwrite an existing agent', (t) => {
    const dir = join(tempFolder(t), 'bot');
    assert.equal(agentward('init', dir).status, 0);
    const before = readFileSync(join(dir, 'agentward.json'), 'utf8');
    const again = agentward('init', dir);
    assert.notEqual(again.status, 0);
    assert.match(again.stderr, /refusing to overwrite an existing agent/);
    assert.equal(readFileSync(join(dir, 'agentward.json'), 'utf8'), before);
  });
});

describe('agentward build <dir> --target … --out …', () => {
  test('builds the docker target into the output folder', (t) => {
    const out = join(tempFolder(t), 'out');
    const { status, stderr } = agentward('build', fixture('with-auth'), '--target', 'docker', '--out', out);
    assert.equal(status, 0, stderr);
    assert.equal(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).auth, true);
    assert.ok(existsSync(join(out, 'Dockerfile')));
  });

  test('a scaffolded directory builds for cloudflare-worker, and the build prints what the worker serves', (t) => {
    const dir = join(tempFolder(t), 'bot');
    assert.equal(agentward('init', dir).status, 0);
    const out = join(tempFolder(t), 'out');
    const { status, stdout, stderr } = agentward('build', dir, '--target', 'cloudflare-worker', '--out', out);
    assert.equal(status, 0, stderr);
    assert.match(stdout, /serves\n {2}model: echo/);
    assert.match(stdout, /POST \/agent\/chat/);
    assert.match(stdout, /Durable Object/);
    assert.ok(existsSync(join(out, 'wrangler.toml')));
  });

  test('target cloudflare-worker with an agent.json field it cannot honour fails naming the field, and writes nothing', (t) => {
    const out = join(tempFolder(t), 'out');
    const dir = join(tempFolder(t), 'bot');
    assert.equal(agentward('init', dir).status, 0);
    writeFileSync(
      join(dir, 'agent.json'),
      JSON.stringify({ name: 'bot', model: { provider: 'echo', temperature: 0.2 } }),
    );
    const { status, stderr } = agentward('build', dir, '--target', 'cloudflare-worker', '--out', out);
    assert.equal(status, 1);
    assert.match(stderr, /agent\.json: "model\.temperature" is not a field the worker can honour/);
    assert.equal(existsSync(out), false);
  });

  test('target cloudflare-worker with auth.ts fails with an error naming the file, and writes nothing', (t) => {
    const out = join(tempFolder(t), 'out');
    const { status, stderr } = agentward('build', fixture('with-auth'), '--target', 'cloudflare-worker', '--out', out);
    assert.notEqual(status, 0);
    assert.ok(stderr.includes(join(fixture('with-auth'), 'auth.ts')), stderr);
    assert.match(stderr, /no auth list/);
    assert.equal(existsSync(out), false);
  });
});

describe('agentward start', () => {
  test('start <dir> serves the directory through the resolver: the auth.ts list, not the baked token; AGENT_API_TOKEN appended', async (t) => {
    const server = await startNodeServer([cli, 'start', fixture('with-auth')], { AGENT_API_TOKEN: ENV_TOKEN });
    t.after(() => server.stop());
    assert.match(server.agentUrl, /\/support$/);
    assert.equal(
      (await sendMessage(server.agentUrl, basicAuth('ada', 'correct horse battery staple'))).text,
      'basic:ada',
    );
    assert.equal((await sendMessage(server.agentUrl, bearer(LIST_TOKEN))).text, 'api-token:ci-bot');
    assert.equal((await sendMessage(server.agentUrl, bearer(BAKED_TOKEN))).status, 401);
    assert.equal((await sendMessage(server.agentUrl, bearer(ENV_TOKEN))).status, 200);
  });

  test('start <dir> without auth.ts accepts the baked token', async (t) => {
    const server = await startNodeServer([cli, 'start', fixture('plain')]);
    t.after(() => server.stop());
    assert.equal((await sendMessage(server.agentUrl)).status, 401);
    assert.equal((await sendMessage(server.agentUrl, bearer(BAKED_TOKEN))).text, 'api-token:api-token');
  });

  test('start <out> runs a build output', async (t) => {
    const out = join(tempFolder(t), 'out');
    assert.equal(agentward('build', fixture('with-auth'), '--target', 'node-server', '--out', out).status, 0);
    const server = await startNodeServer([cli, 'start', out]);
    t.after(() => server.stop());
    assert.equal((await sendMessage(server.agentUrl, bearer(LIST_TOKEN))).text, 'api-token:ci-bot');
    assert.equal((await sendMessage(server.agentUrl, bearer(BAKED_TOKEN))).status, 401);
  });
});
