// `agentward init`: scaffolds an agent directory with a fresh baked API token.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { build } from '../../src/targets/build.ts';
import { FIRST_TOOL_CALL, initAgentDir } from '../../src/cli/scaffold.ts';
import { resolveAgentDir } from '../../src/agent-dir/resolve.ts';
import { bearer, root, sendMessage, startBuiltServer, tempFolder } from '../helpers/build.ts';

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

describe('agentward init', () => {
  test('scaffolds agent.ts, agent.json, agentward.json with a fresh token of 32 random bytes (base64url), package.json (type module) and .gitignore', async (t) => {
    const dir = join(tempFolder(t), 'my-agent');
    const first = await initAgentDir(dir);
    const second = await initAgentDir(join(tempFolder(t), 'other'));
    assert.deepEqual(first.files, ['agent.ts', 'agent.json', 'agentward.json', 'package.json', '.gitignore']);
    assert.equal(readJson(join(dir, 'package.json')).type, 'module');
    assert.match(readFileSync(join(dir, '.gitignore'), 'utf8'), /^\.data\/$/m);
    assert.match(first.apiToken, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(first.apiToken, 'base64url').length, 32);
    assert.notEqual(first.apiToken, second.apiToken);
    assert.deepEqual(readJson(join(dir, 'agentward.json')), {
      name: 'my-agent',
      basePath: '/agent',
      apiToken: first.apiToken,
    });
    assert.equal(statSync(join(dir, 'agentward.json')).mode & 0o777, 0o600);
    assert.equal(readJson(join(dir, 'agent.json')).name, 'my-agent');
  });

  test("the scaffold's file store sits beside its agent.ts, wherever the process that imports it starts (design §31)", async (t) => {
    const dir = join(tempFolder(t), 'my-agent');
    await initAgentDir(dir);
    const elsewhere = tempFolder(t);
    // A server of the user's own, started in another folder, importing the agent (no AGENT_DATA_DIR).
    const script = `import { resolveAgentDir } from ${JSON.stringify(join(root, 'src', 'agent-dir', 'resolve.ts'))};
const { agent } = await resolveAgentDir(${JSON.stringify(dir)});
const result = await agent.send('remember me', { sessionId: 'kept' });
console.log(result.sessionId);
`;
    writeFileSync(join(elsewhere, 'server.mjs'), script);
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.AGENT_DATA_DIR;
    const ran = spawnSync(process.execPath, ['server.mjs'], { cwd: elsewhere, env, encoding: 'utf8' });
    assert.equal(ran.status, 0, ran.stderr);
    assert.equal(ran.stdout.trim(), 'kept');
    assert.ok(existsSync(join(dir, '.data', 'sessions')), 'the sessions are beside agent.ts');
    assert.equal(existsSync(join(elsewhere, '.data')), false, 'not in the folder the process started in');
  });

  // Issue 28, finding 3: the token was committed by `git add -A`.
  test('git add -A commits no token: the .gitignore init writes covers agentward.json (and .data, env files, .dev.vars)', async (t) => {
    const dir = join(tempFolder(t), 'my-agent');
    const { apiToken } = await initAgentDir(dir);
    writeFileSync(join(dir, '.dev.vars'), 'AGENT_API_TOKEN=x\n');
    mkdirSync(join(dir, '.data'));
    writeFileSync(join(dir, '.data', 'session.json'), '{}');
    const git = (...args: string[]) => {
      const result = spawnSync('git', args, {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
      });
      assert.equal(result.status, 0, result.stderr);
      return result.stdout;
    };
    git('init', '-q');
    git('add', '-A');
    const staged = git('diff', '--cached', '--name-only').trim().split('\n').sort();
    assert.deepEqual(staged, ['.gitignore', 'agent.json', 'agent.ts', 'package.json']);
    const search = spawnSync('git', ['grep', '--cached', '-I', '-l', apiToken], { cwd: dir, encoding: 'utf8' });
    assert.equal(search.status, 1, `the token is in no staged file: ${search.stdout}`); // git grep: 1 is "no match"
  });

  test('an existing .gitignore is kept and gets the lines it lacks', async (t) => {
    const dir = tempFolder(t);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, '.gitignore'), 'dist/\n.data/');
    const { files } = await initAgentDir(dir);
    assert.ok(files.includes('.gitignore'));
    const lines = readFileSync(join(dir, '.gitignore'), 'utf8').split('\n');
    assert.deepEqual(lines.slice(0, 2), ['dist/', '.data/']);
    for (const line of ['agentward.json', '.env*', '.dev.vars']) assert.ok(lines.includes(line), line);
    assert.equal(lines.filter((line) => line === '.data/').length, 1, 'nothing twice');
  });

  test('refuses to overwrite an existing agent', async (t) => {
    const dir = tempFolder(t);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'agent.ts'), '// mine\n');
    await assert.rejects(initAgentDir(dir), /already holds agent\.ts; refusing to overwrite an existing agent/);
    assert.equal(readFileSync(join(dir, 'agent.ts'), 'utf8'), '// mine\n');
    const again = join(tempFolder(t), 'again');
    await initAgentDir(again);
    const settings = readFileSync(join(again, 'agentward.json'), 'utf8');
    await assert.rejects(initAgentDir(again), /refusing to overwrite/);
    assert.equal(readFileSync(join(again, 'agentward.json'), 'utf8'), settings, 'the baked token is kept');
  });

  test("the scaffold's agent has a tool that needs approval: /tool refund {…} waits, approving runs it, denying does not", async (t) => {
    const dir = join(tempFolder(t), 'with-tool');
    await initAgentDir(dir);
    assert.match(readFileSync(join(dir, 'agent.ts'), 'utf8'), /needsApproval: true/);
    const data = process.env.AGENT_DATA_DIR;
    process.env.AGENT_DATA_DIR = join(tempFolder(t), 'data');
    const { agent } = await resolveAgentDir(dir).finally(() => {
      if (data === undefined) delete process.env.AGENT_DATA_DIR;
      else process.env.AGENT_DATA_DIR = data;
    });
    assert.equal(agent.awaitsApprovals, true);
    for (const approved of [true, false]) {
      const paused = await agent.send(FIRST_TOOL_CALL);
      assert.equal(paused.status, 'awaiting-approval');
      assert.deepEqual(
        paused.approvals.map(({ tool, arguments: args }) => ({ tool, args })),
        [{ tool: 'refund', args: { orderId: 'A-1', amount: 20 } }],
      );
      const decided = await agent.decide(paused.approvals[0]!.id, { approved });
      assert.equal(decided.status, 'completed');
      assert.match(decided.text, approved ? /refund: \{"orderId":"A-1","refunded":20\}/ : /refund: .*denied/i);
    }
  });

  test('the scaffolded directory resolves, and its built server accepts the baked token', async (t) => {
    const dir = join(tempFolder(t), 'fresh');
    const { apiToken } = await initAgentDir(dir);
    const { agent, auth, manifest } = await resolveAgentDir(dir);
    assert.equal(auth, undefined);
    assert.equal(manifest.name, 'fresh');
    assert.equal((await agent.send('hello')).text, 'hello');

    const out = join(tempFolder(t), 'out');
    await build(dir, { target: 'node-server', out });
    const server = await startBuiltServer(out);
    t.after(() => server.stop());
    assert.equal((await sendMessage(server.agentUrl)).status, 401);
    const accepted = await sendMessage(server.agentUrl, bearer(apiToken));
    assert.equal(accepted.status, 200);
    assert.equal(accepted.text, 'who am I?');
  });
});

describe("agentward init's printed commands (design §31)", () => {
  test('runCommand: "npx agentward …" in a project that installs this copy, or under npx; "agentward …" elsewhere; each word quoted for a POSIX shell', async (t) => {
    const { runCommand } = await import('../../src/cli/scaffold.ts');
    const env = { PATH: process.env.PATH } as NodeJS.ProcessEnv;
    const elsewhere = tempFolder(t);
    assert.equal(runCommand(['dev', 'my-agent'], elsewhere, env), 'agentward dev my-agent');
    assert.equal(runCommand(['dev', 'my agent'], elsewhere, env), "agentward dev 'my agent'");
    assert.equal(runCommand(['dev', "it's"], elsewhere, env), `agentward dev 'it'\\''s'`);
    assert.equal(runCommand(['dev', 'x'], elsewhere, { ...env, npm_command: 'exec' }), 'npx agentward dev x');
    // A project whose node_modules/agentward is this copy: node_modules/.bin is not on the shell's PATH.
    const project = tempFolder(t);
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(root, join(project, 'node_modules', 'agentward'));
    mkdirSync(join(project, 'src'));
    assert.equal(runCommand(['dev', 'my-agent'], join(project, 'src'), env), 'npx agentward dev my-agent');
  });
});
