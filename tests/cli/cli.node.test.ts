import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lineMatching, send } from '../helpers/http-client.ts';

const cliFile = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const binFile = fileURLToPath(new URL('../../bin/agentward.js', import.meta.url));
const AGENT_SOURCE = `import { createAgent, echoModel } from 'agentward';
export default createAgent({ name: 'cli-fixture', model: echoModel() });
`;

async function agentDir(
  t: { after(fn: () => Promise<void>): void },
  files: Record<string, string> = {},
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentward-cli-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'agent.ts'), AGENT_SOURCE);
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  return dir;
}

interface Running {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function run(
  t: { after(fn: () => void): void },
  args: string[],
  env: Record<string, string> = {},
  file = cliFile,
): Running {
  const childEnv: Record<string, string | undefined> = { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env };
  if (env.AGENT_API_TOKEN === undefined) delete childEnv.AGENT_API_TOKEN;
  const child = spawn(process.execPath, [file, ...args], { env: childEnv });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  t.after(() => void child.kill('SIGKILL'));
  return { child, output: () => output, exit };
}

/** The URL and headers of the printed `curl` line. */
function parseCurl(line: string): { url: string; headers: Record<string, string>; body: string } {
  const url = /curl -X POST (\S+)/.exec(line)?.[1] ?? '';
  const headers: Record<string, string> = {};
  for (const match of line.matchAll(/-H (['"])([^:]+): (.*?)\1/g))
    headers[(match[2] ?? '').toLowerCase()] = match[3] ?? '';
  const body = /-d '(.*)'$/.exec(line)?.[1] ?? '';
  return { url, headers, body };
}

test('agentward start: a directory without auth is not served open; the generated token is printed once with a curl that works', async (t) => {
  const dir = await agentDir(t);
  const server = run(t, ['start', dir]);
  const curl = parseCurl(await lineMatching(server.child.stdout, /curl -X POST/));
  assert.match(curl.url, /^http:\/\/127\.0\.0\.1:\d+\/agent$/);
  const token = /^Bearer ([A-Za-z0-9_-]{43})$/.exec(curl.headers.authorization ?? '')?.[1];
  assert.ok(token, 'a generated token in the curl');
  assert.equal(server.output().split(token).length - 1, 2, 'shown once, and once in the curl');

  const answered = await send(curl.url, { method: 'POST', headers: curl.headers, body: curl.body });
  assert.equal(answered.status, 200);
  assert.equal((JSON.parse(answered.text) as { text: string }).text, 'hello');
  assert.equal(
    (await send(curl.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: curl.body })).status,
    401,
  );

  server.child.kill('SIGTERM');
  assert.deepEqual(await server.exit, { code: 0, signal: null });
});

test('agentward start: AGENT_API_TOKEN protects the agent and is never printed', async (t) => {
  const dir = await agentDir(t);
  const token = 'configured-env-token-1234567890';
  const server = run(t, ['start', dir], { AGENT_API_TOKEN: token });
  const line = await lineMatching(server.child.stdout, /curl -X POST/);
  assert.match(line, /"Authorization: Bearer \$AGENT_API_TOKEN"/);
  const { url, body } = parseCurl(line);
  const headers = { 'content-type': 'application/json' };
  assert.equal((await send(url, { method: 'POST', headers, body })).status, 401);
  assert.equal(
    (await send(url, { method: 'POST', headers: { ...headers, authorization: `Bearer ${token}` }, body })).status,
    200,
  );
  assert.equal(server.output().includes(token), false);
});

test('agentward start: agentward.json names the base path, and its baked token is used but never printed', async (t) => {
  const baked = 'baked-token-abcdefghijklmnopqrstuvwxyz';
  const dir = await agentDir(t, { 'agentward.json': JSON.stringify({ basePath: '/v1/bot', apiToken: baked }) });
  const server = run(t, ['start', dir]);
  const line = await lineMatching(server.child.stdout, /curl -X POST/);
  const { url, body } = parseCurl(line);
  assert.match(url, /\/v1\/bot$/);
  assert.equal((await send(`${url}/health`)).status, 200);
  const headers = { 'content-type': 'application/json' };
  assert.equal((await send(url, { method: 'POST', headers, body })).status, 401);
  assert.equal(
    (await send(url, { method: 'POST', headers: { ...headers, authorization: `Bearer ${baked}` }, body })).status,
    200,
  );
  assert.equal(server.output().includes(baked), false);
});

test('agentward start: an auth.ts list is used, with AGENT_API_TOKEN appended after it', async (t) => {
  const dir = await agentDir(t, {
    'auth.ts': `import { basic } from 'agentward/auth';\nexport default [basic({ users: { ada: 'ada-password' } })];\n`,
  });
  const server = run(t, ['start', dir], { AGENT_API_TOKEN: 'env-token-0123456789' });
  const { url, body } = parseCurl(await lineMatching(server.child.stdout, /curl -X POST/));
  const headers = { 'content-type': 'application/json' };
  const refused = await send(url, { method: 'POST', headers, body });
  assert.equal(refused.status, 401);
  assert.equal(refused.headers['www-authenticate'], 'Basic realm="agent", charset="UTF-8", Bearer');
  const basicHeader = `Basic ${Buffer.from('ada:ada-password').toString('base64')}`;
  assert.equal(
    (await send(url, { method: 'POST', headers: { ...headers, authorization: basicHeader }, body })).status,
    200,
  );
  assert.equal(
    (await send(url, { method: 'POST', headers: { ...headers, authorization: 'Bearer env-token-0123456789' }, body }))
      .status,
    200,
  );
});

/** `promise`, or a failure naming what was awaited after `ms`: a wait on a child process never hangs. */
function within<T>(promise: Promise<T>, ms: number, what: string, output: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms; output:\n${output()}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

test('agentward dev: serves the directory and restarts when one of its files changes, printing its banner once and one line per restart (design §31)', async (t) => {
  const dir = await agentDir(t);
  const server = run(t, ['dev', dir]);
  const first = parseCurl(
    await within(lineMatching(server.child.stdout, /curl -X POST/), 30_000, 'curl line', server.output),
  );
  assert.equal((await send(`${first.url}/health`)).status, 200);
  const restarted = lineMatching(server.child.stdout, /reloaded in \d+ ms/);
  await writeFile(join(dir, 'agent.ts'), AGENT_SOURCE.replace("'cli-fixture'", "'renamed'"));
  assert.match(
    await within(restarted, 30_000, 'reload line', server.output),
    /^agentward: agent\.ts changed; reloaded in \d+ ms$/,
  );
  // The restarted server listens where the first did (PORT=0 picked it once).
  assert.equal((await send(`${first.url}/health`)).status, 200);
  const output = server.output();
  for (const line of [/listening on/g, /curl -X POST/g, /playground at/g])
    assert.equal(output.match(line)?.length, 1, `${line} printed once:\n${output}`);
  server.child.kill('SIGTERM');
  assert.equal((await within(server.exit, 20_000, 'exit', server.output)).code, 0);
});

test('bin/agentward.js runs the CLI: usage, and an unknown command exits 2', async (t) => {
  const help = run(t, ['--help'], {}, binFile);
  assert.equal((await help.exit).code, 0);
  assert.match(help.output(), /agentward start <dir\|out>/);
  const unknown = run(t, ['frobnicate', 'x'], {}, binFile);
  assert.equal((await unknown.exit).code, 2);
  assert.match(unknown.output(), /unknown command "frobnicate"/);
});

test('agentward start: a directory without agent.ts fails at start-up with a message naming the file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'agentward-cli-empty-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const server = run(t, ['start', dir]);
  assert.equal((await server.exit).code, 1);
  assert.match(server.output(), /agent\.ts: not found/);
});

test('npm start (agentward start examples/demo): the printed curl works, and a refund waits for approval in the file store', async (t) => {
  const data = await mkdtemp(join(tmpdir(), 'agentward-demo-'));
  t.after(() => rm(data, { recursive: true, force: true }));
  const demo = fileURLToPath(new URL('../../examples/demo', import.meta.url));
  const server = run(t, ['start', demo], { AGENT_DATA_DIR: data });
  const curl = parseCurl(await lineMatching(server.child.stdout, /curl -X POST/));
  const post = (url: string, body: unknown) =>
    send(url, { method: 'POST', headers: curl.headers, body: JSON.stringify(body) });

  assert.equal((await send(curl.url, { method: 'POST', headers: curl.headers, body: curl.body })).status, 200);
  const paused = JSON.parse((await post(curl.url, { message: '/tool refund {"orderId":"A-1","amount":20}' })).text) as {
    status: string;
    approvals: { id: string }[];
  };
  assert.equal(paused.status, 'awaiting-approval');
  const decided = JSON.parse(
    (await post(`${curl.url}/approvals/${paused.approvals[0]?.id}`, { approved: true })).text,
  ) as { status: string; text: string };
  assert.equal(decided.status, 'completed');
  assert.match(decided.text, /A-1/);
  assert.ok((await readdir(join(data, 'sessions'))).length >= 2, 'sessions are in AGENT_DATA_DIR');
});

/** A loopback port held by another server for the test's duration. */
async function takenPort(t: { after(fn: () => Promise<void>): void }): Promise<number> {
  const { createServer } = await import('node:net');
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => holder.close(() => resolve())));
  return (holder.address() as { port: number }).port;
}

for (const command of ['start', 'dev'] as const) {
  test(`agentward ${command} on a busy port exits 1 with "port N is in use; set PORT=…" (it does not wait)`, async (t) => {
    const dir = await agentDir(t);
    const port = await takenPort(t);
    const running = run(t, [command, dir], { PORT: String(port) });
    const timeout = setTimeout(() => running.child.kill('SIGKILL'), 20_000);
    const { code, signal } = await running.exit;
    clearTimeout(timeout);
    assert.equal(signal, null, `exited on its own, not killed:\n${running.output()}`);
    assert.equal(code, 1, running.output());
    assert.ok(running.output().includes(`port ${port} is in use; set PORT=…`), running.output());
    assert.doesNotMatch(running.output(), /EADDRINUSE|waiting for a file change/);
  });
}
