// The official MCP conformance suite (@modelcontextprotocol/conformance, a dev dependency) against
// an open local serve({ mcp: true }): the server scenarios design §18 names, each must pass whole;
// every other server scenario of the pinned suite is named in the README as one that does not apply (§29).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { serve, type AgentServer } from '../../src/node.ts';
import { nodeBin, root } from '../helpers/build.ts';
import { readDocs } from '../helpers/docs.ts';

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

test("every server scenario the pinned suite lists is run above or named in the README's table of those that do not apply; none is auth/dpop-nonce (design §29)", async () => {
  const cli = join(root, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const { stdout } = await promisify(execFile)(nodeBin, [cli, 'list'], {
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 60_000,
  });
  const server = stdout.slice(stdout.indexOf('Server scenarios'), stdout.indexOf('Client scenarios'));
  const listed = [...server.matchAll(/^\s+- (\S+)/gm)].map((match) => match[1]!);
  assert.ok(listed.length >= SCENARIOS.length, stdout);
  const readme = readDocs();
  const table = readme.slice(readme.indexOf('| Scenarios | Why they do not apply |'));
  const notApplying = table.slice(0, table.indexOf('\n\n'));
  for (const scenario of listed) {
    const named = notApplying.includes(`\`${scenario}\``) || notApplying.includes(`\`${scenario.split('-')[0]}-*\``);
    assert.ok(
      (SCENARIOS as readonly string[]).includes(scenario) || named,
      `${scenario}: run it, or say in the README why it does not apply`,
    );
  }
  // The suite's DPoP nonce scenario must run here once the pinned suite has it.
  assert.doesNotMatch(stdout, /auth\/dpop-nonce/, 'the pinned suite has auth/dpop-nonce: run it');
});
