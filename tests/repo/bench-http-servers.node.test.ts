// `npm run bench:http` starts each of its cases as a server process (`bench/http.ts --server
// <case>`). Nothing else runs them, so a change to the options serve() accepts could break the
// benchmark unseen (an open case once passed `auth: undefined`, which design §20 refuses): each
// case starts here and answers one request as the benchmark sends it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../bench/http.ts', import.meta.url));
const ours = /const OURS = \[([^\]]+)\]/.exec(readFileSync(script, 'utf8'));
const CASES = [...(ours?.[1] ?? '').matchAll(/'([^']+)'/g)].map((match) => match[1]!);

test('bench/http.ts names its cases in OURS (the list this test reads)', () => {
  assert.ok(CASES.length >= 10, `cases: ${CASES.join(', ')}`);
  for (const name of ['open', 'api-token', 'api-token-limits', 'api-token-limits-all'])
    assert.ok(CASES.includes(name), name);
});

for (const name of CASES) {
  test(`bench:http case ${name}: its server starts and answers POST /agent with 200`, async () => {
    const child = fork(script, ['--server', name], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
    try {
      const started = await new Promise<{ origin: string; authorization?: string }>((resolve, reject) => {
        child.once('message', (message) => resolve(message as { origin: string; authorization?: string }));
        child.once('exit', (code) => reject(new Error(`the server process exited (${code}): ${stderr}`)));
        child.send('start');
      });
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      };
      if (started.authorization !== undefined) headers.authorization = started.authorization;
      const isMcp = name === 'mcp-ask';
      const response = await fetch(`${started.origin}${isMcp ? '/agent/mcp' : '/agent'}`, {
        method: 'POST',
        headers: isMcp ? { ...headers, 'mcp-protocol-version': '2025-11-25' } : headers,
        body: isMcp
          ? JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { name: 'ask', arguments: { message: 'hello' } },
            })
          : JSON.stringify({ message: 'hello' }),
      });
      assert.equal(response.status, 200, `${name}: ${await response.clone().text()}`);
      await response.arrayBuffer();
    } finally {
      child.disconnect();
    }
  });
}
