// `agentward dev` as editors and tools change an agent directory: one real `dev` process, and
// each way a file is saved (in place, a temporary file renamed over it, `sed -i`, a write after
// such a rename, delete and re-create, a new folder) must restart it with the new code. A load
// that fails answers 503 (not a refused or hanging connection) until the fixed save restarts it.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { send } from '../helpers/http-client.ts';

const cliFile = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const TOKEN = 'dev-reload-token-0123456789abcdef';

/** An agent whose model answers `version` to any message: what the server answers says which code it runs. */
const agentSource = (
  version: string,
  from = `${JSON.stringify(version)}`,
  imports = '',
) => `import { createAgent } from 'agentward';
${imports}
export default createAgent({ name: 'reload', model: { generate: async () => ({ text: ${from} }) } });
`;

let root = '';
let dir = '';
let child: ChildProcessWithoutNullStreams;
let output = '';
/** The origin that answers now: the last one `dev`'s child printed (PORT=0: each start has a port of its own). */
let origin = '';
const agentFile = () => join(dir, 'agent.ts');
/** The restarts dev has reported: one line each, `<files> changed; reloaded in N ms` or `…; the agent did not load`. */
const restarts = () => output.match(/ changed; (?:reloaded in \d+ ms|the agent did not load)/g)?.length ?? 0;

before(() => {
  root = mkdtempSync(join(tmpdir(), 'agentward-dev-reload-'));
  dir = join(root, 'agent');
  mkdirSync(dir);
  writeFileSync(join(dir, 'agentward.json'), JSON.stringify({ apiToken: TOKEN }));
  writeFileSync(agentFile(), agentSource('v1'));
  const env: Record<string, string | undefined> = { ...process.env, PORT: '0', HOST: '127.0.0.1', AGENT_LOG: 'off' };
  delete env.AGENT_API_TOKEN;
  delete env.AGENT_DATA_DIR;
  child = spawn(process.execPath, [cliFile, 'dev', dir], { env });
  const read = (chunk: Buffer) => {
    output += chunk.toString();
    const last = [...output.matchAll(/(http:\/\/127\.0\.0\.1:\d+)(?:\/agent| answers 503)/g)].at(-1);
    if (last) origin = last[1]!;
  };
  child.stdout.on('data', read);
  child.stderr.on('data', read);
});

after(async () => {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  rmSync(root, { recursive: true, force: true });
});

/** One message to the agent that answers now: its status and text (0 when nothing listens). */
async function ask(): Promise<{ status: number; text: string }> {
  if (origin === '') return { status: 0, text: '' };
  try {
    const answer = await send(`${origin}/agent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{"message":"which?"}',
    });
    return {
      status: answer.status,
      text: answer.status === 200 ? (JSON.parse(answer.text) as { text: string }).text : answer.text,
    };
  } catch {
    return { status: 0, text: '' };
  }
}

/** Waits until the server answers with `version`, after at least one more restart than `before`. */
async function servesVersion(version: string, restartsBefore: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { status, text } = await ask();
    if (status === 200 && text === version && restarts() > restartsBefore) return;
    assert.ok(Date.now() < deadline, `never served ${version} (last answer ${status} ${text}); dev said:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the server answers 503 after a restart: a load that failed. */
async function servesLoadFailure(restartsBefore: number): Promise<{ status: number; text: string }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answer = await ask();
    if (answer.status === 503 && restarts() > restartsBefore) return answer;
    assert.ok(Date.now() < deadline, `never answered 503; dev said:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('agentward dev restarts on every way a file is saved', () => {
  test('it serves the directory', async () => {
    await servesVersion('v1', -1);
    assert.equal(restarts(), 0);
  });

  test('a write in place (the same inode)', async () => {
    const inode = statSync(agentFile()).ino;
    const count = restarts();
    writeFileSync(agentFile(), agentSource('v2'));
    assert.equal(statSync(agentFile()).ino, inode);
    await servesVersion('v2', count);
    assert.match(output, /agent\.ts changed; reloaded in \d+ ms/);
  });

  test("an editor's atomic save: a temporary file renamed over the old one", async () => {
    const inode = statSync(agentFile()).ino;
    const count = restarts();
    const temporary = join(dir, '.agent.ts.tmp-4913');
    writeFileSync(temporary, agentSource('v3'));
    renameSync(temporary, agentFile());
    assert.notEqual(statSync(agentFile()).ino, inode);
    await servesVersion('v3', count);
  });

  test('a write in place after that rename (the watch follows the name, not the replaced inode)', async () => {
    const count = restarts();
    writeFileSync(agentFile(), agentSource('v4'));
    await servesVersion('v4', count);
    const again = restarts();
    appendFileSync(agentFile(), '// an appended line\n');
    writeFileSync(agentFile(), agentSource('v4b'));
    await servesVersion('v4b', again);
  });

  test('sed -i (a new file renamed over), then sed -i again', async () => {
    for (const [from, to] of [
      ['v4b', 'v5'],
      ['v5', 'v5b'],
    ] as const) {
      const count = restarts();
      const sed = spawnSync('sed', ['-i', `s/${from}/${to}/`, agentFile()], { encoding: 'utf8' });
      assert.equal(sed.status, 0, sed.stderr);
      await servesVersion(to, count);
    }
  });

  test('delete and re-create: 503 while agent.ts is gone, then the new file is served', async () => {
    const count = restarts();
    unlinkSync(agentFile());
    const failed = await servesLoadFailure(count);
    assert.match(failed.text, /"error":"Service Unavailable: the agent did not load/);
    assert.match(output, /agent\.ts: not found/);
    const gone = restarts();
    writeFileSync(agentFile(), agentSource('v6'));
    await servesVersion('v6', gone);
  });

  test('after a load that failed (a syntax error), requests get 503 at once, and saving the fix restarts it', async () => {
    const count = restarts();
    writeFileSync(agentFile(), `${agentSource('v7')}export const broken = (;\n`);
    const failed = await servesLoadFailure(count);
    assert.equal(JSON.parse(failed.text).error.includes('did not load'), true);
    assert.match(output, /agent\.ts:\d+:\d+: cannot be loaded: SyntaxError/);
    // The fix saved the way editors do, by a rename over the broken file.
    const broken = restarts();
    writeFileSync(join(dir, 'agent.ts.new'), agentSource('v7'));
    renameSync(join(dir, 'agent.ts.new'), agentFile());
    await servesVersion('v7', broken);
    // And once more, fixed in place.
    const again = restarts();
    writeFileSync(agentFile(), `${agentSource('v8')}export const broken = (;\n`);
    await servesLoadFailure(again);
    const brokenAgain = restarts();
    writeFileSync(agentFile(), agentSource('v8'));
    await servesVersion('v8', brokenAgain);
  });

  test('a folder made after the start is watched too: a module in it, written in place and replaced by a rename', async () => {
    mkdirSync(join(dir, 'lib'));
    writeFileSync(join(dir, 'lib', 'version.ts'), "export const version = 'v9';\n");
    const count = restarts();
    writeFileSync(agentFile(), agentSource('', 'version', "import { version } from './lib/version.ts';"));
    await servesVersion('v9', count);
    const inPlace = restarts();
    writeFileSync(join(dir, 'lib', 'version.ts'), "export const version = 'v10';\n");
    await servesVersion('v10', inPlace);
    const renamed = restarts();
    writeFileSync(join(dir, 'lib', '.version.ts.swp'), "export const version = 'v11';\n");
    renameSync(join(dir, 'lib', '.version.ts.swp'), join(dir, 'lib', 'version.ts'));
    await servesVersion('v11', renamed);
  });

  test('writes under dot-folders and node_modules do not restart it', async () => {
    const count = restarts();
    for (const folder of ['.data', '.git', 'node_modules', join('lib', 'node_modules')]) {
      mkdirSync(join(dir, folder), { recursive: true });
      writeFileSync(join(dir, folder, 'written.txt'), 'not code');
    }
    writeFileSync(join(dir, '.env.local'), 'A=1\n');
    await new Promise((resolve) => setTimeout(resolve, 800));
    assert.equal(restarts(), count, output);
    assert.equal((await ask()).text, 'v11');
  });

  test('a file outside the directory that the agent imports: named once, and an atomic save of it restarts the server with its new code (design §31)', async () => {
    mkdirSync(join(root, 'common'));
    const outside = join(root, 'common', 'instructions.ts');
    writeFileSync(outside, "export const version = 'v12';\n");
    const count = restarts();
    writeFileSync(agentFile(), agentSource('', 'version', "import { version } from '../common/instructions.ts';"));
    await servesVersion('v12', count);
    assert.equal(
      output.match(/also watching \.\.\/common\/instructions\.ts: imported from outside the directory/g)?.length,
      1,
      output,
    );
    for (const version of ['v13', 'v14']) {
      // The way editors save: a temporary file beside it, renamed over it.
      const saved = restarts();
      writeFileSync(`${outside}.tmp`, `export const version = '${version}';\n`);
      renameSync(`${outside}.tmp`, outside);
      await servesVersion(version, saved);
    }
    assert.match(output, /\.\.\/common\/instructions\.ts changed; reloaded in \d+ ms/);
    assert.equal(output.match(/also watching/g)?.length, 1, 'named once, not at every restart');
  });
});
