// The cloudflare-worker target, run for real inside workerd (through the Miniflare harness).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { build } from '../../src/build/index.ts';
import { BAKED_TOKEN, ENV_TOKEN, bearer, fixture, tempFolder, writeDir } from './build-helpers.ts';
import { startWorker, type RunningWorker } from './workerd-harness.ts';

const spec = JSON.parse(readFileSync(join(fixture('plain'), 'agent.json'), 'utf8'));

async function buildWorker(t: Parameters<typeof tempFolder>[0]): Promise<string> {
  const out = join(tempFolder(t), 'out');
  await build(fixture('plain'), { target: 'cloudflare-worker', out });
  return out;
}

// `bundle: false`: workerd runs worker.js exactly as built, so a missing import would fail here.
const run = (out: string, bindings: Record<string, unknown>) => startWorker({ entry: join(out, 'worker.js'), bindings, esbuild: { bundle: false } });

describe('cloudflare-worker target with the AGENT_API_TOKEN binding', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentgate-build-'));
  const out = join(folder, 'out');
  let worker: RunningWorker;
  before(async () => {
    await build(fixture('plain'), { target: 'cloudflare-worker', out });
    worker = await run(out, { AGENT_API_TOKEN: ENV_TOKEN });
  });
  after(async () => {
    await worker?.dispose();
    rmSync(folder, { recursive: true, force: true });
  });

  test('worker.js is one self-contained ES module', () => {
    const code = readFileSync(join(out, 'worker.js'), 'utf8');
    assert.doesNotMatch(code, /^\s*import\b/m);
    assert.match(code, /^export default /m);
  });

  test('GET <basePath>/health is never behind auth', async () => {
    const response = await worker.fetch('http://worker/agent/health');
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { status: 'ok' });
  });

  test('Build target cloudflare-worker serves spec files only, behind AGENT_API_TOKEN', async () => {
    const refused = await worker.fetch('http://worker/agent');
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
    assert.equal(refused.headers.get('cache-control'), 'no-store');
    assert.deepEqual(await refused.json(), { error: 'Unauthorized' });
    for (const path of ['/agent', '/agent/spec']) {
      const response = await worker.fetch(`http://worker${path}`, { headers: { authorization: bearer(ENV_TOKEN) } });
      assert.equal(response.status, 200, path);
      assert.deepEqual(await response.json(), spec, path);
    }
  });

  test('a wrong token and the baked scaffold token are refused: AGENT_API_TOKEN only', async () => {
    for (const token of ['wrong-token', BAKED_TOKEN]) {
      const response = await worker.fetch('http://worker/agent/spec', { headers: { authorization: bearer(token) } });
      assert.equal(response.status, 401);
      await response.body?.cancel();
    }
  });

  test('POST <basePath> answers through the built-in echo', async () => {
    const response = await worker.fetch('http://worker/agent', {
      method: 'POST',
      headers: { authorization: bearer(ENV_TOKEN), 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'hello', sessionId: 's-1' }),
    });
    assert.equal(response.status, 200);
    const result = (await response.json()) as Record<string, unknown>;
    assert.equal(result.text, 'hello');
    assert.equal(result.sessionId, 's-1');
    assert.equal(result.status, 'completed');
  });

  test('auth runs before routing: an unknown path answers 401 before 404', async () => {
    const anonymous = await worker.fetch('http://worker/agent/nope');
    assert.equal(anonymous.status, 401);
    await anonymous.body?.cancel();
    const known = await worker.fetch('http://worker/agent/nope', { headers: { authorization: bearer(ENV_TOKEN) } });
    assert.equal(known.status, 404);
    await known.body?.cancel();
  });
});

describe('cloudflare-worker target without the AGENT_API_TOKEN binding', () => {
  test('every route but health is refused with 401', async (t) => {
    const out = await buildWorker(t);
    const worker = await run(out, {});
    t.after(() => worker.dispose());
    assert.equal((await worker.fetch('http://worker/agent/health')).status, 200);
    for (const token of [ENV_TOKEN, BAKED_TOKEN]) {
      const response = await worker.fetch('http://worker/agent/spec', { headers: { authorization: bearer(token) } });
      assert.equal(response.status, 401);
      assert.equal(response.headers.get('www-authenticate'), 'Bearer');
      await response.body?.cancel();
    }
  });
});

describe('cloudflare-worker target with an AGENT_API_TOKEN that apiToken() refuses', () => {
  test('requests behind auth answer 500 and the log names the problem, never the token', async (t) => {
    const out = await buildWorker(t);
    const badToken = 'not a b64token';
    const worker = await run(out, { AGENT_API_TOKEN: badToken });
    t.after(() => worker.dispose());
    const response = await worker.fetch('http://worker/agent/spec', { headers: { authorization: bearer(ENV_TOKEN) } });
    assert.equal(response.status, 500);
    assert.deepEqual(await response.json(), { error: 'Internal Server Error' });
    const log = await worker.waitForLog((line) => line.message.includes('apiToken()'));
    assert.equal(log.message.includes(badToken), false);
  });
});

describe('cloudflare-worker target and auth files', () => {
  for (const [name, file] of [['with-auth', 'auth.ts'], ['auth-js', 'auth.js']] as const) {
    test(`a directory with ${file} fails the build with an error naming the file: the target has no auth list`, async (t) => {
      const out = join(tempFolder(t), 'out');
      await assert.rejects(build(fixture(name), { target: 'cloudflare-worker', out }), (error: Error) => {
        assert.ok(error.message.includes(join(fixture(name), file)), error.message);
        assert.match(error.message, /no auth list/);
        return true;
      });
      assert.equal(existsSync(out), false, 'nothing is written');
    });
  }

  test('an agent.json with a field that looks like a secret is refused, the value never echoed', async (t) => {
    const dir = writeDir(tempFolder(t), { 'agent.json': JSON.stringify({ name: 'x', model: { provider: 'openai', apiKey: 'sk-do-not-echo' } }) }, fixture('plain'));
    await assert.rejects(build(dir, { target: 'cloudflare-worker', out: join(tempFolder(t), 'out') }), (error: Error) => {
      assert.match(error.message, /agent\.json: "model\.apiKey" looks like a secret/);
      assert.equal(error.message.includes('sk-do-not-echo'), false);
      return true;
    });
  });

  test('wrangler.toml names worker.js and holds no token', async (t) => {
    const out = await buildWorker(t);
    const toml = readFileSync(join(out, 'wrangler.toml'), 'utf8');
    assert.match(toml, /^main = "worker\.js"$/m);
    assert.match(toml, /^name = "plain"$/m);
    assert.match(toml, /wrangler secret put AGENT_API_TOKEN/);
    assert.equal(toml.includes(BAKED_TOKEN), false);
    assert.equal(readFileSync(join(out, 'worker.js'), 'utf8').includes(BAKED_TOKEN), false);
  });
});
