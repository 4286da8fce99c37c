// The official MCP conformance suite (@modelcontextprotocol/conformance, a dev dependency) against
// an open local serve({ mcp: true }): the server scenarios design §18 names, each must pass whole.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { serve, type AgentServer } from '../../src/node.ts';
import { nodeBin, root } from '../helpers/build.ts';

const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'] as const;
let server: AgentServer;

before(async () => {
  const agent = createAgent({ name: 'conformance', model: echoModel(), store: memoryStore() });
  server = await serve({ agent, port: 0, host: '127.0.0.1', basePath: '/agent', mcp: true, log: 'off' });
});
after(() => server?.close());

for (const scenario of SCENARIOS) {
  test(`conformance server --scenario ${scenario}: every check passes`, async () => {
    const cli = join(root, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
    const run = await promisify(execFile)(
      nodeBin,
      [cli, 'server', '--url', `${server.url}/agent/mcp`, '--scenario', scenario],
      { env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 },
    ).catch((error: { stdout?: string; stderr?: string; code?: number }) => error);
    const output = `${run.stdout ?? ''}${run.stderr ?? ''}`;
    const result = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(output);
    assert.ok(result, output);
    const [, passed, total, failed] = result.map(Number);
    assert.ok(total! > 0 && passed === total && failed === 0, output);
    assert.doesNotMatch(output, /FAILURE/);
  });
}
