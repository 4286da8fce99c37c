// `agentward dev` on a directory with no auth at all: the token made for the run is one for the
// whole dev run, so a save that restarts the server does not sign the playground out.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { send } from '../helpers/http-client.ts';

const cliFile = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const agentSource = (version: string) => `import { createAgent } from 'agentward';
export default createAgent({ name: 'token', model: { generate: async () => ({ text: ${JSON.stringify(version)} }) } });
`;

test('agentward dev without auth: the token generated for the run is kept across restarts, so a save does not sign the playground out', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentward-dev-token-'));
  writeFileSync(join(dir, 'agent.ts'), agentSource('v1'));
  const env: Record<string, string | undefined> = { ...process.env, PORT: '0', HOST: '127.0.0.1', AGENT_LOG: 'off' };
  delete env.AGENT_API_TOKEN;
  delete env.AGENT_DATA_DIR;
  const child = spawn(process.execPath, [cliFile, 'dev', dir], { env });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const tokens = () =>
    [...output.matchAll(/generated an API token for this dev run \(kept across restarts\):\n {2}(\S+)/g)].map(
      (m) => m[1]!,
    );
  const origin = () => [...output.matchAll(/(http:\/\/127\.0\.0\.1:\d+)\/agent/g)].at(-1)?.[1];
  const answer = async (token: string) => {
    const where = origin();
    if (where === undefined) return { status: 0, text: '' };
    try {
      const reply = await send(`${where}/agent`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{"message":"which?"}',
      });
      return {
        status: reply.status,
        text: reply.status === 200 ? (JSON.parse(reply.text) as { text: string }).text : '',
      };
    } catch {
      return { status: 0, text: '' };
    }
  };
  const until = async (check: () => Promise<boolean>) => {
    const deadline = Date.now() + 30_000;
    while (!(await check())) {
      assert.ok(Date.now() < deadline, `dev said:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  try {
    await until(async () => tokens().length === 1 && (await answer(tokens()[0]!)).text === 'v1');
    const [first] = tokens();
    writeFileSync(join(dir, 'agent.ts'), agentSource('v2'));
    await until(async () => (await answer(first!)).text === 'v2');
    assert.equal(tokens().length, 1, 'the banner, token included, is printed once per dev run (design §31)');
    assert.equal((await answer('not-the-token-0123456789')).status, 401);
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
});
