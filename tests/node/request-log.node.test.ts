// The request log: one line per request (time, method, path, status, duration, principal),
// never a token, password or Authorization value; off with --quiet or AGENT_LOG=off; JSON lines with AGENT_LOG=json.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { basicAuth, send } from '../helpers/http-client.ts';
import { requestLog } from '../../src/node/request-log.ts';
import { serve } from '../../src/node/server.ts';
import { createAgent } from '../../src/agent/agent.ts';
import { echoModel } from '../../src/agent/models/echo.ts';
import { memoryStore } from '../../src/agent/store.ts';
import { apiToken } from '../../src/auth/api-token.ts';
import { nodeBin, root, tempFolder } from '../helpers/build.ts';

const cliFile = join(root, 'src', 'cli', 'main.ts');
const TOKEN = 'log-test-token-must-never-be-logged-0123456789';
const PASSWORD = 'log-test-password-must-never-be-logged';
const ENV_TOKEN = 'log-test-env-token-never-logged-0123456789';
const SECRETS = [
  TOKEN,
  PASSWORD,
  ENV_TOKEN,
  Buffer.from(`ada:${PASSWORD}`).toString('base64'),
  'query-secret-value',
  'body-secret-value',
];

function agentDir(t: { after(fn: () => void): void }): string {
  const dir = tempFolder(t, 'agentward-log-');
  writeFileSync(
    join(dir, 'agent.ts'),
    "import { createAgent, echoModel } from 'agentward';\nexport default createAgent({ name: 'logged', model: echoModel() });\n",
  );
  writeFileSync(
    join(dir, 'auth.ts'),
    `import { apiToken, basic } from 'agentward/auth';\nexport default [basic({ users: { ada: '${PASSWORD}' } }), apiToken('${TOKEN}', { id: 'ci-bot' })];\n`,
  );
  return dir;
}

interface Server {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

async function startCli(
  t: { after(fn: () => void): void },
  args: string[],
  env: Record<string, string>,
): Promise<Server> {
  const childEnv: Record<string, string | undefined> = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    AGENT_DATA_DIR: tempFolder(t, 'agentward-log-data-'),
    ...env,
  };
  if (env.AGENT_LOG === undefined) delete childEnv.AGENT_LOG;
  const child = spawn(nodeBin, [cliFile, ...args], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => void child.kill('SIGKILL'));
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const match = /listening on (\S+)/.exec(output);
      if (match) resolve(match[1] as string);
    });
    void exited.then(() => reject(new Error(`exited before listening:\n${output}`)));
  });
  return { url, output: () => output, stop: () => (child.kill('SIGTERM'), exited) };
}

/** Requests carrying every kind of secret: valid and invalid Bearer and Basic credentials, a query, a body. */
async function sendSecrets(url: string): Promise<number> {
  const json = { 'content-type': 'application/json' };
  const body = JSON.stringify({ message: 'body-secret-value' });
  const requests: [string, Parameters<typeof send>[1]][] = [
    [url, { method: 'POST', headers: { ...json, authorization: `Bearer ${TOKEN}` }, body }],
    [url, { method: 'POST', headers: { ...json, authorization: basicAuth('ada', PASSWORD) }, body }],
    [url, { method: 'POST', headers: { ...json, authorization: `Bearer ${TOKEN}x` }, body }],
    [url, { method: 'POST', headers: { ...json, authorization: `Bearer ${ENV_TOKEN}` }, body }],
    [
      `${url}/approvals?sessionId=query-secret-value&token=query-secret-value`,
      { headers: { authorization: `Bearer ${TOKEN}` } },
    ],
    [`${url}/health`, {}],
  ];
  for (const [target, options] of requests) await send(target, options);
  return requests.length;
}

const TEXT_LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (GET|POST) (\/\S*) (\d{3}) (\d+(?:\.\d+)?)ms (\S+)$/;
const requestLines = (output: string) => output.split('\n').filter((line) => TEXT_LINE.test(line));

async function settle(server: Server, lines: (output: string) => unknown[], count: number): Promise<void> {
  for (let i = 0; i < 100 && lines(server.output()).length < count; i++)
    await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('request log', () => {
  test('start: one text line per request with time, method, path without query, status, duration and principal; no secret', async (t) => {
    const server = await startCli(t, ['start', agentDir(t)], { AGENT_API_TOKEN: ENV_TOKEN });
    const count = await sendSecrets(server.url);
    await settle(server, requestLines, count);
    const lines = requestLines(server.output()).map((line) => TEXT_LINE.exec(line)!.slice(2));
    assert.deepEqual(
      lines.map(([method, path, status, , principal]) => [method, path, status, principal]),
      [
        ['POST', '/agent', '200', 'api-token:ci-bot'],
        ['POST', '/agent', '200', 'basic:ada'],
        ['POST', '/agent', '401', '-'],
        ['POST', '/agent', '200', 'api-token:api-token'],
        ['GET', '/agent/approvals', '200', 'api-token:ci-bot'],
        ['GET', '/agent/health', '200', '-'],
      ],
    );
    const output = server.output();
    for (const secret of SECRETS) assert.equal(output.includes(secret), false, `the log holds ${secret}`);
    for (const line of requestLines(output)) assert.doesNotMatch(line, /authorization|Bearer|Basic /i);
  });

  test('AGENT_LOG=json: one JSON object per request line, same fields, no secret', async (t) => {
    const server = await startCli(t, ['start', agentDir(t)], { AGENT_LOG: 'json', AGENT_API_TOKEN: ENV_TOKEN });
    const count = await sendSecrets(server.url);
    const jsonLines = (output: string) => output.split('\n').filter((line) => line.startsWith('{'));
    await settle(server, jsonLines, count);
    const entries = jsonLines(server.output()).map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.equal(entries.length, count);
    for (const entry of entries) {
      assert.deepEqual(Object.keys(entry), ['time', 'method', 'path', 'status', 'durationMs', 'principal']);
      assert.ok(!Number.isNaN(Date.parse(entry.time as string)));
      assert.equal(typeof entry.durationMs, 'number');
    }
    assert.deepEqual(
      entries.map((entry) => entry.principal),
      ['api-token:ci-bot', 'basic:ada', null, 'api-token:api-token', 'api-token:ci-bot', null],
    );
    assert.equal(entries[4]?.path, '/agent/approvals');
    for (const secret of SECRETS) assert.equal(server.output().includes(secret), false);
  });

  for (const [name, args, env] of [
    ['--quiet', ['--quiet'], {}],
    ['AGENT_LOG=off', [], { AGENT_LOG: 'off' }],
  ] as const) {
    test(`${name}: no request line`, async (t) => {
      const server = await startCli(t, ['start', agentDir(t), ...args], env);
      await sendSecrets(server.url);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(requestLines(server.output()), []);
      assert.match(server.output(), /listening on/);
    });
  }

  test('serve(): a path cannot forge a log line or field (control characters are escaped)', async (t) => {
    const lines: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      if (typeof chunk === 'string' && TEXT_LINE.test(chunk.trimEnd())) return (lines.push(chunk), true);
      return (write as (...args: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
    }) as typeof process.stdout.write;
    t.after(() => (process.stdout.write = write));
    const agent = createAgent({ name: 'forge', model: echoModel(), store: memoryStore() });
    const server = await serve({ agent, auth: [apiToken(TOKEN)], port: 0, log: 'text' });
    t.after(() => server.close());
    await send(`${server.url}/agent/%0a2026-01-01T00:00:00.000Z%20GET%20/fake%20200%201ms%20admin:root`);
    await send(`${server.url}/agent/a\u0085b`).catch(() => undefined);
    for (let i = 0; i < 50 && lines.length < 1; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(lines.length >= 1);
    for (const line of lines) assert.equal(line.split('\n').length, 2, 'one line');
    assert.match(lines[0]!, / 401 [\d.]+ms -\n$/);
    await assert.rejects(serve({ agent, port: 0, log: 'loud' as 'text' }), /log must be one of text, json, off/);
  });

  test('requestLog(): every field with a space, a control or format character, a quote or a backslash is escaped; plain ASCII is kept; the time is the time of the line', async () => {
    const lines: string[] = [];
    const log = requestLog('text', (line) => lines.push(line));
    const logged = async (method: string, url: string, principal?: { id: string; authenticator: string }) => {
      const res = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: true, headersSent: true });
      const before = Date.now();
      log.track({ method, url } as never, res as never, principal === undefined ? undefined : ({ principal } as never));
      res.emit('close');
      const after = Date.now();
      const line = lines.at(-1)!;
      const time = Date.parse(line.slice(0, line.indexOf(' ')));
      assert.ok(
        time >= before && time <= after,
        `the time of the line (${line.slice(0, 24)}) is between ${before} and ${after}`,
      );
      return line.slice(line.indexOf(' ') + 1).replace(/ [\d.]+ms /, ' _ms ');
    };
    assert.equal(
      await logged('POST', '/agent?token=never', { id: 'ci-bot', authenticator: 'api-token' }),
      'POST /agent 200 _ms api-token:ci-bot',
    );
    assert.equal(
      await logged('GET', "/agent/~a-b_c.d!$&'()*+,;=:@[]{}|^`"),
      "GET /agent/~a-b_c.d!$&'()*+,;=:@[]{}|^` 200 _ms -",
    );
    // One character at a time: a field with any one of them is escaped whole, not kept as plain.
    for (const c of [
      ' ',
      '\t',
      '\n',
      '\r',
      '"',
      '\\',
      '\x00',
      '\x1b',
      '\x7f',
      '\x85',
      '\u00a0',
      '\u200b',
      '\u2028',
      '\ufeff',
    ]) {
      const escaped = `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
      assert.equal(
        await logged('GET', `/a${c}b`, { id: `x${c}y`, authenticator: 'jwt' }),
        `GET /a${escaped}b 200 _ms jwt:x${escaped}y`,
        JSON.stringify(c),
      );
      assert.equal(await logged(`G${c}T`, '/'), `G${escaped}T / 200 _ms -`, JSON.stringify(c));
    }
    assert.equal(await logged('GET', '/caf\u00e9'), 'GET /caf\u00e9 200 _ms -', 'a printable non-ASCII letter is kept');
    // Lines a few milliseconds apart carry their own times, not the first one's.
    const first = lines.length;
    for (let i = 0; i < 3; i++) {
      await logged('GET', '/agent/health');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(new Set(lines.slice(first).map((line) => line.slice(0, 24))).size, 3);
  });
});

test('serve(): the JSON log line, onRefused and the audit record agree on a refused and an allowed request (design §32)', async (t) => {
  const lines: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    if (typeof chunk === 'string' && chunk.startsWith('{"time"')) return (lines.push(chunk), true);
    return (write as (...args: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
  }) as typeof process.stdout.write;
  t.after(() => (process.stdout.write = write));
  const records: { status: number; reason?: string; entry?: string; caller?: { authenticator: string; id: string } }[] =
    [];
  const heard: { entry?: string; reason: string }[] = [];
  const agent = createAgent({ name: 'agree', model: echoModel(), store: memoryStore() });
  const server = await serve({
    agent,
    auth: [apiToken(TOKEN, { id: 'ci-bot' })],
    port: 0,
    log: 'json',
    onRefused: (refusal) => void heard.push(refusal),
    audit: (record) => void records.push(record),
  });
  t.after(() => server.close());
  const post = (token: string) =>
    send(`${server.url}/agent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"message":"hi"}',
    });
  assert.equal((await post(`${TOKEN.slice(0, -1)}x`)).status, 401);
  assert.equal((await post(TOKEN)).status, 200);
  for (let i = 0; i < 50 && lines.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  const logged = lines.map((line) => JSON.parse(line) as { status: number; principal: string | null });
  assert.deepEqual(
    logged.map(({ status, principal }) => [status, principal]),
    records.map(({ status, caller }) => [status, caller === undefined ? null : `${caller.authenticator}:${caller.id}`]),
  );
  assert.deepEqual(
    logged.map(({ principal }) => principal),
    [null, 'api-token:ci-bot'],
  );
  assert.deepEqual(heard, [{ entry: records[0]!.entry, reason: records[0]!.reason }]);
  assert.equal(records[1]!.reason, undefined);
});
