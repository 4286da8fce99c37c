// The directory resolver on good and broken agent directories.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { resolveAgentDir } from '../../src/agent-dir/resolve.ts';
import { AGENTWARD_ENTRIES } from '../../src/agent-dir/resolve.ts';
import {
  BAKED_TOKEN,
  basicAuth,
  bearer,
  fixture,
  root,
  sendMessage,
  startNodeServer,
  tempFolder,
  writeDir,
} from '../helpers/build.ts';

const AGENT =
  "import { createAgent, echoModel } from 'agentward';\nexport default createAgent({ name: 'temp', model: echoModel() });\n";

/**
 * Asserts that `promise` rejects with an error whose message names `file` and matches `pattern`,
 * an `AuthConfigError` with its code like every configuration error (design §38).
 */
async function rejectsNaming(promise: Promise<unknown>, file: string, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: Error & { code?: unknown }) => {
    assert.equal(error.name, 'AuthConfigError', error.message);
    assert.equal(error.code, 'AGENT_AUTH_CONFIG_INVALID');
    assert.ok(error.message.includes(file), `names ${file}: ${error.message}`);
    assert.match(error.message, pattern);
    return true;
  });
}

describe('resolveAgentDir on good directories', () => {
  test('the directory resolver returns the list from auth.ts as auth', async () => {
    const { agent, auth, manifest } = await resolveAgentDir(fixture('with-auth'));
    assert.equal(agent.name, 'with-auth');
    assert.ok(auth);
    assert.equal(auth.length, 2);
    assert.deepEqual(manifest, {
      name: 'with-auth',
      target: 'source',
      auth: true,
      authBy: ['auth.ts'],
      main: 'agent.ts',
      basePath: '/support',
    });
    const basic = await auth[0]?.(
      new Request('http://x/', { headers: { authorization: basicAuth('ada', 'correct horse battery staple') } }),
    );
    assert.equal(basic?.id, 'ada');
    const token = await auth[1]?.(
      new Request('http://x/', { headers: { authorization: bearer('fixture-list-token-0123456789') } }),
    );
    assert.equal(token?.id, 'ci-bot');
  });

  test('an auth.js whose default export is one entry becomes a list of one', async () => {
    const { auth, manifest } = await resolveAgentDir(fixture('auth-js'));
    assert.equal(auth?.length, 1);
    assert.equal(typeof auth?.[0], 'function');
    assert.equal(manifest.auth, true);
  });

  test('without auth.ts or auth.js, auth is undefined and the manifest names the baked token (auth: true, authBy ["api-token"])', async () => {
    const { agent, auth, manifest } = await resolveAgentDir(fixture('plain'));
    assert.equal(auth, undefined);
    assert.equal(manifest.auth, true);
    assert.deepEqual(manifest.authBy, ['api-token']);
    assert.equal(manifest.basePath, '/agent');
    const result = await agent.send('hi', { principal: { id: 'u1', type: 'user', authenticator: 'custom' } });
    assert.equal(result.text, 'custom:u1');
  });

  test('the specifiers mapped to the running copy are the entry points of package.json exports', () => {
    const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      exports: Record<string, { types: string; default: string }>;
    };
    const fromPackage = Object.entries(exports).map(([path, file]) => [
      join('agentward', path),
      file.default.replace(/^\.\/dist\//, '').replace(/\.js$/, ''),
    ]);
    assert.deepEqual(fromPackage, [...AGENTWARD_ENTRIES]);
    for (const file of Object.values(exports)) assert.equal(file.types, file.default.replace(/\.js$/, '.d.ts'));
  });

  test('a directory outside the package imports agentward and agentward/auth as an installed package', async (t) => {
    const dir = writeDir(tempFolder(t), {
      'agent.ts': AGENT,
      'auth.ts': "import { anonymous } from 'agentward/auth';\nexport default [anonymous()];\n",
    });
    const { agent, auth } = await resolveAgentDir(dir);
    assert.equal((await agent.send('ping')).text, 'ping');
    assert.equal((await auth?.[0]?.(new Request('http://x/')))?.authenticator, 'anonymous');
  });

  test("auth.ts's named exports are the directory's route options (design §31), beside agentward.json's data-only mcp and limits", async (t) => {
    const dir = writeDir(tempFolder(t), {
      'agent.ts': AGENT,
      'auth.ts': `import { anonymous } from 'agentward/auth';
export default [anonymous()];
export const scopes = { approve: ['agent:approve'] };
export const onRefused = () => undefined;
export const protectedResource = undefined;
`,
      'agentward.json': JSON.stringify({ mcp: true, limits: { requests: { limit: 5, windowSec: 60 } } }),
    });
    const { options } = await resolveAgentDir(dir);
    assert.deepEqual(Object.keys(options).sort(), ['limits', 'mcp', 'onRefused', 'scopes']);
    assert.deepEqual(options.scopes, { approve: ['agent:approve'] });
    assert.equal(options.mcp, true);
    assert.deepEqual(options.limits, { requests: { limit: 5, windowSec: 60 } });
  });
});

describe('resolveAgentDir on broken directories: each a clear error naming the file', () => {
  test('missing agent.ts', async (t) => {
    const dir = writeDir(tempFolder(t), { 'agent.json': '{"name":"x"}' });
    await rejectsNaming(resolveAgentDir(dir), join(dir, 'agent.ts'), /not found/);
  });

  for (const [what, source, pattern] of [
    ['a number', 'export default 42;', /must be the auth list .* or one entry .*; got a number/],
    ['an object', 'export default { entries: [] };', /got an object/],
    ['a token string', "export default 'a-token-that-must-not-be-echoed';", /got a string/],
    [
      'a list holding a non-function',
      "import { anonymous } from 'agentward/auth';\nexport default [anonymous(), 'x'];",
      /entry 1 of the default export is not an auth entry/,
    ],
    ['missing', 'export const list = [];', /has no default export/],
  ] as const) {
    test(`an auth.ts whose default export is ${what}`, async (t) => {
      const dir = writeDir(tempFolder(t), { 'agent.ts': AGENT, 'auth.ts': source });
      await rejectsNaming(resolveAgentDir(dir), join(dir, 'auth.ts'), pattern);
      await assert.rejects(
        resolveAgentDir(dir),
        (error: Error) => !error.message.includes('a-token-that-must-not-be-echoed'),
      );
    });
  }

  test('a syntax error in agent.ts', async (t) => {
    const dir = writeDir(tempFolder(t), { 'agent.ts': 'export default createAgent({ name: ;\n' });
    await rejectsNaming(resolveAgentDir(dir), join(dir, 'agent.ts'), /cannot be loaded/);
  });

  test('a syntax error in auth.ts', async (t) => {
    const dir = writeDir(tempFolder(t), { 'agent.ts': AGENT, 'auth.ts': 'export default [\n' });
    await rejectsNaming(resolveAgentDir(dir), join(dir, 'auth.ts'), /cannot be loaded/);
  });

  test('an agent.ts whose default export is not an agent', async (t) => {
    const dir = writeDir(tempFolder(t), { 'agent.ts': 'export default { name: "not an agent" };\n' });
    await rejectsNaming(resolveAgentDir(dir), join(dir, 'agent.ts'), /must be the agent/);
  });

  test('both auth.ts and auth.js', async (t) => {
    const dir = writeDir(tempFolder(t), {
      'agent.ts': AGENT,
      'auth.ts': 'export default [];',
      'auth.js': 'export default [];',
    });
    await assert.rejects(resolveAgentDir(dir), /both auth\.ts and auth\.js/);
  });

  test('an agentward.json that is not JSON, or names a bad basePath', async (t) => {
    const broken = writeDir(tempFolder(t), { 'agent.ts': AGENT, 'agentward.json': '{ name: ' });
    await rejectsNaming(resolveAgentDir(broken), join(broken, 'agentward.json'), /not valid JSON/);
    const badPath = writeDir(tempFolder(t), { 'agent.ts': AGENT, 'agentward.json': '{ "basePath": "agent/" }' });
    await rejectsNaming(resolveAgentDir(badPath), join(badPath, 'agentward.json'), /"basePath"/);
  });

  test('an auth.ts export it does not know is an error naming it, with "did you mean", and the exports it may have', async (t) => {
    const dir = writeDir(tempFolder(t), {
      'agent.ts': AGENT,
      'auth.ts':
        "import { anonymous } from 'agentward/auth';\nexport default [anonymous()];\nexport const scope = { send: ['a'] };\n",
    });
    await rejectsNaming(
      resolveAgentDir(dir),
      join(dir, 'auth.ts'),
      /unknown export "scope" \(did you mean "scopes"\?\); auth\.ts exports the auth list \(default\) and may export scopes, scopeImplies, mcp, onRefused, protectedResource, limits, telemetry/,
    );
  });

  test('agentward.json with a code-valued option (scopes, onRefused, …) says it belongs in auth.ts, not just "unknown option"', async (t) => {
    for (const key of ['scopes', 'onRefused', 'protectedResource']) {
      const dir = writeDir(tempFolder(t), { 'agent.ts': AGENT, 'agentward.json': JSON.stringify({ [key]: {} }) });
      await rejectsNaming(
        resolveAgentDir(dir),
        join(dir, 'agentward.json'),
        new RegExp(`"${key}" belongs in auth\\.ts \\(export const ${key} = …\\): agentward\\.json holds data only`),
      );
    }
  });

  test('mcp or limits both in auth.ts and agentward.json is an error naming both files: neither silently wins', async (t) => {
    const dir = writeDir(tempFolder(t), {
      'agent.ts': AGENT,
      'auth.ts':
        "import { anonymous } from 'agentward/auth';\nexport default [anonymous()];\nexport const mcp = true;\n",
      'agentward.json': '{ "mcp": true }',
    });
    await rejectsNaming(
      resolveAgentDir(dir),
      join(dir, 'auth.ts'),
      /exports mcp and .*agentward\.json has "mcp": keep one of them/,
    );
  });

  test('an auth.ts that throws AuthConfigError at import keeps its code AGENT_AUTH_CONFIG_INVALID and its message, after the file and line that called the helper', async (t) => {
    const dir = writeDir(tempFolder(t), {
      'agent.ts': AGENT,
      'auth.ts':
        "import { jwt } from 'agentward/auth';\nexport default [jwt({ secret: 'twelve bytes', audience: 'agent' })];\n",
    });
    await assert.rejects(resolveAgentDir(dir), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'AGENT_AUTH_CONFIG_INVALID');
      assert.equal(error.message, `${join(dir, 'auth.ts')}:2:17: jwt(): secret must be at least 32 bytes (got 12)`);
      return true;
    });
  });
});

test('without module.registerHooks (Node 22.13 and 22.14), agentward start still resolves agentward to the running copy', async (t) => {
  // Node 22 with registerHooks removed before the CLI runs, as on Node 22.13.
  const without = 'data:text/javascript,import m from "node:module"; delete m.registerHooks;';
  const server = await startNodeServer([
    '--import',
    without,
    join(root, 'src', 'cli', 'main.ts'),
    'start',
    fixture('with-auth'),
  ]);
  t.after(() => server.stop());
  assert.equal((await sendMessage(server.agentUrl)).status, 401);
  assert.equal(
    (await sendMessage(server.agentUrl, basicAuth('ada', 'correct horse battery staple'))).text,
    'basic:ada',
  );
  assert.equal(
    (await sendMessage(server.agentUrl, bearer(BAKED_TOKEN))).status,
    401,
    'with an auth.ts the baked token is not used',
  );
});
