// The examples serve the route handler for real: examples/bun.ts under Bun, examples/deno.ts
// under Deno (child processes on a free port), examples/workers.ts inside workerd.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startWorker, type RunningWorker } from '../helpers/workerd.ts';
import { basicAuthorization } from '../helpers/requests.ts';
import { hmacSigner, signToken } from '../helpers/jwt.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const TOKEN = 'example-token_0123456789';
const env = { AGENT_API_TOKEN: TOKEN, AGENT_BASIC_USER: 'ada', AGENT_BASIC_PASSWORD: 'lovelace-1815' };
const children: ChildProcess[] = [];
const workers: RunningWorker[] = [];

after(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const worker of workers) await worker.dispose();
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts an example and resolves with its base URL once it prints that it listens. */
async function startExample(command: string, args: string[]): Promise<string> {
  const port = await freePort();
  const child = spawn(join(root, 'node_modules', '.bin', command), args, {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /agent listening on (http:\/\/\S+)/.exec(output);
      if (match) clearTimeout(timer), resolve(match[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    // Bounded: a server that neither listens nor exits fails the test instead of hanging it.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} printed no "agent listening on" in 60 s:\n${output}`));
    }, 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code} before listening:\n${output}`));
    });
  });
}

async function checkServes(base: string, send: (url: string, init?: RequestInit) => Promise<Response>): Promise<void> {
  const health = await send(`${base}/health`);
  assert.equal(health.status, 200);
  assert.deepEqual(await health.json(), { status: 'ok' });

  const request = (headers: Record<string, string>) =>
    send(base, { method: 'POST', headers, body: JSON.stringify({ message: 'hello example' }) });
  const refused = await request({});
  assert.equal(refused.status, 401);
  assert.equal(await refused.text(), '{"error":"Unauthorized"}');
  assert.equal(refused.headers.get('www-authenticate'), 'Basic realm="agent", charset="UTF-8", Bearer');

  for (const authorization of [`Bearer ${TOKEN}`, basicAuthorization('ada', 'lovelace-1815')]) {
    const accepted = await request({ authorization });
    assert.equal(accepted.status, 200);
    assert.equal((await accepted.json()).text, 'hello example');
  }
  assert.equal((await request({ authorization: 'Bearer wrong' })).status, 401);

  const streamed = await send(`${base}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream' },
    body: JSON.stringify({ message: 'stream me please' }),
  });
  assert.equal(streamed.headers.get('content-type'), 'text/event-stream');
  const events = [...(await streamed.text()).matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
  assert.deepEqual(events, ['start', 'step-start', 'text-delta', 'text-delta', 'text-delta', 'step-finish', 'finish']);
}

test('examples/bun.ts serves the handler in Bun.serve behind the auth list from the environment', async () => {
  const base = await startExample('bun', ['examples/bun.ts']);
  assert.match(base, /\/agent$/);
  await checkServes(base, fetch);
});

test('examples/deno.ts serves the handler in Deno.serve behind the auth list from the environment', async () => {
  const base = await startExample('deno', ['run', '-A', 'examples/deno.ts']);
  assert.match(base, /\/agent$/);
  await checkServes(base, fetch);
});

test('examples/workers.ts serves the handler as a Workers fetch export with the auth list from its bindings', async () => {
  const worker = await startWorker({ entry: 'examples/workers.ts', bindings: env });
  workers.push(worker);
  await checkServes('http://worker/agent', (url, init) => worker.fetch(url, init));
});

test('examples/workers.ts without secrets refuses every agent route; health stays open', async () => {
  const worker = await startWorker({ entry: 'examples/workers.ts', bindings: {} });
  workers.push(worker);
  assert.equal((await worker.fetch('http://worker/agent/health')).status, 200);
  const refused = await worker.fetch('http://worker/agent', { method: 'POST', body: '{"message":"hi"}' });
  assert.equal(refused.status, 401);
});

test('examples/workers.ts: jwt() takes tokens of its issuer for its audience, and refuses one with another issuer or none', async () => {
  const secret = 'an-example-jwt-secret-of-at-least-32-bytes';
  const worker = await startWorker({ entry: 'examples/workers.ts', bindings: { AGENT_JWT_SECRET: secret } });
  workers.push(worker);
  const now = Math.floor(Date.now() / 1000);
  const send = async (claims: Record<string, unknown>) => {
    const token = await signToken(
      { alg: 'HS256', typ: 'JWT' },
      { sub: 'ada', aud: 'agent', iat: now, exp: now + 300, ...claims },
      await hmacSigner(secret),
    );
    return worker.fetch('http://worker/agent', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"message":"hi"}',
    });
  };
  assert.equal((await send({ iss: 'https://auth.example.com' })).status, 200);
  assert.equal((await send({ iss: 'https://elsewhere.example.com' })).status, 401);
  assert.equal((await send({})).status, 401);
  assert.equal((await send({ iss: 'https://auth.example.com', aud: 'another-api' })).status, 401);
});
