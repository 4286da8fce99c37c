// `agentward dev` prints why bearer tokens are refused (design §12: onRefused), never the token;
// agentHandler and serve pass their onRefused option to routeAuth.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAgent, echoModel } from '../../src/index.ts';
import { agentHandler } from '../../src/http/handler.ts';
import { serve } from '../../src/node/server.ts';
import type { Refusal } from '../../src/auth/index.ts';
import { lineMatching, send } from '../helpers/http-client.ts';
import { printRefusal } from '../../src/cli/server-main.ts';

const cliFile = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const SECRET = 'dev-refusal-secret-that-is-at-least-32-bytes';
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

async function signed(payload: Record<string, unknown>): Promise<string> {
  const key = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(SECRET),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const input = `${b64({ alg: 'HS256', kid: 'dev-kid' })}.${b64(payload)}`;
  return `${input}.${Buffer.from(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(input))).toString('base64url')}`;
}

test('agentward dev: each refused bearer token prints its entry, reason, kid and iss, never the token', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'agentward-refusals-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(
    join(dir, 'agent.ts'),
    `import { createAgent, echoModel } from 'agentward';\nexport default createAgent({ name: 'refusals', model: echoModel() });\n`,
  );
  await writeFile(
    join(dir, 'auth.ts'),
    `import { jwt } from 'agentward';\nexport default [jwt({ secret: ${JSON.stringify(SECRET)}, issuer: 'https://id.example', audience: 'agent-api' })];\n`,
  );
  const env: Record<string, string | undefined> = { ...process.env, PORT: '0', HOST: '127.0.0.1' };
  delete env.AGENT_API_TOKEN;
  const child = spawn(process.execPath, [cliFile, 'dev', dir], { env, detached: true });
  t.after(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = /listening on (\S+)/.exec(await lineMatching(child.stdout, /listening on/))![1]!;
  const expired = await signed({
    sub: 'ada',
    iss: 'https://id.example',
    aud: 'agent-api',
    exp: Math.floor(Date.now() / 1000) - 3600,
  });
  const answered = await send(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${expired}` },
    body: '{"message":"hi"}',
  });
  assert.equal(answered.status, 401);
  assert.equal(answered.text, '{"error":"Unauthorized"}');
  for (let waited = 0; !/refused a bearer token.*\n/.test(output) && waited < 5000; waited += 20)
    await new Promise((resolve) => setTimeout(resolve, 20));
  assert.match(output, /agentward: jwt refused a bearer token: expired kid="dev-kid" iss="https:\/\/id\.example"/);
  assert.ok(!output.includes(expired) && !output.includes(expired.split('.')[2]!), 'never the token');
});

test('agentHandler and serve hand onRefused to routeAuth', async (t) => {
  const agent = createAgent({ name: 'refusals', model: echoModel() });
  const heard: Refusal[] = [];
  const handler = agentHandler(agent, {
    auth: 'the-api-token-0123456789',
    onRefused: (refusal) => void heard.push(refusal),
  });
  assert.equal(
    (
      await handler(
        new Request('http://x/', {
          method: 'POST',
          headers: { authorization: 'Bearer wrong' },
          body: '{"message":"hi"}',
        }),
      )
    ).status,
    401,
  );
  assert.deepEqual(heard, [{ entry: 'apiToken', reason: 'mismatch' }]);
  const server = await serve({
    agent,
    auth: 'the-api-token-0123456789',
    port: 0,
    onRefused: (refusal) => void heard.push(refusal),
  });
  t.after(() => server.close());
  const answered = await send(`${server.url}/agent`, {
    method: 'POST',
    headers: { authorization: 'Bearer wrong!' },
    body: '{"message":"hi"}',
  });
  assert.equal(answered.status, 401);
  assert.deepEqual(heard.at(-1), { entry: 'apiToken', reason: 'malformed' });
});

// Issue 28, finding 5: printed lines let U+2028/U+2029 and bidi overrides (U+202E) through.
test('a printed refusal escapes every control, format (bidi) and line-separator character of kid and iss: one plain line', () => {
  const lines: string[] = [];
  const original = console.log;
  console.log = (line: string) => void lines.push(line);
  try {
    printRefusal({
      entry: 'jwt',
      reason: 'signature',
      kid: 'a\u202Eb\u2028c\u2029d\ne\u0007f\u200Fg\u2066h"i\\j\u0085k',
      iss: 'https://id.example/\u202Etxt.exe',
    });
  } finally {
    console.log = original;
  }
  assert.equal(lines.length, 1);
  assert.equal(
    lines[0],
    'agentward: jwt refused a bearer token: signature kid="a\\u202eb\\u2028c\\u2029d\\u000ae\\u0007f\\u200fg\\u2066h\\u0022i\\u005cj\\u0085k" iss="https://id.example/\\u202etxt.exe"',
  );
  assert.doesNotMatch(lines[0]!, /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]/);
});

test('agentward dev: a 403 for missing scopes prints the scopes its challenge names (an approval decided with a chat-only token), never the token', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'agentward-scopes-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(
    join(dir, 'agent.ts'),
    `import { createAgent, echoModel, tool } from 'agentward';
export default createAgent({
  name: 'scoped',
  model: echoModel(),
  tools: [tool({ name: 'refund', description: 'Refunds an order', parameters: { type: 'object', properties: { orderId: { type: 'string' } } }, needsApproval: true, execute: async ({ orderId }) => 'refunded ' + orderId })],
});
`,
  );
  await writeFile(
    join(dir, 'auth.ts'),
    `import { jwt } from 'agentward';
export default [jwt({ secret: ${JSON.stringify(SECRET)}, issuer: 'https://id.example', audience: 'agent-api' })];
export const scopes = { approve: ['agent:approve'] };
`,
  );
  const env: Record<string, string | undefined> = { ...process.env, PORT: '0', HOST: '127.0.0.1' };
  delete env.AGENT_API_TOKEN;
  const child = spawn(process.execPath, [cliFile, 'dev', dir], { env, detached: true });
  t.after(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = /listening on (\S+)/.exec(await lineMatching(child.stdout, /listening on/))![1]!;
  const chatOnly = await signed({
    sub: 'ada',
    iss: 'https://id.example',
    aud: 'agent-api',
    scope: 'agent:chat',
    exp: Math.floor(Date.now() / 1000) + 600,
  });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${chatOnly}` };
  const asked = await send(url, {
    method: 'POST',
    headers,
    body: '{"message":"/tool refund {\\"orderId\\":\\"A-1\\"}"}',
  });
  assert.equal(asked.status, 200, asked.text);
  const [approval] = (JSON.parse(asked.text) as { approvals: { id: string }[] }).approvals;
  const decided = await send(`${url}/approvals/${approval!.id}`, {
    method: 'POST',
    headers,
    body: '{"approved":true}',
  });
  assert.equal(decided.status, 403);
  for (let waited = 0; !/answered 403.*\n/.test(output) && waited < 5000; waited += 20)
    await new Promise((resolve) => setTimeout(resolve, 20));
  assert.match(
    output,
    new RegExp(
      `agentward: POST /agent/approvals/${approval!.id} answered 403: the token lacks the scope agent:approve \\(insufficient_scope\\)`,
    ),
  );
  assert.ok(!output.includes(chatOnly.split('.')[2]!), 'never the token');
});
