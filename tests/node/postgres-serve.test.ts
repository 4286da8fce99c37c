// Two `serve()` processes on one PostgreSQL database (tests/fixtures-node/postgres-server-child.ts):
// concurrent sends to one session from both land in turns that never interleave, one approval
// decided concurrently on both resumes once, and an approval paused on one is decided on the
// other, the run resuming as the principal it started with.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { lineMatching } from '../fixtures-node/http-client.ts';
import { startDatabase, type TestDatabase } from './postgres-harness.ts';

const serverChild = fileURLToPath(new URL('../fixtures-node/postgres-server-child.ts', import.meta.url));
const ALICE = 'Bearer alice-token';
const BOB = 'Bearer bob-token';

let db: TestDatabase;
const children: ChildProcessWithoutNullStreams[] = [];
let urls: [string, string];

async function startChild(schema: string): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: db.url, AGENT_PG_SCHEMA: schema, AGENT_PG_POOL: '10' };
  delete env.AGENT_API_TOKEN;
  const child = spawn(process.execPath, [serverChild], { env });
  children.push(child);
  child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  const line = await lineMatching(child.stdout, /^listening /);
  return `${line.slice('listening '.length)}/agent`;
}

before(async () => {
  db = await startDatabase();
  const schema = db.schema();
  // One after the other: the second's migrate() finds the schema in place.
  urls = [await startChild(schema), await startChild(schema)];
});
after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await db?.stop();
});

async function call(url: string, authorization: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: await response.json() };
}

test('two server processes, one database: 50 concurrent sends to one session all land, in turns that never interleave', async () => {
  const sessionId = 'crowded-session';
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, n) => call(urls[n % 2]!, ALICE, { message: `message ${n}`, sessionId })),
  );
  assert.deepEqual(results.map((r) => r.status), Array(50).fill(200));
  for (const [n, result] of results.entries()) assert.equal(result.json.text, `[alice] message ${n}`);

  for (const url of urls) {
    const { status, json } = await call(`${url}/chat/${sessionId}`, ALICE);
    assert.equal(status, 200);
    const messages = json.messages as { role: string; content: string }[];
    assert.equal(messages.length, 100);
    // Each turn is a user message followed at once by its own reply: no turn cut into another.
    for (let i = 0; i < messages.length; i += 2) {
      assert.equal(messages[i]!.role, 'user');
      assert.deepEqual(messages[i + 1], { role: 'assistant', content: `[alice] ${messages[i]!.content}` });
    }
    const sent = messages.filter((m) => m.role === 'user').map((m) => m.content).sort();
    assert.deepEqual(sent, Array.from({ length: 50 }, (_, n) => `message ${n}`).sort());
  }
});

test('two server processes, one database: of 20 concurrent decisions on one approval exactly one resumes the run, 19 get APPROVAL_NOT_FOUND', async () => {
  const paused = await call(urls[0], ALICE, { message: '/tool refund {"amount":7}', sessionId: 'decide-once' });
  assert.equal(paused.status, 200);
  assert.equal(paused.json.status, 'awaiting-approval');
  const approvalId = paused.json.approvals[0].id as string;

  const decisions = await Promise.all(
    Array.from({ length: 20 }, (_, n) => call(`${urls[n % 2]}/approvals/${encodeURIComponent(approvalId)}`, BOB, { approved: true })),
  );
  const won = decisions.filter((d) => d.status === 200);
  const lost = decisions.filter((d) => d.status !== 200);
  assert.equal(won.length, 1);
  assert.equal(won[0]!.json.status, 'completed');
  assert.equal(lost.length, 19);
  for (const loser of lost) assert.deepEqual(loser, { status: 404, json: { error: 'Approval not found' } });

  const { json } = await call(`${urls[1]}/chat/decide-once`, ALICE);
  const toolMessages = (json.messages as { role: string }[]).filter((m) => m.role === 'tool');
  assert.equal(toolMessages.length, 1, 'the tool ran once');
  assert.deepEqual((await call(`${urls[0]}/approvals?sessionId=decide-once`, ALICE)).json, { approvals: [] });
});

test('two server processes, one database: an approval paused on one process is decided on the other, and the run resumes as its original principal', async () => {
  const paused = await call(urls[0], ALICE, { message: '/tool refund {"amount":12}', sessionId: 'cross-process' });
  assert.equal(paused.json.status, 'awaiting-approval');
  const approvalId = paused.json.approvals[0].id as string;

  const pending = await call(`${urls[1]}/approvals?sessionId=cross-process`, BOB);
  assert.deepEqual(pending.json.approvals.map((a: { id: string }) => a.id), [approvalId]);
  // Bob decides on the other process; the resumed run's model function still sees Alice.
  const decided = await call(`${urls[1]}/approvals/${encodeURIComponent(approvalId)}`, BOB, { approved: true });
  assert.equal(decided.status, 200);
  assert.equal(decided.json.status, 'completed');
  assert.match(decided.json.text, /^\[alice\] Tool results: refund: .*"refunded":12/);

  // Sending again works from either process: the session is no longer waiting.
  const next = await call(urls[0], ALICE, { message: 'after the refund', sessionId: 'cross-process' });
  assert.equal(next.json.text, '[alice] after the refund');
});
