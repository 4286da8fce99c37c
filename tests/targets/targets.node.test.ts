// The docker target's files (no Docker engine runs here), the manifest of every target, and the output folder rules.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { build } from '../../src/targets/build.ts';
import { bundleModules } from '../../src/targets/bundle.ts';
import { spawnSync } from 'node:child_process';
import { fixture, nodeBin, sendMessage, startBuiltServer, tempFolder, writeDir } from '../helpers/build.ts';

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

describe('docker target', () => {
  test('the output holds the node-server files plus a Dockerfile: small Node 22 base, non-root user, health check on <basePath>/health', async (t) => {
    const out = join(tempFolder(t), 'out');
    await build(fixture('with-auth'), { target: 'docker', out });
    for (const file of [
      'server.js',
      'manifest.json',
      'package.json',
      'app/agent.js',
      'app/auth.js',
      'agentward/index.js',
      'Dockerfile',
    ]) {
      assert.ok(existsSync(join(out, file)), file);
    }
    const dockerfile = readFileSync(join(out, 'Dockerfile'), 'utf8');
    const lines = dockerfile.split('\n');
    assert.match(dockerfile, /^FROM node:22-(slim|alpine)$/m);
    assert.match(dockerfile, /^USER node$/m);
    assert.match(dockerfile, /^HEALTHCHECK .*\/support\/health/m);
    assert.match(dockerfile, /^ENV .*HOST=0\.0\.0\.0/m, 'reachable from outside the container');
    assert.equal(lines.filter((line) => line.startsWith('CMD ')).at(-1), 'CMD ["node", "server.js"]');
    assert.ok(
      lines.indexOf('USER node') < lines.indexOf('CMD ["node", "server.js"]'),
      'the server runs as the non-root user',
    );
    assert.doesNotMatch(dockerfile, /npm install/, 'nothing to install: the directory imports only agentward');
    assert.deepEqual(readJson(join(out, 'manifest.json')), {
      name: 'with-auth',
      target: 'docker',
      auth: true,
      authBy: ['auth.ts'],
      main: 'server.js',
      basePath: '/support',
    });
  });

  test('the health check command the Dockerfile runs gets 200 from the built server', async (t) => {
    const out = join(tempFolder(t), 'out');
    await build(fixture('plain'), { target: 'docker', out });
    const server = await startBuiltServer(out);
    t.after(() => server.stop());
    const probe = JSON.parse(
      /^HEALTHCHECK .* CMD (\[.*\])$/m.exec(readFileSync(join(out, 'Dockerfile'), 'utf8'))?.[1] ?? '[]',
    ) as string[];
    assert.deepEqual(probe.slice(0, 2), ['node', '-e']);
    const port = new URL(server.agentUrl).port;
    const result = spawnSync(nodeBin, ['-e', probe[2] as string], {
      env: { ...process.env, PORT: port },
      timeout: 10_000,
    });
    assert.equal(result.status, 0);
  });

  // Issue 28, finding 1: key files and logs reached the image (Docker reads a pattern without its "**/" prefix at the context root only).
  test('key files, logs and env files never reach app/, and the .dockerignore excludes them at every depth, as Docker matches it', async (t) => {
    const secrets = [
      'jwt-signing.pem',
      'tls.key',
      'debug.log',
      'keys/signing.pem',
      'keys/deep/tls.key',
      'lib/store.p12',
      'id_rsa',
      'config/id_ed25519',
      'prod.env',
      'logs/app.log',
      '.env',
      'lib/.env.local',
    ];
    const dir = writeDir(
      tempFolder(t),
      Object.fromEntries(secrets.map((file) => [file, 'SECRET-MATERIAL'])),
      fixture('plain'),
    );
    const out = join(tempFolder(t), 'out');
    const lines: string[] = [];
    const originalLog = console.log;
    console.log = (line: string) => void lines.push(line);
    try {
      await build(dir, { target: 'docker', out });
    } finally {
      console.log = originalLog;
    }
    const copied = (folder: string): string[] =>
      readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? copied(join(folder, entry.name)).map((file) => `${entry.name}/${file}`) : [entry.name],
      );
    const app = copied(join(out, 'app'));
    for (const file of secrets) assert.equal(app.includes(file), false, `app/${file} is not copied`);
    assert.ok(app.includes('agent.js'), 'the agent is');
    assert.equal(
      copied(out).some((file) => readFileSync(join(out, file), 'latin1').includes('SECRET-MATERIAL')),
      false,
      'no secret anywhere in the output',
    );
    assert.ok(
      lines.some((line) => /not copied into app\/.*jwt-signing\.pem.*keys\/signing\.pem/.test(line)),
      'the build says what it left out',
    );

    // Docker's own rule (moby/patternmatcher): "**" matches any number of folders, "*" and "?" stay
    // within one; a pattern that matches a folder excludes everything inside it.
    const patterns = readFileSync(join(out, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'));
    const toRegExp = (pattern: string) =>
      new RegExp(
        `^${pattern
          .split('/')
          .map((part) =>
            part === '**'
              ? '(?:.*)'
              : part
                  .replace(/[.+^${}()|[\]\\]/g, '\\$&')
                  .replace(/\*/g, '[^/]*')
                  .replace(/\?/g, '[^/]'),
          )
          .join('/')
          .replace(/\(\?:\.\*\)\//g, '(?:.*/)?')}$`,
      );
    const ignored = (path: string) =>
      patterns.some((pattern) => {
        const parts = path.split('/');
        return parts.some((_, i) => toRegExp(pattern).test(parts.slice(0, i + 1).join('/')));
      });
    for (const depth of ['', 'app/', 'app/keys/', 'agentward/deep/er/']) {
      for (const name of [
        'signing.pem',
        'tls.key',
        'debug.log',
        'store.p12',
        'id_rsa',
        '.env',
        '.env.production',
        'prod.env',
        '.git/config',
        'node_modules/x/index.js',
        '.data/sessions/x.json',
      ]) {
        assert.ok(ignored(depth + name), `.dockerignore keeps ${depth + name} out of the context`);
      }
    }
    for (const kept of ['server.js', 'app/agent.js', 'agentward/index.js', 'package.json'])
      assert.equal(ignored(kept), false, `${kept} stays in the context`);
  });

  test('a directory importing third-party packages gets an npm install step', async (t) => {
    const dir = writeDir(
      tempFolder(t),
      { 'lib/pad.ts': "import leftPad from 'left-pad';\nexport const pad = leftPad;\n" },
      fixture('plain'),
    );
    const out = join(tempFolder(t), 'out');
    await build(dir, { target: 'docker', out });
    assert.match(readFileSync(join(out, 'Dockerfile'), 'utf8'), /^RUN npm install --omit=dev/m);
    assert.deepEqual(readJson(join(out, 'package.json')).dependencies, { 'left-pad': '*' });
  });
});

describe('manifest.json', () => {
  // auth is true exactly when the built server refuses a call without credentials; authBy says what protects it.
  const open = (t: { after(fn: () => void): void }) =>
    writeDir(tempFolder(t), { 'agentward.json': '{ "name": "open" }' }, fixture('plain'));
  const cases = [
    ['plain (the token init baked in)', (_t: { after(fn: () => void): void }) => fixture('plain'), ['api-token']],
    ['with-auth (auth.ts beside a baked token, which is then unused)', () => fixture('with-auth'), ['auth.ts']],
    ['auth-js', () => fixture('auth-js'), ['auth.js']],
    ['a directory with neither (only AGENT_API_TOKEN: without it every call is refused)', open, ['AGENT_API_TOKEN']],
  ] as const;
  for (const target of ['node-server', 'docker'] as const) {
    for (const [name, dir, authBy] of cases) {
      test(`${target}: the manifest states auth: true, authBy ${JSON.stringify(authBy)} for ${name}, and the built server refuses a call without credentials`, async (t) => {
        const out = join(tempFolder(t), 'out');
        const manifest = await build(dir(t), { target, out });
        assert.deepEqual(readJson(join(out, 'manifest.json')), manifest);
        assert.equal(manifest.auth, true);
        assert.deepEqual(manifest.authBy, authBy);
        assert.equal(manifest.target, target);
        assert.equal(manifest.main, 'server.js');
        assert.equal(existsSync(join(out, 'app', 'auth.js')), authBy[0] === 'auth.ts' || authBy[0] === 'auth.js');
        if (target === 'docker') return; // the same server.js
        const server = await startBuiltServer(out);
        try {
          assert.equal((await sendMessage(server.agentUrl)).status, 401);
        } finally {
          await server.stop();
        }
      });
    }
  }

  test('cloudflare-worker: the manifest states auth: true (the AGENT_API_TOKEN binding; without it every call is refused) and main worker.js, the model, the secrets and the Durable Object it reads', async (t) => {
    const out = join(tempFolder(t), 'out');
    await build(fixture('plain'), { target: 'cloudflare-worker', out, log: () => {} });
    assert.deepEqual(readJson(join(out, 'manifest.json')), {
      name: 'plain',
      target: 'cloudflare-worker',
      auth: true,
      authBy: ['AGENT_API_TOKEN'],
      main: 'worker.js',
      basePath: '/agent',
      model: { provider: 'echo' },
      secrets: ['AGENT_API_TOKEN'],
      durableObjects: { AGENT_SESSIONS: 'AgentSession' },
    });
    assert.deepEqual(readdirSync(out).sort(), ['manifest.json', 'worker.js', 'wrangler.toml']);
  });
});

describe('the worker bundler', () => {
  test('module syntax it does not know fails the build, naming the file', async (t) => {
    const dir = writeDir(tempFolder(t), {
      'entry.ts': "import { value } from './dep.ts';\nexport function read() { return value; }\n",
      'dep.ts': 'const value = 1;\nexport default value;\n',
    });
    await assert.rejects(bundleModules(join(dir, 'entry.ts')), (error: Error) => {
      assert.ok(error.message.startsWith(`${join(dir, 'dep.ts')}: cannot bundle`), error.message);
      return true;
    });
  });
});

describe('build output folder', () => {
  test('an earlier build output is replaced', async (t) => {
    const out = join(tempFolder(t), 'out');
    await build(fixture('with-auth'), { target: 'node-server', out });
    await build(fixture('plain'), { target: 'cloudflare-worker', out });
    assert.equal(existsSync(join(out, 'server.js')), false);
    assert.equal(readJson(join(out, 'manifest.json')).target, 'cloudflare-worker');
  });

  test('a folder that is not a build output is refused, never emptied', async (t) => {
    const out = join(tempFolder(t), 'out');
    mkdirSync(out);
    writeFileSync(join(out, 'manifest.json'), '{"name":"a browser extension"}');
    await assert.rejects(build(fixture('plain'), { target: 'node-server', out }), /not an agentward build output/);
    assert.deepEqual(readdirSync(out), ['manifest.json']);
  });

  test('an output folder inside the agent directory is not copied into itself', async (t) => {
    const dir = writeDir(tempFolder(t), {}, fixture('plain'));
    const out = join(dir, 'dist');
    await build(dir, { target: 'node-server', out });
    await build(dir, { target: 'node-server', out });
    assert.equal(existsSync(join(out, 'app', 'dist')), false);
    await assert.rejects(build(dir, { target: 'node-server', out: dir }), /must not be the agent directory/);
  });

  test('a relative import that leaves the agent directory fails the build: only the directory is copied', async (t) => {
    const dir = writeDir(
      tempFolder(t),
      { 'lib/up.ts': "export { apiToken } from '../../elsewhere/auth.ts';\n" },
      fixture('plain'),
    );
    await assert.rejects(
      build(dir, { target: 'node-server', out: join(tempFolder(t), 'out') }),
      /imports \.\.\/\.\.\/elsewhere\/auth\.ts, outside the agent directory/,
    );
  });

  test('a build that fails halfway leaves no output folder and nothing beside it; an earlier build stays as it was (design §31)', async (t) => {
    // The import that leaves the directory is found while app/ is being written: halfway.
    const dir = writeDir(
      tempFolder(t),
      { 'lib/up.ts': "export { apiToken } from '../../elsewhere/auth.ts';\n" },
      fixture('plain'),
    );
    const parent = tempFolder(t);
    const out = join(parent, 'out');
    for (const target of ['node-server', 'docker'] as const) {
      await assert.rejects(build(dir, { target, out, log: () => {} }));
      assert.equal(existsSync(out), false, `${target}: no output folder`);
      assert.deepEqual(readdirSync(parent), [], `${target}: nothing beside it`);
    }
    await build(fixture('plain'), { target: 'node-server', out });
    const before = readdirSync(out, { recursive: true }).sort();
    const manifest = readFileSync(join(out, 'manifest.json'), 'utf8');
    await assert.rejects(build(dir, { target: 'docker', out }));
    assert.deepEqual(readdirSync(out, { recursive: true }).sort(), before);
    assert.equal(readFileSync(join(out, 'manifest.json'), 'utf8'), manifest);
    assert.deepEqual(readdirSync(parent), ['out']);
  });

  test('an unknown target is refused', async (t) => {
    const out = join(tempFolder(t), 'out');
    await assert.rejects(
      build(fixture('plain'), { target: 'lambda' as never, out }),
      /target must be one of node-server, docker, cloudflare-worker/,
    );
  });
});
