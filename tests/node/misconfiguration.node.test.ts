// Design §20 on the node side: serve() refuses an auth key holding nothing, option objects that
// inherit keys, an empty AGENT_API_TOKEN; warns once where AGENT_API_TOKEN's entry shares the id
// of a listed apiToken(), and where the MCP route listens off loopback without mcp.allowedHosts,
// which then holds on the real listener. An agent directory whose auth.ts exports nothing, or
// calls a helper with an unset variable, is an error naming auth.ts and the line, under the
// resolver, `agentward start` and a built server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { apiToken, AuthConfigError } from '../../src/auth/index.ts';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { discordChannel, serve, slackChannel } from '../../src/node.ts';
import { resolveAgentDir } from '../../src/agent-dir/resolve.ts';
import { build } from '../../src/targets/build.ts';
import { fixture, nodeBin, root, runBuiltServerToExit, tempFolder, writeDir } from '../helpers/build.ts';

const TOKEN = 'tok_node_misconfiguration_0123456789';
const ENV_TOKEN = 'tok_env_misconfiguration_0123456789';
const agent = () => createAgent({ name: 'node-misconfigured', model: echoModel(), store: memoryStore() });
const inherited = (proto: object, own: Record<string, unknown> = {}) => Object.assign(Object.create(proto), own);

async function withEnv<T>(name: string, value: string | undefined, body: () => Promise<T>): Promise<T> {
  const before = process.env[name];
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env[name];
    else process.env[name] = before;
  }
}

async function warnings<T>(body: () => Promise<T>): Promise<{ result: T; lines: string[] }> {
  const original = console.warn;
  const lines: string[] = [];
  console.warn = (...args: unknown[]) => void lines.push(args.join(' '));
  try {
    return { result: await body(), lines };
  } finally {
    console.warn = original;
  }
}

const configError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof AuthConfigError, String(error));
  assert.equal(error.code, 'AGENT_AUTH_CONFIG_INVALID');
  assert.match(error.message, pattern);
  return true;
};

test("serve(): an auth key holding undefined, null or '' refuses to start, naming the likely cause; omitted, the spec's open route", async () => {
  await withEnv('AGENT_API_TOKEN', undefined, async () => {
    for (const [value, shown] of [
      [undefined, 'undefined'],
      [null, 'null'],
      ['', 'an empty string'],
    ] as const) {
      await assert.rejects(
        serve({ agent: agent(), auth: value as never, port: 0, log: 'off' }),
        configError(
          new RegExp(
            `^serve\\(\\): auth is ${shown}: an unset environment variable\\? Omit auth for an open route, or use anonymous\\(\\)$`,
          ),
        ),
      );
    }
    const open = await serve({ agent: agent(), port: 0, log: 'off' });
    try {
      const response = await fetch(`${open.url}/agent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"message":"hi"}',
      });
      assert.equal(response.status, 200);
    } finally {
      await open.close();
    }
  });
});

test('serve(), its timeouts, slackChannel(), discordChannel(): option objects that inherit keys are refused at creation', async () => {
  await assert.rejects(
    serve(inherited({ atuh: TOKEN }, { agent: agent(), port: 0 }) as never),
    configError(/^serve\(\): options must be a plain object/),
  );
  await assert.rejects(
    serve({ agent: agent(), port: 0, timeouts: inherited({ headersMs: 1 }) }),
    configError(/^serve\(\): timeouts: options must be a plain object/),
  );
  assert.throws(
    () =>
      slackChannel(inherited({ botToken: 'xoxb-1' }, { signingSecret: 'slack-signing-secret-0123456789' }) as never),
    /^(?:\w+Error: )?slackChannel\(\): options must be a plain object/,
  );
  assert.throws(
    () => discordChannel(inherited({ botToken: 'b' }, { publicKey: 'a'.repeat(64) }) as never),
    /discordChannel\(\): options must be a plain object/,
  );
});

test('AGENT_API_TOKEN set but empty is not a token: serve() refuses to start, saying so (never an open route)', async () => {
  await withEnv('AGENT_API_TOKEN', '', async () => {
    await assert.rejects(
      serve({ agent: agent(), port: 0, log: 'off' }),
      configError(
        /^serve\(\): AGENT_API_TOKEN must be a non-empty RFC 6750 b64token .*; got an empty string \(unset it, or set it to a token\)$/,
      ),
    );
    await assert.rejects(serve({ agent: agent(), auth: TOKEN, port: 0, log: 'off' }), configError(/AGENT_API_TOKEN/));
  });
  await withEnv('AGENT_API_TOKEN', 'a token with spaces', async () => {
    await assert.rejects(
      serve({ agent: agent(), port: 0, log: 'off' }),
      (error: unknown) =>
        configError(/got a string outside that syntax$/)(error) && !String(error).includes('with spaces'),
    );
  });
});

test('AGENT_API_TOKEN that cannot be a secret (a word an unset variable turns into, under 16 characters): serve() refuses to start, naming the rule, never the value (design §26)', async () => {
  for (const [value, rule] of [
    ['undefined', /^serve\(\): AGENT_API_TOKEN is what an unset or mistyped variable turns into, not a secret$/],
    ['NULL', /is what an unset or mistyped variable turns into, not a secret/],
    ['NaN', /is what an unset or mistyped variable turns into, not a secret/],
    ['False', /is what an unset or mistyped variable turns into, not a secret/],
    ['k3Yx9QmZ2p', /^serve\(\): AGENT_API_TOKEN must be at least 16 characters \(got 10\)$/],
  ] as const) {
    await withEnv('AGENT_API_TOKEN', value, async () => {
      for (const auth of [undefined, TOKEN]) {
        const outcome = await serve({ agent: agent(), port: 0, log: 'off', ...(auth !== undefined && { auth }) }).then(
          async (server) => {
            await server.close(); // a server that started must not keep the test running
            return undefined;
          },
          (error: unknown) => error,
        );
        assert.ok(outcome !== undefined, `serve() refuses to start on AGENT_API_TOKEN=${value}`);
        configError(rule)(outcome);
        assert.ok(!String(outcome).includes(value), 'the value is never in the error');
      }
    });
  }
});

test('agentward start and a built node server refuse to start on AGENT_API_TOKEN=undefined or a 10-character value: the rule on stderr, the value nowhere (design §26)', async (t) => {
  const dir = writeDir(tempFolder(t), {}, fixture('plain'));
  const out = join(tempFolder(t), 'out');
  await build(dir, { target: 'node-server', out, log: () => {} });
  for (const [value, rule] of [
    ['undefined', /AGENT_API_TOKEN is what an unset or mistyped variable turns into, not a secret/],
    ['k3Yx9QmZ2p', /AGENT_API_TOKEN must be at least 16 characters \(got 10\)/],
  ] as const) {
    const start = spawnSync(nodeBin, [join(root, 'src', 'cli', 'main.ts'), 'start', dir], {
      encoding: 'utf8',
      env: { ...process.env, AGENT_API_TOKEN: value, PORT: '0' },
      timeout: 60_000,
    });
    assert.equal(start.status, 1, `agentward start exits 1 (${value}): ${start.stderr}`);
    assert.match(start.stderr, rule);
    assert.match(start.stderr, /AGENT_AUTH_CONFIG_INVALID/);
    assert.doesNotMatch(start.stdout, /generated an API token|listening/);
    for (const text of [start.stdout, start.stderr]) assert.ok(!text.includes(value), 'the value is never printed');
    const built = await runBuiltServerToExit(out, { AGENT_API_TOKEN: value, PORT: '0' });
    assert.notEqual(built.code, 0);
    assert.match(built.stderr, rule);
    assert.doesNotMatch(built.stdout, /listening/);
    for (const text of [built.stdout, built.stderr]) assert.ok(!text.includes(value), 'the value is never printed');
  }
});

test("AGENT_API_TOKEN beside an apiToken() entry of the same id: the spec's appended entry, both tokens accepted, and one warning at start", async () => {
  const post = (url: string, token: string) =>
    fetch(`${url}/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: '{"message":"hi"}',
    });
  await withEnv('AGENT_API_TOKEN', ENV_TOKEN, async () => {
    const { result: server, lines } = await warnings(() =>
      serve({ agent: agent(), auth: [apiToken(TOKEN)], port: 0, log: 'off' }),
    );
    try {
      assert.deepEqual(
        lines.filter((line) => line.includes('api-token')),
        [
          'agentward: AGENT_API_TOKEN and an apiToken() entry of the auth list both have the id "api-token": their callers are one principal (give that entry its own id)',
        ],
      );
      assert.equal((await post(server.url, TOKEN)).status, 200);
      assert.equal((await post(server.url, ENV_TOKEN)).status, 200);
      assert.equal((await post(server.url, 'tok_neither_0123456789')).status, 401);
    } finally {
      await server.close();
    }
    const { result: own, lines: none } = await warnings(() =>
      serve({ agent: agent(), auth: [apiToken(TOKEN, { id: 'ci' })], port: 0, log: 'off' }),
    );
    await own.close();
    assert.deepEqual(none, [], 'an entry of its own id: nothing to say');
    // Two of the user's own entries of one id are still refused.
    await assert.rejects(
      serve({ agent: agent(), auth: [apiToken(TOKEN), apiToken(ENV_TOKEN)], port: 0, log: 'off' }),
      configError(/give each token its own id/),
    );
  });
});

/** A raw request with a Host header of our choosing (fetch sets its own). */
function rawPost(url: string, host: string, body: string): Promise<number> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        hostname,
        port,
        path: pathname,
        method: 'POST',
        headers: { host, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('serve() with mcp off loopback: one warning at start without mcp.allowedHosts; with it, a Host not listed is 403 on the real listener', async () => {
  await withEnv('AGENT_API_TOKEN', undefined, async () => {
    const { result: exposed, lines } = await warnings(() =>
      serve({ agent: agent(), host: '0.0.0.0', port: 0, mcp: true, log: 'off' }),
    );
    await exposed.close();
    assert.equal(lines.filter((line) => line.includes('mcp.allowedHosts')).length, 1, lines.join('\n'));
    for (const options of [{ host: '127.0.0.1', mcp: true }, { host: '0.0.0.0', mcp: false }, { host: '0.0.0.0' }]) {
      const { result: quiet, lines: none } = await warnings(() =>
        serve({ agent: agent(), port: 0, log: 'off', ...options }),
      );
      await quiet.close();
      assert.deepEqual(none, [], JSON.stringify(options));
    }
    const { result: guarded, lines: quiet } = await warnings(() =>
      serve({
        agent: agent(),
        host: '0.0.0.0',
        port: 0,
        mcp: { allowedHosts: ['agent.example.com'] },
        auth: TOKEN,
        log: 'off',
      }),
    );
    try {
      assert.deepEqual(quiet, []);
      const port = new URL(guarded.url).port;
      const mcp = `http://127.0.0.1:${port}/agent/mcp`;
      const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
      assert.equal(await rawPost(mcp, 'evil.example', ping), 403, 'not listed: refused before auth');
      assert.equal(await rawPost(mcp, `127.0.0.1:${port}`, ping), 403, 'a loopback name is not listed either');
      assert.equal(await rawPost(mcp, 'agent.example.com', ping), 401, 'listed: on to auth');
    } finally {
      await guarded.close();
    }
  });
});

test("an agent directory whose auth.ts exports undefined, null or '' (an unset variable) is an error naming auth.ts and the line", async (t) => {
  for (const [source, shown] of [
    ['// the list, from the environment\nexport default process.env.AGENTWARD_TEST_UNSET_AUTH;\n', 'undefined'],
    ['const auth = null;\n\nexport default auth;\n', 'null'],
    ["export default process.env.AGENTWARD_TEST_UNSET_AUTH ?? '';\n", 'an empty string'],
  ] as const) {
    const dir = writeDir(tempFolder(t), { 'auth.ts': source }, fixture('plain'));
    const line = source.split('\n').findIndex((text) => text.startsWith('export default')) + 1;
    await assert.rejects(
      resolveAgentDir(dir),
      configError(
        new RegExp(
          `^${join(dir, 'auth.ts')}:${line}: the default export \\(auth\\) is ${shown}: an unset environment variable\\? Export anonymous\\(\\) for an open route$`,
        ),
      ),
    );
  }
});

test('apiToken(process.env.UNSET) in auth.ts says it got undefined and names auth.ts:line, under the resolver, agentward start and a built server', async (t) => {
  const dir = writeDir(
    tempFolder(t),
    {
      'auth.ts':
        "import { apiToken, basic } from 'agentward/auth';\n\nexport default [\n  basic({ users: { ada: 'pw-0123456789' } }),\n  apiToken(process.env.AGENTWARD_TEST_UNSET_TOKEN as string),\n];\n",
    },
    fixture('plain'),
  );
  const expected = /auth\.ts:5:3: apiToken\(\): token must be a non-empty RFC 6750 b64token .*; got undefined/;
  await assert.rejects(resolveAgentDir(dir), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'AGENT_AUTH_CONFIG_INVALID');
    assert.match(error.message, new RegExp(`^${join(dir, 'auth.ts')}:5:3: `));
    assert.match(error.message, expected);
    return true;
  });
  const env = { ...process.env };
  delete env.AGENT_API_TOKEN;
  const start = spawnSync(nodeBin, [join(root, 'src', 'cli', 'main.ts'), 'start', dir], {
    encoding: 'utf8',
    env: { ...env, PORT: '0' },
    timeout: 60_000,
  });
  assert.equal(start.status, 1, start.stdout);
  assert.match(start.stderr, expected);
  assert.match(start.stderr, /\(AGENT_AUTH_CONFIG_INVALID\)/);
  assert.doesNotMatch(start.stdout, /listening/);
  const out = join(tempFolder(t), 'out');
  await build(dir, { target: 'node-server', out, log: () => {} });
  const built = await runBuiltServerToExit(out);
  assert.notEqual(built.code, 0);
  assert.match(
    built.stderr,
    /app\/auth\.js:5:3: apiToken\(\): token must be a non-empty RFC 6750 b64token .*; got undefined/,
  );
  assert.doesNotMatch(built.stdout, /listening/);
});

test('agentward start with AGENT_API_TOKEN set but empty stops before generating a token for the run', (t) => {
  const dir = writeDir(tempFolder(t), {}, fixture('plain'));
  const start = spawnSync(nodeBin, [join(root, 'src', 'cli', 'main.ts'), 'start', dir], {
    encoding: 'utf8',
    env: { ...process.env, AGENT_API_TOKEN: '', PORT: '0' },
    timeout: 60_000,
  });
  assert.equal(start.status, 1);
  assert.match(start.stderr, /AGENT_API_TOKEN must be a non-empty RFC 6750 b64token .*got an empty string/);
  assert.doesNotMatch(start.stdout, /generated an API token|listening/);
});
