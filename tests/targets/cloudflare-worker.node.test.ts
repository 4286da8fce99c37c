// The cloudflare-worker target, run for real inside workerd (through the Miniflare harness).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { build } from '../../src/targets/build.ts';
import { BAKED_TOKEN, ENV_TOKEN, bearer, fixture, tempFolder, writeDir } from '../helpers/build.ts';
import { startWorker, type RunningWorker } from '../helpers/workerd.ts';
import { startBuiltWorker } from '../helpers/worker.ts';

async function buildWorker(t: Parameters<typeof tempFolder>[0]): Promise<string> {
  const out = join(tempFolder(t), 'out');
  await build(fixture('plain'), { target: 'cloudflare-worker', out, log: () => {} });
  return out;
}

// workerd runs worker.js exactly as built, so a missing import would fail here.
const run = (out: string, bindings: Record<string, unknown>) => startBuiltWorker(out, bindings);

describe('cloudflare-worker target with the AGENT_API_TOKEN binding', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentward-build-'));
  const out = join(folder, 'out');
  let worker: RunningWorker;
  before(async () => {
    await build(fixture('plain'), { target: 'cloudflare-worker', out, log: () => {} });
    worker = await run(out, { AGENT_API_TOKEN: ENV_TOKEN });
  });
  after(async () => {
    await worker?.dispose();
    rmSync(folder, { recursive: true, force: true });
  });

  test('worker.js is one self-contained ES module: its one import is cloudflare:workers, which the runtime provides', () => {
    const code = readFileSync(join(out, 'worker.js'), 'utf8');
    const imports = code.match(/^\s*import\b.*$/gm) ?? [];
    assert.deepEqual(imports, ["import { DurableObject } from 'cloudflare:workers';"]);
    assert.match(code, /^export default /m);
  });

  test('GET <basePath>/health is never behind auth', async () => {
    const response = await worker.fetch('http://worker/agent/health');
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { status: 'ok' });
  });

  test('Build target cloudflare-worker serves spec files only, behind AGENT_API_TOKEN: the routes of agentHandler, no other', async () => {
    const refused = await worker.fetch('http://worker/agent/chat/s-1');
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
    assert.equal(refused.headers.get('cache-control'), 'no-store');
    assert.deepEqual(await refused.json(), { error: 'Unauthorized' });
    const approvals = await worker.fetch('http://worker/agent/approvals?sessionId=s-1', {
      headers: { authorization: bearer(ENV_TOKEN) },
    });
    assert.equal(approvals.status, 200);
    assert.deepEqual(await approvals.json(), { approvals: [] });
    // As for the route handler (design §5), <base> itself is POST only; agent.json is not a route.
    const get = await worker.fetch('http://worker/agent', { headers: { authorization: bearer(ENV_TOKEN) } });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    await get.body?.cancel();
    const spec = await worker.fetch('http://worker/agent/spec', { headers: { authorization: bearer(ENV_TOKEN) } });
    assert.equal(spec.status, 404);
    await spec.body?.cancel();
  });

  test('a wrong token and the baked scaffold token are refused: AGENT_API_TOKEN only', async () => {
    for (const token of ['wrong-token', BAKED_TOKEN]) {
      const response = await worker.fetch('http://worker/agent/chat/s-1', {
        headers: { authorization: bearer(token) },
      });
      assert.equal(response.status, 401);
      await response.body?.cancel();
    }
  });

  test('POST <basePath> answers through the declared echo model', async () => {
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

  test('a path outside basePath answers as agentHandler does: 401 without the token, 404 with it', async () => {
    const anonymous = await worker.fetch('http://worker/elsewhere');
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get('www-authenticate'), 'Bearer');
    await anonymous.body?.cancel();
    const known = await worker.fetch('http://worker/elsewhere', { headers: { authorization: bearer(ENV_TOKEN) } });
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
      for (const [method, path] of [
        ['GET', '/agent/nope'],
        ['POST', '/agent'],
        ['POST', '/agent/chat'],
        ['GET', '/agent/chat/s-1'],
        ['POST', '/agent/ui'],
        ['GET', '/agent/approvals?sessionId=s-1'],
      ]) {
        const response = await worker.fetch(`http://worker${path}`, {
          method,
          headers: { authorization: bearer(token) },
          ...(method === 'POST' && { body: '{"message":"hi"}' }),
        });
        assert.equal(response.status, 401, `${method} ${path}`);
        // A bearer credential the worker's list reads and refused: RFC 6750 invalid_token.
        assert.equal(response.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
        await response.body?.cancel();
      }
    }
  });
});

describe('cloudflare-worker target without its Durable Object binding', () => {
  test('a send answers 500 and the log names the binding wrangler.toml declares; nothing is served from elsewhere', async (t) => {
    const out = await buildWorker(t);
    const worker = await startWorker({
      entry: join(out, 'worker.js'),
      bindings: { AGENT_API_TOKEN: ENV_TOKEN },
      esbuild: { bundle: false },
    });
    t.after(() => worker.dispose());
    const response = await worker.fetch('http://worker/agent', {
      method: 'POST',
      headers: { authorization: bearer(ENV_TOKEN) },
      body: '{"message":"hi"}',
    });
    assert.equal(response.status, 500);
    assert.deepEqual(await response.json(), { error: 'Internal Server Error' });
    await worker.waitForLog((line) => line.message.includes('AGENT_SESSIONS Durable Object binding is missing'));
  });
});

describe('cloudflare-worker target with an AGENT_API_TOKEN that apiToken() refuses', () => {
  test('requests behind auth answer 500 and the log names the problem, never the token', async (t) => {
    const out = await buildWorker(t);
    const badToken = 'not a b64token';
    const worker = await run(out, { AGENT_API_TOKEN: badToken });
    t.after(() => worker.dispose());
    const response = await worker.fetch('http://worker/agent/chat/s-1', {
      headers: { authorization: bearer(ENV_TOKEN) },
    });
    assert.equal(response.status, 500);
    assert.deepEqual(await response.json(), { error: 'Internal Server Error' });
    const log = await worker.waitForLog((line) => line.message.includes('apiToken()'));
    assert.equal(log.message.includes(badToken), false);
  });
});

describe('cloudflare-worker target and auth files', () => {
  for (const [name, file] of [
    ['with-auth', 'auth.ts'],
    ['auth-js', 'auth.js'],
  ] as const) {
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
    const dir = writeDir(
      tempFolder(t),
      { 'agent.json': JSON.stringify({ name: 'x', model: { provider: 'openai', apiKey: 'sk-do-not-echo' } }) },
      fixture('plain'),
    );
    await assert.rejects(
      build(dir, { target: 'cloudflare-worker', out: join(tempFolder(t), 'out'), log: () => {} }),
      (error: Error) => {
        assert.match(error.message, /agent\.json: "model\.apiKey" looks like a secret/);
        assert.equal(error.message.includes('sk-do-not-echo'), false);
        return true;
      },
    );
  });

  test('wrangler.toml names worker.js, declares the sessions Durable Object with its migration, documents the secrets, and holds no token', async (t) => {
    const out = await buildWorker(t);
    const toml = readFileSync(join(out, 'wrangler.toml'), 'utf8');
    assert.match(toml, /^main = "worker\.js"$/m);
    assert.match(toml, /^name = "plain"$/m);
    assert.match(toml, /wrangler secret put AGENT_API_TOKEN/);
    assert.match(toml, /wrangler secret put MODEL_API_KEY/);
    assert.match(toml, /^\[\[durable_objects\.bindings\]\]\nname = "AGENT_SESSIONS"\nclass_name = "AgentSession"$/m);
    assert.match(toml, /^\[\[migrations\]\]\ntag = "v1"\nnew_sqlite_classes = \["AgentSession"\]$/m);
    assert.match(readFileSync(join(out, 'worker.js'), 'utf8'), /^export class AgentSession extends DurableObject \{/m);
    assert.equal(toml.includes(BAKED_TOKEN), false);
    assert.equal(readFileSync(join(out, 'worker.js'), 'utf8').includes(BAKED_TOKEN), false);
  });
});

describe('cloudflare-worker target and agent.json fields (design §7)', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    [
      'a model option the worker cannot honour',
      { name: 'x', model: { provider: 'echo', maxTokens: 512 } },
      'model.maxTokens',
    ],
    [
      'an option of another provider',
      {
        name: 'x',
        model: { provider: 'openai-compatible', baseURL: 'https://api.example.com/v1', model: 'm', temperature: 0 },
      },
      'model.temperature',
    ],
    ['an unknown provider', { name: 'x', model: { provider: 'anthropic' } }, 'model.provider'],
    ['a model that is not an object', { name: 'x', model: 'gpt' }, 'model'],
    [
      'an openai-compatible model without baseURL',
      { name: 'x', model: { provider: 'openai-compatible', model: 'm' } },
      'model.baseURL',
    ],
    [
      'a baseURL that is not http(s)',
      { name: 'x', model: { provider: 'openai-compatible', baseURL: 'file:///etc', model: 'm' } },
      'model.baseURL',
    ],
    [
      'a baseURL with credentials in it',
      {
        name: 'x',
        model: { provider: 'openai-compatible', baseURL: 'https://user:hunter2@api.example.com/v1', model: 'm' },
      },
      'model.baseURL',
    ],
    [
      'an openai-compatible model without a model name',
      { name: 'x', model: { provider: 'openai-compatible', baseURL: 'https://api.example.com/v1' } },
      'model.model',
    ],
  ];
  for (const [what, agentJson, field] of cases) {
    test(`${what} is a build error naming "${field}", and nothing is written`, async (t) => {
      const dir = writeDir(tempFolder(t), { 'agent.json': JSON.stringify(agentJson) }, fixture('plain'));
      const out = join(tempFolder(t), 'out');
      await assert.rejects(build(dir, { target: 'cloudflare-worker', out, log: () => {} }), (error: Error) => {
        assert.ok(error.message.startsWith(`${join(dir, 'agent.json')}: "${field}" `), error.message);
        assert.match(error.message, /cloudflare-worker target/);
        assert.equal(error.message.includes('hunter2'), false, 'no value is quoted');
        return true;
      });
      assert.equal(existsSync(out), false, 'nothing is written');
    });
  }

  test('the build says what the worker serves (echo when agent.json declares no model)', async (t) => {
    const dir = writeDir(tempFolder(t), { 'agent.json': JSON.stringify({ name: 'bare' }) }, fixture('plain'));
    const lines: string[] = [];
    const manifest = await build(dir, {
      target: 'cloudflare-worker',
      out: join(tempFolder(t), 'out'),
      log: (line) => lines.push(line),
    });
    const said = lines.join('\n');
    assert.match(said, /model: echo/);
    assert.match(said, /open: GET \/agent\/health/);
    assert.match(said, /POST \/agent\/ui/);
    assert.match(said, /Durable Object/);
    assert.match(said, /not on this target: auth\.ts/);
    assert.deepEqual(manifest.model, { provider: 'echo' });
    assert.deepEqual(manifest.secrets, ['AGENT_API_TOKEN']);
  });
});
