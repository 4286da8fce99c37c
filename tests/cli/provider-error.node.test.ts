// What a model's provider said when a call failed (design §31): `agentward dev` and `agentward
// start --verbose` print its status, error type and message on the server's terminal, the API
// key and header values redacted; the callers' answers and streams carry the status alone, and
// a plain `start` prints nothing of it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build } from '../../src/targets/build.ts';
import { send } from '../helpers/http-client.ts';

const cliFile = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const TOKEN = 'provider-error-token-0123456789';
const API_KEY = 'sk-provider-error-test-key-0123456789';
const SAID = "Unsupported parameter: 'temperature' is not supported with this model.";

/** A provider that answers every call as OpenAI does a parameter the model does not take. */
async function refusingProvider(t: TestContext): Promise<string> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: `${SAID} (sent with ${API_KEY})`, type: 'invalid_request_error', param: 'temperature' },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
}

function agentDir(t: TestContext, baseURL: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentward-provider-error-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'agent.ts'),
    `import { createAgent, openAICompatible } from 'agentward';
export default createAgent({
  name: 'provider-error',
  model: openAICompatible({ baseURL: ${JSON.stringify(baseURL)}, apiKey: ${JSON.stringify(API_KEY)}, model: 'gpt-test' }),
  settings: { temperature: 0.2 },
});
`,
  );
  writeFileSync(join(dir, 'agentward.json'), JSON.stringify({ apiToken: TOKEN }));
  return dir;
}

/** Runs the CLI until it listens; `output()` is all it printed; killed after the test. */
async function runServer(t: TestContext, args: string[]) {
  const env: Record<string, string | undefined> = { ...process.env, PORT: '0', HOST: '127.0.0.1', AGENT_LOG: 'off' };
  delete env.AGENT_API_TOKEN;
  delete env.AGENT_DATA_DIR;
  const child = spawn(process.execPath, [cliFile, ...args], { env });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  t.after(async () => {
    child.kill('SIGTERM');
    await exited;
  });
  const deadline = Date.now() + 30_000;
  let url: string | undefined;
  while ((url = /listening on (http:\/\/\S+)/.exec(output)?.[1]) === undefined) {
    assert.ok(Date.now() < deadline, `${args.join(' ')} did not say where it listens within 30 s:\n${output}`);
    assert.equal(child.exitCode, null, `${args.join(' ')} exited:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url, output: () => output };
}

/** What callers get: the JSON answer and the useChat stream. */
async function callerAnswers(url: string): Promise<string[]> {
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const json = await send(url, { method: 'POST', headers, body: '{"message":"hi"}' });
  assert.equal(json.status, 502, json.text);
  const ui = await send(`${url}/ui`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      id: 'chat-provider-error',
      trigger: 'submit-message',
      messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
    }),
  });
  return [json.text, ui.text];
}

async function printed(output: () => string, pattern: RegExp, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((output().match(pattern)?.length ?? 0) < count) {
    assert.ok(Date.now() < deadline, `${pattern} not printed ${count} times within 10 s:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const command of [['dev'], ['start', '--verbose']]) {
  test(`agentward ${command.join(' ')}: a provider's 400 prints its status, type and message on the terminal, the key redacted; the answer and the useChat stream carry MODEL_ERROR's status alone`, async (t) => {
    const baseURL = await refusingProvider(t);
    const server = await runServer(t, [...command.slice(0, 1), agentDir(t, baseURL), ...command.slice(1)]);
    const answers = await callerAnswers(server.url);
    assert.equal(answers[0], '{"error":"The model failed"}');
    assert.match(answers[1]!, /"type":"error"/);
    for (const answer of answers) assert.doesNotMatch(answer, /temperature|invalid_request_error|sk-provider/, answer);
    const line =
      /agentward: the model failed \(127\.0\.0\.1:\d+ gpt-test\): HTTP 400 invalid_request_error: Unsupported parameter: 'temperature' is not supported with this model\. \(sent with \[redacted\]\)/g;
    await printed(server.output, line, 2);
    assert.equal(server.output().includes(API_KEY), false, 'the API key is never printed');
  });
}

test("agentward start <node-server build output> --verbose prints the provider's error too: the output's own copy of agentward hears it", async (t) => {
  const baseURL = await refusingProvider(t);
  const out = join(mkdtempSync(join(tmpdir(), 'agentward-provider-error-out-')), 'out');
  t.after(() => rmSync(dirname(out), { recursive: true, force: true }));
  await build(agentDir(t, baseURL), { target: 'node-server', out });
  const server = await runServer(t, ['start', out, '--verbose']);
  const answers = await callerAnswers(server.url);
  for (const answer of answers) assert.doesNotMatch(answer, /temperature|sk-provider/, answer);
  await printed(server.output, /the model failed \(127\.0\.0\.1:\d+ gpt-test\): HTTP 400 invalid_request_error/g, 2);
  assert.equal(server.output().includes(API_KEY), false, 'the API key is never printed');
});

test('agentward start without --verbose prints nothing of what the provider said', async (t) => {
  const baseURL = await refusingProvider(t);
  const server = await runServer(t, ['start', agentDir(t, baseURL)]);
  await callerAnswers(server.url);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.doesNotMatch(server.output(), /temperature|the model failed|sk-provider/, server.output());
});
