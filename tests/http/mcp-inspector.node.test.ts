// The MCP Inspector's CLI (`@modelcontextprotocol/inspector`, `--cli --method tools/list`, design
// §29, §36) lists the agent's own tools beside ask and decide, and its `--strict` schema check
// passes on every listed schema (zod, JSON Schema, the approval envelope), against serve().
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { z } from 'zod';
import { apiToken } from '../../src/auth/index.ts';
import { createAgent, echoModel, tool } from '../../src/agent/index.ts';
import { serve, type AgentServer } from '../../src/node.ts';

const INSPECTOR = fileURLToPath(new URL('../../node_modules/.bin/mcp-inspector', import.meta.url));
const TOKEN = 'an-inspector-test-token-of-enough-length';

let server: AgentServer;
let url: string;
let home: string;
before(async () => {
  const weather = tool({
    name: 'weather',
    description: 'Current weather of a city',
    parameters: z.object({ city: z.string() }),
    outputSchema: z.object({ city: z.string(), celsius: z.number() }),
    execute: ({ city }) => ({ city, celsius: 21 }),
  });
  const deploy = tool({
    name: 'deploy',
    description: 'Deploys a service',
    parameters: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
    needsApproval: true,
    execute: () => 'deployed',
  });
  const agent = createAgent({ name: 'ops', model: echoModel(), tools: [weather, deploy] });
  server = await serve({
    agent,
    port: 0,
    host: '127.0.0.1',
    basePath: '/agent',
    log: 'off',
    auth: [apiToken(TOKEN)],
    mcp: { tools: 'agent' },
  });
  url = `${server.url.replace(/\/$/, '')}/agent/mcp`;
  home = await mkdtemp(join(tmpdir(), 'agentward-inspector-'));
});
after(async () => {
  await server?.close();
  if (home !== undefined) await rm(home, { recursive: true, force: true });
});

/** Runs the Inspector's CLI as a user would, its catalog kept in a temporary folder; its exit code, stdout and stderr. */
function inspector(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [INSPECTOR, '--cli', url, '--header', `Authorization: Bearer ${TOKEN}`, ...args],
      { env: { ...process.env, HOME: home, MCP_CATALOG_PATH: join(home, 'mcp.json') }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? 1), stdout, stderr }),
    );
  });
}

test('the Inspector CLI lists the agent tools beside ask and decide, and --strict finds no schema problem', async () => {
  const listed = await inspector('--method', 'tools/list', '--format', 'json');
  assert.equal(listed.code, 0, listed.stderr);
  // --format json: one object whose result is the server's answer.
  const { tools } = (
    JSON.parse(listed.stdout) as { result: { tools: { name: string; outputSchema?: { type?: string } }[] } }
  ).result;
  assert.deepEqual(
    tools.map((entry) => entry.name),
    ['ask', 'decide', 'read', 'weather', 'deploy'],
  );
  assert.equal(tools.find((entry) => entry.name === 'deploy')?.outputSchema?.type, 'object');
  const strict = await inspector('--method', 'tools/list', '--strict', '--format', 'json');
  assert.equal(strict.code, 0, strict.stderr);
  // Only the JSON type unions are noted (warnings): no schema without a type (design §29), none that errs.
  assert.match(strict.stderr, /\b0 errors\b/);
  assert.doesNotMatch(strict.stderr, /no validation keyword/);
});
