import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fileStore } from '../../src/node/file-store.ts';
import { sessionRecord, storeContract } from '../helpers/store-contract.ts';
import type { Checkpoint, SessionRecord } from '../../src/agent/types.ts';

const writer = fileURLToPath(new URL('../helpers/children/file-store-writer.ts', import.meta.url));

async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentward-store-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
}

const session = (id: string, count: number): SessionRecord => ({
  id,
  messages: Array.from({ length: count }, (_, i) => ({ role: 'user' as const, content: `m${i}` })),
  audit: [],
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
});

const principal = Object.freeze({
  id: 'u1',
  type: 'user' as const,
  authenticator: 'jwt',
  issuer: 'https://issuer.example',
});

test('file store: sessions, checkpoints and memory survive a new store on the same folder', async (t) => {
  const dir = await tempDir(t);
  const first = fileStore(dir);
  const checkpoint: Checkpoint = {
    approvalId: 'ap-1',
    sessionId: 's-1',
    principal,
    metadata: { a: 1 },
    pending: [{ x: 1 }],
  };
  await first.saveSession(session('s-1', 2));
  await first.saveCheckpoint(checkpoint);
  await first.saveCheckpoint({ approvalId: 'ap-2', sessionId: 'other', metadata: {} });
  await first.appendMemory('iss|u1', 'likes tea');
  await first.appendMemory('iss|u1', 'lives in Oslo');

  const second = fileStore(dir);
  assert.deepEqual(await second.loadSession('s-1'), session('s-1', 2));
  assert.deepEqual(await second.loadCheckpoint('ap-1'), checkpoint);
  assert.deepEqual(await second.listCheckpoints('s-1'), [checkpoint]);
  assert.deepEqual(await second.loadMemory('iss|u1'), ['likes tea', 'lives in Oslo']);
});

test('file store: unknown records read as absent', async (t) => {
  const store = fileStore(await tempDir(t));
  assert.equal(await store.loadSession('nope'), undefined);
  assert.equal(await store.loadCheckpoint('nope'), undefined);
  assert.deepEqual(await store.listCheckpoints('nope'), []);
  assert.deepEqual(await store.loadMemory('nope'), []);
  assert.equal(await store.deleteCheckpoint('nope'), false);
});

test('file store: ids never name a path outside the folder', async (t) => {
  const dir = await tempDir(t);
  const store = fileStore(dir);
  const ids = ['../../escape', '/etc/passwd', '..', '.', 'a/../../b', 'C:\\windows', 'nul', 'A', 'a', '\u0000'];
  for (const id of ids) {
    await store.saveSession(session(id, 1));
    await store.appendMemory(id, 'n');
    await store.saveCheckpoint({ approvalId: id, sessionId: id, metadata: {} });
  }
  for (const id of ids) await store.saveSession({ ...session(id, 1), owner: ['jwt', id, id] });
  const files = (await filesUnder(dir)).filter((file) => file !== 'index-v1');
  assert.equal(files.length, ids.length * 6, 'one file per record and index entry: "A" and "a" do not collide');
  const hex = '[0-9a-f]{64}';
  const s = `\\${sep}`;
  for (const file of files)
    assert.match(
      file,
      new RegExp(
        `^((sessions|checkpoints|memory|session-owners)${s}${hex}|(session-checkpoints|owners)${s}${hex}${s}${hex})\\.json$`,
      ),
    );
  for (const id of ids) assert.equal((await store.loadSession(id))?.id, id);
});

test('file store: concurrent writes to one record are serialized', async (t) => {
  const store = fileStore(await tempDir(t));
  await Promise.all(Array.from({ length: 40 }, (_, i) => store.appendMemory('ns', `note ${i}`)));
  assert.deepEqual(
    await store.loadMemory('ns'),
    Array.from({ length: 40 }, (_, i) => `note ${i}`),
  );

  await Promise.all(Array.from({ length: 20 }, (_, i) => store.saveSession(session('s', i + 1))));
  assert.equal((await store.loadSession('s'))?.messages.length, 20, 'the last write queued is the last applied');
});

test('file store: deleting a checkpoint answers true to exactly one caller (decide-once)', async (t) => {
  const dir = await tempDir(t);
  const one = fileStore(dir);
  const another = fileStore(dir);
  await one.saveCheckpoint({ approvalId: 'ap', sessionId: 's', metadata: {} });
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => (i % 2 ? one : another).deleteCheckpoint('ap')),
  );
  assert.equal(results.filter(Boolean).length, 1);
  assert.equal(await one.loadCheckpoint('ap'), undefined);
  assert.deepEqual(await another.listCheckpoints('s'), []);
});

test('file store: leftover temporary files are not read as records', async (t) => {
  const dir = await tempDir(t);
  const store = fileStore(dir);
  await store.saveCheckpoint({ approvalId: 'ap', sessionId: 's', metadata: {} });
  const [name] = await readdir(join(dir, 'checkpoints'));
  await writeFile(join(dir, 'checkpoints', `${name}.0123456789abcdef.tmp`), '{"approvalId":"ap","sess');
  assert.equal((await store.listCheckpoints('s')).length, 1);
});

/** Runs the writer child in `dir`, SIGKILLs it right after acknowledgement `killAfter`, and returns the last acknowledgement seen. */
async function killWriterMidStream(dir: string, killAfter: number): Promise<number> {
  const child = spawn(process.execPath, [writer, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<NodeJS.Signals | null>((done) => child.on('exit', (_code, signal) => done(signal)));
  let lastAck = -1;
  let buffered = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) lastAck = Number(line.replace('ack ', ''));
    // Killed while the next batch of writes is under way.
    if (lastAck >= killAfter && !child.killed) child.kill('SIGKILL');
  });
  assert.equal(await exited, 'SIGKILL', `the writer was killed (last ack ${lastAck})`);
  return lastAck;
}

test('file store: every acknowledged write survives SIGKILL in the middle of a stream of writes, and no record is partial', async (t) => {
  const base = await tempDir(t);
  for (const killAfter of [20, 45, 70]) {
    const dir = join(base, String(killAfter));
    const lastAck = await killWriterMidStream(dir, killAfter);

    for (const file of await filesUnder(dir)) {
      if (file.endsWith('.tmp')) continue; // a write cut short before its rename: never read
      const text = await readFile(join(dir, file), 'utf8');
      assert.doesNotThrow(() => JSON.parse(text), `${file} is a whole JSON record`);
    }
    const store = fileStore(dir);
    const record = await store.loadSession('session-1');
    assert.ok(record && record.messages.length >= lastAck + 1, 'the session holds every acknowledged message');
    const notes = await store.loadMemory('issuer|user');
    for (let n = 0; n <= lastAck; n++) {
      assert.equal(notes[n], `note ${n}`);
      assert.deepEqual(await store.loadCheckpoint(`approval-${n}`), {
        approvalId: `approval-${n}`,
        sessionId: 'session-1',
        metadata: { n },
      });
    }
  }
});

storeContract('fileStore', async (t) => {
  const dir = await tempDir(t);
  return { store: fileStore(dir), reopen: () => fileStore(dir) };
});

test("file store: checkpoints are found by session, and counted by owner, without reading any other session's checkpoint", async (t) => {
  const dir = await tempDir(t);
  const store = fileStore(dir);
  await store.saveCheckpoint({ approvalId: 'mine', sessionId: 'mine', metadata: {}, owner: ['jwt', null, 'me'] });
  await store.saveCheckpoint({
    approvalId: 'foreign',
    sessionId: 'foreign',
    metadata: {},
    owner: ['jwt', null, 'other'],
  });
  // Foreign checkpoint files that cannot even be parsed: a scan would stumble on them.
  for (let i = 0; i < 50; i++)
    await writeFile(join(dir, 'checkpoints', `${'f'.repeat(60)}${String(i).padStart(4, '0')}.json`), '{not json');
  assert.deepEqual(
    (await store.listCheckpoints('mine')).map((c) => c.approvalId),
    ['mine'],
  );
  assert.equal(await store.countCheckpoints!(['jwt', null, 'me']), 1);
  assert.deepEqual(await store.listCheckpoints('nobody'), []);
});

test('file store: a folder written before the indexes existed is indexed once, at first use', async (t) => {
  const dir = await tempDir(t);
  const legacy = { approvalId: 'old', sessionId: 'old-session', metadata: {} };
  const { createHash } = await import('node:crypto');
  const { mkdir } = await import('node:fs/promises');
  await mkdir(join(dir, 'checkpoints'), { recursive: true });
  await writeFile(
    join(dir, 'checkpoints', `${createHash('sha256').update('old').digest('hex')}.json`),
    JSON.stringify(legacy),
  );
  assert.deepEqual(await fileStore(dir).listCheckpoints('old-session'), [legacy]);
  assert.deepEqual(await fileStore(dir).listCheckpoints('old-session'), [legacy]);
  assert.equal(await fileStore(dir).deleteCheckpoint('old'), true);
  assert.deepEqual(await fileStore(dir).listCheckpoints('old-session'), []);
});

test('fileStore takes a file: URL (new URL(".data", import.meta.url): beside the module) and refuses any other URL', async (t) => {
  const folder = await mkdtemp(join(tmpdir(), 'agentward-store-url-'));
  t.after(() => rm(folder, { recursive: true, force: true }));
  const store = fileStore(new URL('.data/', pathToFileURL(join(folder, 'agent.ts'))));
  await store.saveSession(sessionRecord('by-url'));
  assert.equal((await readdir(join(folder, '.data', 'sessions'))).length, 1);
  assert.equal((await store.loadSession('by-url'))?.id, 'by-url');
  assert.throws(() => fileStore(new URL('https://example.com/data')), {
    name: 'AuthConfigError',
    message: 'fileStore(): dir as a URL must be a file: URL; got a https: URL',
  });
});
