// The node-server target, run for real: `node <out>/server.js` as a child process answering HTTP on loopback.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';
import { createAgent } from '../../src/agent/agent.ts';
import { echoModel } from '../../src/agent/models/echo.ts';
import { jwt } from '../../src/auth/jwt.ts';
import { serve } from '../../src/node/server.ts';
import { build } from '../../src/targets/build.ts';
import {
  BAKED_TOKEN,
  ENV_TOKEN,
  LIST_TOKEN,
  basicAuth,
  bearer,
  fixture,
  root,
  runBuiltServerToExit,
  sendMessage,
  startBuiltServer,
  tempFolder,
  writeDir,
} from '../helpers/build.ts';

describe('node-server target: a directory with auth.ts', () => {
  test('building with target node-server bundles auth.ts and the built server uses its list', async (t) => {
    const out = join(tempFolder(t), 'out');
    await build(fixture('with-auth'), { target: 'node-server', out });
    const server = await startBuiltServer(out);
    t.after(() => server.stop());

    assert.match(server.agentUrl, /^http:\/\/127\.0\.0\.1:\d+\/support$/, 'basePath from agentward.json');
    const refused = await sendMessage(server.agentUrl);
    assert.equal(refused.status, 401);
    assert.deepEqual(refused.headers.get('www-authenticate'), 'Basic realm="agent", charset="UTF-8", Bearer');
    assert.equal(
      (await sendMessage(server.agentUrl, basicAuth('ada', 'correct horse battery staple'))).text,
      'basic:ada',
    );
    assert.equal((await sendMessage(server.agentUrl, basicAuth('ada', 'wrong'))).status, 401);
    assert.equal((await sendMessage(server.agentUrl, bearer(LIST_TOKEN))).text, 'api-token:ci-bot');
  });

  test('with an auth.ts, a token baked in at scaffold time is not used; AGENT_API_TOKEN still is', async (t) => {
    const out = join(tempFolder(t), 'out');
    await build(fixture('with-auth'), { target: 'node-server', out });
    assert.equal(
      readFileSync(join(out, 'app', 'agentward.json'), 'utf8').includes(BAKED_TOKEN),
      false,
      'the unused baked token is not shipped',
    );
    const server = await startBuiltServer(out, { AGENT_API_TOKEN: ENV_TOKEN });
    t.after(() => server.stop());

    assert.equal((await sendMessage(server.agentUrl, bearer(BAKED_TOKEN))).status, 401);
    const viaEnv = await sendMessage(server.agentUrl, bearer(ENV_TOKEN));
    assert.equal(viaEnv.status, 200);
    assert.equal(viaEnv.text, 'api-token:api-token');
    assert.equal(
      (await sendMessage(server.agentUrl, bearer(LIST_TOKEN))).text,
      'api-token:ci-bot',
      'the list still applies',
    );
  });

  test('an auth.js whose default export is one entry is bundled and used', async (t) => {
    const out = join(tempFolder(t), 'out');
    await build(fixture('auth-js'), { target: 'node-server', out });
    const server = await startBuiltServer(out);
    t.after(() => server.stop());
    assert.equal((await sendMessage(server.agentUrl)).status, 401);
    const accepted = await sendMessage(server.agentUrl, bearer('fixture-js-token-0123456789'));
    assert.equal(accepted.status, 200);
    assert.equal(accepted.text, 'who am I?', 'echoModel answers');
  });

  test('configuration errors in auth.ts (AGENT_AUTH_CONFIG_INVALID) stop the built server at start-up with the message, before it listens', async (t) => {
    const dir = writeDir(
      tempFolder(t),
      {
        'auth.ts':
          "import { jwt } from 'agentward/auth';\nexport default [jwt({ secret: 'too-short', audience: 'agent' })];\n",
      },
      fixture('plain'),
    );
    const out = join(tempFolder(t), 'out');
    await build(dir, { target: 'node-server', out });
    const { code, stdout, stderr } = await runBuiltServerToExit(out);
    assert.notEqual(code, 0);
    assert.match(stderr, /jwt\(\): secret must be at least 32 bytes \(got 9\)/);
    assert.match(stderr, /AGENT_AUTH_CONFIG_INVALID/);
    assert.doesNotMatch(stdout, /listening/);
  });
});

describe('node-server target: a directory without auth.ts', () => {
  test('the token baked into agentward.json is the auth, and AGENT_API_TOKEN is accepted besides it', async (t) => {
    const out = join(tempFolder(t), 'out');
    await build(fixture('plain'), { target: 'node-server', out });
    const server = await startBuiltServer(out, { AGENT_API_TOKEN: ENV_TOKEN });
    t.after(() => server.stop());

    assert.equal((await sendMessage(server.agentUrl)).status, 401);
    assert.equal((await sendMessage(server.agentUrl, bearer('not-the-token'))).status, 401);
    const baked = await sendMessage(server.agentUrl, bearer(BAKED_TOKEN));
    assert.equal(baked.status, 200);
    assert.equal(baked.text, 'api-token:api-token');
    assert.equal((await sendMessage(server.agentUrl, bearer(ENV_TOKEN))).status, 200);
    const health = await fetch(`${server.agentUrl}/health`);
    assert.equal(health.status, 200, 'GET <basePath>/health is never behind auth');
  });

  test('with no auth at all (no auth file, no baked token), the agent routes refuse everyone until AGENT_API_TOKEN is set', async (t) => {
    const dir = writeDir(tempFolder(t), {
      'agent.ts':
        "import { createAgent, echoModel } from 'agentward';\nexport default createAgent({ name: 'bare', model: echoModel() });\n",
    });
    const out = join(tempFolder(t), 'out');
    await build(dir, { target: 'node-server', out });
    const closed = await startBuiltServer(out);
    t.after(() => closed.stop());
    assert.equal((await fetch(`${closed.agentUrl}/health`)).status, 200);
    const refused = await sendMessage(closed.agentUrl);
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
    const withToken = await startBuiltServer(out, { AGENT_API_TOKEN: ENV_TOKEN });
    t.after(() => withToken.stop());
    assert.equal((await sendMessage(withToken.agentUrl, bearer(ENV_TOKEN))).status, 200);
  });

  test('the output runs with no install step: transpiled directory, agentward runtime, server.js, package.json', async (t) => {
    const out = join(tempFolder(t), 'out');
    await build(fixture('plain'), { target: 'node-server', out });
    for (const file of [
      'server.js',
      'manifest.json',
      'package.json',
      'app/agent.js',
      'app/lib/caller.js',
      'agentward/index.js',
      'agentward/auth/index.js',
      'agentward/node.js',
    ]) {
      assert.ok(existsSync(join(out, file)), file);
    }
    assert.equal(existsSync(join(out, 'node_modules')), false);
    assert.equal(existsSync(join(out, 'app', 'agent.ts')), false, 'TypeScript is transpiled at build time');
    // What `npm run build` makes of the same sources (tsc with tsconfig.build.json), file for file.
    const compiled = tempFolder(t);
    execFileSync(join(root, 'node_modules', '.bin', 'tsc'), [
      '-p',
      join(root, 'tsconfig.build.json'),
      '--outDir',
      compiled,
    ]);
    for (const file of [
      'index.js',
      'auth/index.js',
      'auth/jwt.js',
      'http/handler.js',
      'node/server.js',
      'cli/server-main.js',
    ]) {
      assert.equal(
        readFileSync(join(out, 'agentward', file), 'utf8'),
        readFileSync(join(compiled, file), 'utf8'),
        `agentward/${file} is the compiled package's file`,
      );
      assert.ok(existsSync(join(out, 'agentward', `${file}.map`)), `${file}.map`);
    }
    assert.equal(existsSync(join(out, 'agentward', 'index.d.ts')), false, 'no declarations in a server');
    assert.equal(existsSync(join(out, 'agentward', 'cli', 'main.js')), false, 'no command in a server');
    const agentJs = readFileSync(join(out, 'app', 'agent.js'), 'utf8');
    assert.match(agentJs, /from '\.\.\/agentward\/index\.js'/);
    assert.match(agentJs, /from '\.\/lib\/caller\.js'/);
    const pkg = JSON.parse(readFileSync(join(out, 'package.json'), 'utf8'));
    assert.equal(pkg.type, 'module');
    assert.deepEqual(pkg.dependencies, {});
    assert.equal(
      statSync(join(out, 'app', 'agentward.json')).mode & 0o777,
      0o600,
      'the baked token is readable by its owner only',
    );
  });

  test('a directory whose package.json says "type": "commonjs" still runs: the output is ES modules', async (t) => {
    const dir = writeDir(
      tempFolder(t),
      { 'package.json': JSON.stringify({ name: 'legacy', type: 'commonjs' }) },
      fixture('plain'),
    );
    const out = join(tempFolder(t), 'out');
    await build(dir, { target: 'node-server', out });
    const server = await startBuiltServer(out);
    t.after(() => server.stop());
    assert.equal((await sendMessage(server.agentUrl, bearer(BAKED_TOKEN))).status, 200);
  });

  test('third-party packages the directory imports are listed in the output package.json', async (t) => {
    const dir = writeDir(
      tempFolder(t),
      {
        'package.json': JSON.stringify({ dependencies: { 'left-pad': '^1.3.0' } }),
        'lib/tools.ts': [
          "import leftPad from 'left-pad';",
          "import { z } from '@scope/schemas/v4';",
          "import { readFile } from 'node:fs/promises';",
          "import path from 'path';",
          "import type { Thing } from 'types-only';",
          "import { apiToken } from 'agentward/auth';",
          "export * from './more.ts';",
          "export const lazy = () => import('./more.ts');",
          'export const used = [leftPad, z, readFile, path, apiToken];',
          'export type T = Thing;',
        ].join('\n'),
        'lib/more.ts': 'export const more: number = 1;\n',
      },
      fixture('plain'),
    );
    const out = join(tempFolder(t), 'out');
    await build(dir, { target: 'node-server', out });
    const pkg = JSON.parse(readFileSync(join(out, 'package.json'), 'utf8'));
    assert.deepEqual(pkg.dependencies, { '@scope/schemas': '*', 'left-pad': '^1.3.0' });
    const tools = readFileSync(join(out, 'app', 'lib', 'tools.js'), 'utf8');
    assert.match(tools, /from '\.\.\/\.\.\/agentward\/auth\/index\.js'/);
    assert.match(tools, /export \* from '\.\/more\.js'/);
    assert.match(tools, /import\('\.\/more\.js'\)/);
  });

  test('only real imports are rewritten: the same text in a comment, a string or a template stays as written', async (t) => {
    const comment = "// before: import { createAgent } from 'agentward'; export * from './more.ts';";
    const text = "export const doc = \"import { apiToken } from 'agentward/auth'; import('./more.ts')\";";
    const template = "export const shown = `export * from './more.ts' and ${'from'} 'agentward'`;";
    const dir = writeDir(
      tempFolder(t),
      {
        'lib/tools.ts': [
          comment,
          "import { apiToken } from 'agentward/auth';",
          "export * from './more.ts';",
          text,
          template,
          'export const used = apiToken;',
        ].join('\n'),
        'lib/more.ts': 'export const more: number = 1;\n',
      },
      fixture('plain'),
    );
    const out = join(tempFolder(t), 'out');
    await build(dir, { target: 'node-server', out });
    const lines = readFileSync(join(out, 'app', 'lib', 'tools.js'), 'utf8').split('\n');
    assert.equal(lines[0], comment);
    assert.equal(lines[1], "import { apiToken } from '../../agentward/auth/index.js';");
    assert.equal(lines[2], "export * from './more.js';");
    assert.equal(lines[3], text);
    assert.equal(lines[4], template);
    const { doc, shown, more } = await import(pathToFileURL(join(out, 'app', 'lib', 'tools.js')).href);
    assert.equal(doc, "import { apiToken } from 'agentward/auth'; import('./more.ts')");
    assert.equal(shown, "export * from './more.ts' and from 'agentward'");
    assert.equal(more, 1);
  });
});

describe("node-server target: auth.ts's route options (design §31)", () => {
  const SECRET = 'step-up-secret-0123456789abcdef-0123456789';
  const ISSUER = 'https://id.step-up.example';
  const token = (scope: string) => {
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const signed = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iss: ISSUER, aud: 'agent', sub: 'ada', scope, iat: now - 5, exp: now + 300 })}`;
    return `${signed}.${createHmac('sha256', SECRET).update(signed).digest('base64url')}`;
  };

  test('a built server answers a per-route step-up (scopes: { approve: [...] }) exactly as serve() with the same options', async (t) => {
    const dir = writeDir(tempFolder(t, 'agentward-step-up-'), {
      'agent.ts':
        "import { createAgent, echoModel } from 'agentward';\nexport default createAgent({ name: 'step-up', model: echoModel() });\n",
      'auth.ts': `import { jwt } from 'agentward/auth';
export default [jwt({ secret: ${JSON.stringify(SECRET)}, audience: 'agent', issuer: ${JSON.stringify(ISSUER)} })];
export const scopes = { send: ['agent:ask'], approve: ['agent:approve'] };
`,
    });
    const out = join(tempFolder(t), 'out');
    await build(dir, { target: 'node-server', out });
    const built = await startBuiltServer(out);
    t.after(() => built.stop());
    const direct = await serve({
      agent: createAgent({ name: 'step-up', model: echoModel() }),
      auth: [jwt({ secret: SECRET, audience: 'agent', issuer: ISSUER })],
      scopes: { send: ['agent:ask'], approve: ['agent:approve'] },
      basePath: '/agent',
      port: 0,
      log: 'off',
    });
    t.after(() => direct.close());

    const answer = async (agentUrl: string, path: string, scope: string) => {
      const reply = await fetch(`${agentUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token(scope)}`, 'content-type': 'application/json' },
        body: path === '' ? '{"message":"hi"}' : '{"approved":true}',
      });
      // Session ids are random: the rest of the body is compared.
      const body = (await reply.text()).replace(/"sessionId":"[^"]+"/, '"sessionId":"…"');
      return { status: reply.status, challenge: reply.headers.get('www-authenticate'), body };
    };
    const cases: [string, string][] = [
      ['', 'agent:ask'],
      ['', 'other'],
      ['/approvals/ap_missing', 'agent:ask'],
      ['/approvals/ap_missing', 'agent:ask agent:approve'],
    ];
    const seen = [];
    for (const [path, scope] of cases) {
      const fromBuild = await answer(built.agentUrl, path, scope);
      assert.deepEqual(fromBuild, await answer(`${direct.url}/agent`, path, scope), `${path} with ${scope}`);
      seen.push(fromBuild.status);
    }
    assert.deepEqual(seen, [200, 403, 403, 404], 'the step-up is enforced, not only matched');
  });
});
