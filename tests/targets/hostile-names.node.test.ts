// Generated code never embeds the directory's text outside a string literal: hostile names and
// instructions, built for every target, stay data. Names with line separators are refused.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';
import { build } from '../../src/targets/build.ts';
import { bearer, sendMessage, startBuiltServer, tempFolder, writeDir } from '../helpers/build.ts';

const TOKEN = 'hostile-names-token-0123456789abcdef';
// Each piece ends a different context: a string, a template, a comment, a tag, a TOML or Dockerfile line.
const HOSTILE_NAME =
  'a"b\'c`d${(() => { throw new Error("pwned") })()}e*/ throw new Error("pwned"); /*f</script>\\g"\nname = "pwned';
const HOSTILE_NAME_ONE_LINE = HOSTILE_NAME.replace('\n', ' ');
const HOSTILE_TEXT = `ok\u2028throw new Error("pwned");//\u2029"); throw new Error("pwned"); ("</script><!--`;

function hostileDir(t: { after(fn: () => void): void }, name = HOSTILE_NAME_ONE_LINE, mcp = false): string {
  return writeDir(tempFolder(t), {
    'agent.ts':
      "import { createAgent, echoModel } from 'agentward';\nimport spec from './agent.json' with { type: 'json' };\nexport default createAgent({ name: spec.name, instructions: spec.instructions, model: echoModel() });\n",
    'agent.json': JSON.stringify({ name, instructions: HOSTILE_TEXT, model: { provider: 'echo' } }),
    'agentward.json': JSON.stringify({ name, basePath: '/agent', apiToken: TOKEN, ...(mcp && { mcp }) }),
  });
}

/** The generated files that are code or configuration (not JSON data). */
function codeFiles(out: string): string[] {
  return readdirSync(out)
    .filter((file) => /\.(js|toml)$|^Dockerfile$|^\.dockerignore$/.test(file))
    .map((file) => join(out, file));
}

describe('hostile names and text in every build target', () => {
  test('cloudflare-worker: worker.js loads, names the agent byte for byte, and holds the text only escaped', async (t) => {
    const out = join(tempFolder(t), 'out');
    await build(hostileDir(t, HOSTILE_NAME_ONE_LINE, true), { target: 'cloudflare-worker', out });
    for (const file of codeFiles(out)) {
      const code = readFileSync(file, 'utf8');
      assert.equal(code.includes(HOSTILE_NAME_ONE_LINE), false, `${file} holds the raw name`);
      assert.equal(code.includes(HOSTILE_TEXT), false, `${file} holds the raw instructions`);
      assert.doesNotMatch(code, /[\u2028\u2029]/, `${file} holds a raw line separator`);
    }
    assert.match(readFileSync(join(out, 'wrangler.toml'), 'utf8'), /^name = "[a-z0-9-]+"$/m);
    // worker.js imports cloudflare:workers, which only workerd provides; on Node its DurableObject
    // is a bare class (the Durable Objects are not reached here: initialize needs no store).
    const onNode = join(out, 'worker.node.mjs');
    writeFileSync(
      onNode,
      readFileSync(join(out, 'worker.js'), 'utf8').replace(
        "import { DurableObject } from 'cloudflare:workers';",
        'class DurableObject {}',
      ),
    );
    const worker = (await import(pathToFileURL(onNode).href)) as {
      default: { fetch(request: Request, env: unknown): Promise<Response> };
    };
    // The store's binding is only reached by a turn: initialize names the agent without it.
    const unreached = {
      idFromName: () => 'store',
      get: () => ({ fetch: () => Promise.reject(new Error('unreached')) }),
    };
    const response = await worker.default.fetch(
      new Request('http://worker/agent/mcp', {
        method: 'POST',
        headers: { authorization: bearer(TOKEN), 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25' },
        }),
      }),
      { AGENT_API_TOKEN: TOKEN, AGENT_SESSIONS: unreached },
    );
    assert.equal(response.status, 200);
    const { result } = (await response.json()) as { result: { serverInfo: { name: string } } };
    assert.equal(result.serverInfo.name, HOSTILE_NAME_ONE_LINE);
  });

  for (const target of ['node-server', 'docker'] as const) {
    test(`${target}: the built server starts and answers; code files hold no raw name; JSON files hold it as data`, async (t) => {
      const out = join(tempFolder(t), 'out');
      await build(hostileDir(t), { target, out });
      for (const file of codeFiles(out))
        assert.equal(readFileSync(file, 'utf8').includes(HOSTILE_NAME_ONE_LINE), false, file);
      assert.equal(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).name, HOSTILE_NAME_ONE_LINE);
      assert.match(
        JSON.parse(readFileSync(join(out, 'package.json'), 'utf8')).name,
        /^[a-z0-9][a-z0-9._-]*$/,
        'a name npm install accepts',
      );
      const server = await startBuiltServer(out, { AGENT_LOG: 'off', AGENT_DATA_DIR: join(tempFolder(t), 'data') });
      t.after(() => server.stop());
      const reply = await sendMessage(server.agentUrl, bearer(TOKEN));
      assert.equal(reply.status, 200);
      assert.equal(reply.text, 'who am I?');
    });
  }

  for (const [file, separator] of [
    ['agentward.json', '\u2028'],
    ['agent.json', '\u2029'],
    ['agentward.json', '\n'],
    ['agent.json', '\u0000'],
  ] as const) {
    const label = `U+${separator.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
    test(`a name with ${label} in ${file} is refused with an error naming the file and field, for every target`, async (t) => {
      const dir = hostileDir(t);
      const path = join(dir, file);
      const json = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
      writeDir(dir, { [file]: JSON.stringify({ ...json, name: `x${separator}throw new Error("pwned")` }) });
      for (const target of ['node-server', 'docker', 'cloudflare-worker'] as const) {
        await assert.rejects(build(dir, { target, out: join(tempFolder(t), 'out') }), (error: Error) => {
          assert.ok(error.message.startsWith(`${path}: "name" must be one line of text`), error.message);
          return true;
        });
      }
    });
  }
});
