import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { basicAuth, lineMatching, send } from '../helpers/http-client.ts';

const serverChild = fileURLToPath(new URL('../helpers/children/server.ts', import.meta.url));
const ada = basicAuth('ada', 'ada-password');
const bob = basicAuth('bob', 'bob-password');

async function startChild(dir: string): Promise<{
  child: ChildProcessWithoutNullStreams;
  url: string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}> {
  const env = { ...process.env };
  delete env.AGENT_API_TOKEN;
  const child = spawn(process.execPath, [serverChild, dir], { env });
  child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const line = await lineMatching(child.stdout, /^listening /);
  return { child, url: line.slice('listening '.length), exit };
}

const post = (url: string, authorization: string, body: unknown) =>
  send(url, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

test('node server: sessions and a paused approval survive SIGKILL and a restart; the approval resumes with the principal the run started with', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'agentward-restart-'));
  t.after(() => rm(dir, { recursive: true, force: true }));

  const first = await startChild(dir);
  t.after(() => void first.child.kill('SIGKILL'));
  const greeted = await post(`${first.url}/agent`, ada, { message: 'hello' });
  assert.equal(greeted.status, 200);
  const { sessionId } = JSON.parse(greeted.text) as { sessionId: string };
  const paused = await post(`${first.url}/agent`, ada, { message: '/tool refund {"amount":5}', sessionId });
  const pausedResult = JSON.parse(paused.text) as { status: string; approvals: { id: string; tool: string }[] };
  assert.equal(pausedResult.status, 'awaiting-approval');
  const approvalId = pausedResult.approvals[0]?.id ?? '';
  first.child.kill('SIGKILL');
  assert.equal((await first.exit).signal, 'SIGKILL');

  const second = await startChild(dir);
  t.after(() => void second.child.kill('SIGKILL'));
  const transcript = JSON.parse(
    (await send(`${second.url}/agent/chat/${sessionId}`, { headers: { authorization: bob } })).text,
  ) as { messages: { role: string; content: string }[] };
  assert.equal(transcript.messages[0]?.content, 'hello');
  assert.equal(transcript.messages[1]?.content, '[ada] hello');
  const pending = JSON.parse(
    (await send(`${second.url}/agent/approvals?sessionId=${sessionId}`, { headers: { authorization: bob } })).text,
  ) as { approvals: { id: string }[] };
  assert.deepEqual(
    pending.approvals.map((a) => a.id),
    [approvalId],
  );

  // Bob decides; the resumed run's model function still sees Ada.
  const decided = await post(`${second.url}/agent/approvals/${encodeURIComponent(approvalId)}`, bob, {
    approved: true,
  });
  assert.equal(decided.status, 200);
  const result = JSON.parse(decided.text) as { status: string; text: string };
  assert.equal(result.status, 'completed');
  assert.match(result.text, /^\[ada\] /);
  assert.match(result.text, /5/);

  const again = await post(`${second.url}/agent/approvals/${encodeURIComponent(approvalId)}`, bob, { approved: true });
  assert.equal(again.status, 404, 'an approval is decided once');
});

test('node server: on SIGTERM a request in flight completes, then the process exits 0', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'agentward-shutdown-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const server = await startChild(dir);
  t.after(() => void server.child.kill('SIGKILL'));

  const started = lineMatching(server.child.stdout, /^slow-started$/);
  const inFlight = post(`${server.url}/agent`, ada, { message: 'slow' });
  await started;
  server.child.kill('SIGTERM');

  const response = await inFlight;
  assert.equal(response.status, 200);
  assert.equal((JSON.parse(response.text) as { text: string }).text, 'slow done');
  assert.deepEqual(await server.exit, { code: 0, signal: null });
});
