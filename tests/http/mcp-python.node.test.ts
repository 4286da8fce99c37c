// Python `mcp` (the official SDK, installed with pip into a fresh venv) reading the MCP route's 429
// (design §29): the JSON-RPC error's code, message and data reach the caller, where the body
// {"error":"Too Many Requests"} gave only "Server returned an error response". Skipped, saying
// why, where there is no python3 with venv or pip cannot install mcp from its indexes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { serve } from '../../src/node.ts';
import { root } from '../helpers/build.ts';

const run = promisify(execFile);
const last = (text: string) => text.trim().split('\n').pop() ?? '';

test('Python mcp reads the 429 of a tools/call as the JSON-RPC error: -32000, Too Many Requests, data.retryAfter', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'agentward-py-mcp-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const venv = join(dir, 'venv');
  try {
    await run('python3', ['-m', 'venv', venv], { timeout: 60_000 });
  } catch (error) {
    t.skip(`no python3 with venv here: ${last(String((error as { stderr?: string }).stderr ?? error))}`);
    return;
  }
  try {
    // --retries 0: an index that cannot be reached is given up at once, not retried per package.
    await run(
      join(venv, 'bin', 'pip'),
      ['install', '--disable-pip-version-check', '--retries', '0', '--timeout', '20', 'mcp'],
      {
        timeout: 300_000,
      },
    );
  } catch (error) {
    t.skip(
      `pip could not install mcp from its indexes (on a machine where PyPI is refused and no mirror holds mcp, this test cannot run): ${last(String((error as { stderr?: string }).stderr ?? error))}`,
    );
    return;
  }
  const server = await serve({
    agent: createAgent({ name: 'python', model: echoModel(), store: memoryStore() }),
    port: 0,
    host: '127.0.0.1',
    log: 'off',
    mcp: true,
    limits: { requests: { limit: 1, windowSec: 60 } },
  });
  t.after(() => server.close());
  const script = join(root, 'tests', 'helpers', 'children', 'mcp-python-429.py');
  const { stdout } = await run(join(venv, 'bin', 'python'), [script, `${server.url}/agent/mcp`], { timeout: 60_000 });
  const out = JSON.parse(last(stdout)) as {
    first: boolean;
    code: number;
    message: string;
    data: { retryAfter: number };
  };
  assert.equal(out.first, false, 'the first call ran');
  assert.equal(out.code, -32000);
  assert.equal(out.message, 'Too Many Requests');
  assert.ok(
    Number.isInteger(out.data.retryAfter) && out.data.retryAfter >= 1 && out.data.retryAfter <= 60,
    JSON.stringify(out),
  );
});
