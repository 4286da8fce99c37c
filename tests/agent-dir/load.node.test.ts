// Agent directories in a newcomer's project: ES modules whatever the surrounding package.json
// says, load errors that name file, line and column, and dev keeping sessions across restarts.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { lineMatching, send } from '../helpers/http-client.ts';
import {
  assertPlaygroundInlined,
  bearer,
  nodeBin,
  root,
  sendMessage,
  startNodeServer,
  tempFolder,
} from '../helpers/build.ts';

const cliFile = join(root, 'src', 'cli', 'main.ts');

function agentward(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.AGENT_API_TOKEN;
  const result = spawnSync(nodeBin, [cliFile, ...args], { cwd, encoding: 'utf8', env, timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A fresh `npm init -y` project: npm writes `"type": "commonjs"`. */
function npmProject(t: { after(fn: () => void): void }): string {
  const project = tempFolder(t, 'agentward-npm-project-');
  const npm = spawnSync('npm', ['init', '-y'], { cwd: project, encoding: 'utf8', timeout: 60_000 });
  const file = join(project, 'package.json');
  if (npm.status !== 0 || !existsSync(file))
    writeFileSync(file, JSON.stringify({ name: 'project', version: '1.0.0', type: 'commonjs' }));
  const json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  // Older npm writes no "type" (CommonJS by default too, but syntax detection could hide the bug): say it explicitly.
  if (json.type !== 'commonjs') writeFileSync(file, JSON.stringify({ ...json, type: 'commonjs' }, null, 2));
  return project;
}

describe('agent directories load as ES modules in any npm project', () => {
  test('npx agentward init agent1 && agentward start agent1 in a fresh npm init -y project (type commonjs)', async (t) => {
    const project = npmProject(t);
    assert.equal(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).type, 'commonjs');
    const init = agentward(['init', 'agent1'], project);
    assert.equal(init.status, 0, init.stderr);
    assert.deepEqual(JSON.parse(readFileSync(join(project, 'agent1', 'package.json'), 'utf8')), {
      private: true,
      type: 'module',
    });
    const { apiToken } = JSON.parse(readFileSync(join(project, 'agent1', 'agentward.json'), 'utf8')) as {
      apiToken: string;
    };

    const server = await startNodeServer([cliFile, 'start', join(project, 'agent1')], { AGENT_LOG: 'off' });
    t.after(() => server.stop());
    assert.equal((await sendMessage(server.agentUrl)).status, 401);
    const reply = await sendMessage(server.agentUrl, bearer(apiToken));
    assert.equal(reply.status, 200);
    assert.equal(reply.text, 'who am I?');
    assert.ok(readdirSync(join(project, 'agent1', '.data', 'sessions')).length >= 1, 'sessions in the directory .data');
  });

  // Node 22.15+ loads the directory through module.registerHooks; Node 22.13 and 22.14 through
  // module.register's off-thread hooks, run here by deleting registerHooks before the CLI starts.
  const withoutRegisterHooks = [
    '--import',
    'data:text/javascript,import m from "node:module"; delete m.registerHooks;',
  ];
  for (const [how, nodeArgs] of [
    ['', []],
    [' (module.register, as on Node 22.13 and 22.14)', withoutRegisterHooks],
  ] as const) {
    test(`a hand-written directory without its own package.json (agent.ts with types, auth.js, a sibling module) loads too${how}`, async (t) => {
      const project = npmProject(t);
      const dir = join(project, 'handmade');
      mkdirSync(dir);
      writeFileSync(
        join(dir, 'agent.ts'),
        [
          "import { createAgent, echoModel } from 'agentward';",
          "import { prefix } from './words.ts';",
          'const name: string = prefix + "made";',
          'interface Unused { a: number }',
          'export default createAgent({ name, model: echoModel() });',
          '',
        ].join('\n'),
      );
      writeFileSync(join(dir, 'words.ts'), "export const prefix: string = 'hand';\n");
      writeFileSync(
        join(dir, 'auth.js'),
        "import { apiToken } from 'agentward/auth';\nexport default [apiToken('handmade-token-0123456789')];\n",
      );
      const server = await startNodeServer([...nodeArgs, cliFile, 'start', dir], {
        AGENT_LOG: 'off',
        AGENT_DATA_DIR: join(tempFolder(t), 'data'),
      });
      t.after(() => server.stop());
      assert.equal((await sendMessage(server.agentUrl)).status, 401);
      const reply = await sendMessage(server.agentUrl, bearer('handmade-token-0123456789'));
      assert.equal(reply.status, 200);
      assert.equal(reply.text, 'who am I?', 'the echo agent of agent.ts answered');
    });
  }
});

describe('a load error names file, line and column', () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    [
      'a TypeScript syntax error in agent.ts',
      { 'agent.ts': "import { createAgent } from 'agentward';\nconst a: number = 1;\nlet b = ;\nexport default a;\n" },
      /agent\.ts:3:9: cannot be loaded: SyntaxError/,
    ],
    [
      'a JavaScript syntax error in auth.js',
      { 'auth.js': 'export default [\n  1 2\n];\n' },
      /auth\.js:2:5: cannot be loaded: SyntaxError/,
    ],
    [
      'an error thrown while agent.ts runs',
      { 'agent.ts': "const ready = false;\nif (!ready) throw new Error('not configured');\nexport default 1;\n" },
      /agent\.ts:2:19: cannot be loaded: not configured/,
    ],
    [
      'a syntax error in a module agent.ts imports',
      {
        'agent.ts': "import { x } from './tools.ts';\nexport default x;\n",
        'tools.ts': 'export const x = 1;\nlet q: = 2;\n',
      },
      /tools\.ts:2:8: cannot be loaded \(imported by .*agent\.ts\): SyntaxError/,
    ],
    [
      'an unclosed call at the end of agent.ts',
      {
        'agent.ts':
          "import { createAgent, echoModel } from 'agentward';\nexport default createAgent({ name: 'x', model: echoModel() }\n",
      },
      /agent\.ts:2:61: cannot be loaded: SyntaxError/,
    ],
    [
      'an unclosed list at the end of auth.ts',
      { 'auth.ts': 'export default [\n' },
      /auth\.ts:1:17: cannot be loaded: SyntaxError/,
    ],
    [
      'an unclosed list at the end of auth.js',
      { 'auth.js': 'export default [\n' },
      /auth\.js:1:17: cannot be loaded: SyntaxError/,
    ],
  ];
  for (const [name, files, expected] of cases) {
    test(name, (t) => {
      const dir = tempFolder(t);
      writeFileSync(
        join(dir, 'agent.ts'),
        "import { createAgent, echoModel } from 'agentward';\nexport default createAgent({ name: 'x', model: echoModel() });\n",
      );
      for (const [file, content] of Object.entries(files)) writeFileSync(join(dir, file), content);
      const result = agentward(['start', dir], dir);
      assert.equal(result.status, 1);
      assert.match(result.stderr, expected);
      assert.ok(result.stderr.includes(dir), 'the full path of the file');
      assert.doesNotMatch(result.stderr, /node:internal|\/modules\/typescript/, 'never a place inside Node');
    });
  }
});

describe('agentward dev', () => {
  test('keeps sessions across restarts in the directory .data, serves the playground, and a write to .data does not restart it', async (t) => {
    const project = npmProject(t);
    assert.equal(agentward(['init', 'bot'], project).status, 0);
    const dir = join(project, 'bot');
    const { apiToken } = JSON.parse(readFileSync(join(dir, 'agentward.json'), 'utf8')) as { apiToken: string };
    const env: Record<string, string | undefined> = { ...process.env, PORT: '0', HOST: '127.0.0.1', AGENT_LOG: 'off' };
    delete env.AGENT_API_TOKEN;
    delete env.AGENT_DATA_DIR;
    const child = spawn(nodeBin, [cliFile, 'dev', dir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    t.after(() => void child.kill('SIGKILL'));
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    const listening = async () =>
      /listening on (\S+)/.exec(await lineMatching(child.stdout, /listening on/))?.[1] as string;
    const first = await listening();
    const headers = { 'content-type': 'application/json', authorization: bearer(apiToken) };
    const sent = await send(first, {
      method: 'POST',
      headers,
      body: JSON.stringify({ message: 'remember me', sessionId: 'dev-session-1' }),
    });
    assert.equal(sent.status, 200);
    assert.ok(existsSync(join(dir, '.data')), 'the file store is in the directory');
    const page = await send(`${first}/playground`);
    assert.equal(page.status, 200);
    assert.match(page.headers['content-type'] ?? '', /^text\/html/);

    // A write under .data (the store's own) is no reason to restart.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.doesNotMatch(output, /changed;/);

    // One line for the restart (design §31); the restarted server listens where the first did.
    const reloaded = lineMatching(child.stdout, /changed; reloaded in \d+ ms/);
    const bound = setTimeout(() => child.kill('SIGKILL'), 30_000);
    writeFileSync(join(dir, 'agent.json'), readFileSync(join(dir, 'agent.json'), 'utf8').replace('helpful', 'kind'));
    assert.match(await reloaded, /agent\.json changed; reloaded in \d+ ms/, output);
    clearTimeout(bound);
    const transcript = await send(`${first}/chat/dev-session-1`, { headers });
    assert.equal(transcript.status, 200);
    assert.deepEqual(
      (JSON.parse(transcript.text) as { messages: { content: string }[] }).messages.map((m) => m.content),
      ['remember me', 'remember me'],
    );

    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  });

  test('start does not serve the playground unless asked with --playground', async (t) => {
    const project = npmProject(t);
    assert.equal(agentward(['init', 'bot'], project).status, 0);
    const plain = await startNodeServer([cliFile, 'start', join(project, 'bot')], { AGENT_LOG: 'off' });
    t.after(() => plain.stop());
    assert.equal((await send(`${plain.agentUrl}/playground`)).status, 401, 'behind auth like any unknown path');
    const asked = await startNodeServer([cliFile, 'start', join(project, 'bot'), '--playground'], { AGENT_LOG: 'off' });
    t.after(() => asked.stop());
    assert.equal((await send(`${asked.agentUrl}/playground`)).status, 200);
  });

  test('a built server serves the playground only with AGENT_PLAYGROUND=on (or start <out> --playground)', async (t) => {
    const project = npmProject(t);
    assert.equal(agentward(['init', 'bot'], project).status, 0);
    const out = join(project, 'out');
    assert.equal(
      agentward(['build', join(project, 'bot'), '--target', 'node-server', '--out', out], project).status,
      0,
    );
    const env = { AGENT_LOG: 'off', AGENT_DATA_DIR: join(project, 'data') };
    for (const [args, extra, status] of [
      [[join(out, 'server.js')], {}, 401],
      [[join(out, 'server.js')], { AGENT_PLAYGROUND: 'on' }, 200],
      [[cliFile, 'start', out], {}, 401],
      [[cliFile, 'start', out, '--playground'], {}, 200],
    ] as const) {
      const server = await startNodeServer([...args], { ...env, ...extra });
      t.after(() => server.stop());
      const page = await send(`${server.agentUrl}/playground`);
      assert.equal(page.status, status, args.join(' '));
      // The built server ships the page's script and styles beside its compiled module.
      if (status === 200) assertPlaygroundInlined(page.text, String(page.headers['content-security-policy']));
    }
  });
});
