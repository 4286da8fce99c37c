// Streamed answers under Deno.serve (a real Deno process): no warning on stderr, and a client
// that leaves midway still stops its run. Deno.serve, in its default (legacy) mode, aborts
// request.signal after every successful response and warns, once, on the first response of a
// request whose signal was read; a streamed answer listens to its cancelled body instead.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hmacSigner, signToken } from '../helpers/jwt.ts';
import { MATRIX_SECRET } from '../helpers/matrix-handler.ts';
import { checkPrototypeMethods } from '../helpers/prototype-methods.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const TOKEN = 'deno-serve-token_0123456789';
const children: ChildProcess[] = [];
after(() => {
  for (const child of children) child.kill('SIGKILL');
});

interface DenoServer {
  base: string;
  stdout: () => string;
  stderr: () => string;
}

function startDeno(script = 'tests/helpers/children/deno-serve.ts'): Promise<DenoServer> {
  const child = spawn(join(root, 'node_modules', '.bin', 'deno'), ['run', '-A', '--no-check', script], {
    cwd: root,
    env: { ...process.env, AGENT_API_TOKEN: TOKEN, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk;
      const match = /agent listening on (http:\/\/\S+)/.exec(stdout);
      if (match) resolve({ base: match[1]!, stdout: () => stdout, stderr: () => stderr });
    });
    child.once('exit', (code) => reject(new Error(`deno exited with ${code} before listening:\n${stdout}\n${stderr}`)));
  });
}

async function until(check: () => boolean, what: string, server: DenoServer): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!check()) {
    assert.ok(Date.now() < deadline, `${what} never came; stdout:\n${server.stdout()}\nstderr:\n${server.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const authorization = `Bearer ${TOKEN}`;

test('Deno.serve: streamed answers (/chat as server-sent events, /ui) log no warning, and a client leaving midway stops the run', async () => {
  const server = await startDeno();
  const { base } = server;
  assert.equal((await fetch(`${base}/health`)).status, 200);
  assert.equal((await fetch(base, { method: 'POST', body: '{"message":"hi"}' })).status, 401);

  const chat = await fetch(`${base}/chat`, {
    method: 'POST',
    headers: { authorization, accept: 'text/event-stream' },
    body: JSON.stringify({ message: 'stream me' }),
  });
  assert.equal(chat.headers.get('content-type'), 'text/event-stream');
  const events = [...(await chat.text()).matchAll(/^event: (.+)$/gm)].map((match) => match[1]);
  assert.deepEqual(events, ['start', 'step-start', 'text-delta', 'step-finish', 'finish']);

  const ui = await fetch(`${base}/ui`, {
    method: 'POST',
    headers: { authorization },
    body: JSON.stringify({
      id: 'deno-chat',
      trigger: 'submit-message',
      messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'through ui' }] }],
    }),
  });
  assert.match(await ui.text(), /"type":"text-delta"[^\n]*"delta":"through ui"/);

  // A stream the client leaves: the run hears it.
  const leaving = new AbortController();
  const waiting = await fetch(`${base}/chat`, {
    method: 'POST',
    headers: { authorization, accept: 'text/event-stream' },
    body: JSON.stringify({ message: 'wait' }),
    signal: leaving.signal,
  });
  assert.equal(waiting.status, 200);
  await until(() => server.stdout().includes('run waiting'), 'the waiting run', server);
  leaving.abort();
  await until(() => server.stdout().includes('run aborted: AbortError'), 'the run to abort', server);

  // Deno prints the warning when a response completes: give it the time to.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.doesNotMatch(server.stderr(), /legacy behavior|request\.signal/);
  assert.equal(server.stderr(), '');
});

async function matrixToken(scopes: readonly string[]): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signToken(
    { alg: 'HS256', typ: 'JWT' },
    { sub: 'alice', aud: 'agent', iat: now - 5, exp: now + 600, scope: scopes.join(' ') },
    await hmacSigner(MATRIX_SECRET),
  );
}

test('Deno.serve: a method named like an Object.prototype key is 405 with Allow on every route, over a real socket', async () => {
  const server = await startDeno('tests/helpers/children/deno-matrix.ts');
  const origin = new URL(server.base).origin;
  // Deno.serve passes such a method through (Node's parser answers 400): the handler must refuse it itself.
  const passed = await fetch(`${origin}/agent/health`, { method: 'toString' });
  assert.equal(passed.status, 405, 'Deno.serve hands the method to the handler');
  await checkPrototypeMethods(
    (method, path, headers, body) =>
      fetch(`${origin}${path}`, { method, headers, ...(body !== undefined && { body }) }),
    {
      all: await matrixToken(['agent:chat', 'agent:read', 'agent:approve', 'agent:sessions', 'agent:mcp']),
      chatOnly: await matrixToken(['agent:chat']),
    },
  );
});
