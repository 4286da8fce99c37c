// Design §14 on the Node side: serve(), toNodeListener(), the channels, build() and the project
// files (agentward.json, agent.json) refuse unknown keys at creation, naming the key and the one
// it resembles. A misspelled "apiTokn" never leaves `agentward start` without its token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { AuthConfigError } from '../../src/auth/index.ts';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { discordChannel, serve, slackChannel, toNodeListener } from '../../src/node.ts';
import { build } from '../../src/targets/build.ts';
import { fixture, nodeBin, root, tempFolder, writeDir } from '../helpers/build.ts';

const agent = () => createAgent({ name: 'closed', model: echoModel(), store: memoryStore() });

function rejectsUnknown(
  error: unknown,
  type: abstract new (...args: never[]) => Error,
  prefix: string,
  suggestion: string,
): boolean {
  assert.ok(error instanceof type, `${type.name}: ${String(error)}`);
  assert.ok(error.message.startsWith(prefix), error.message);
  assert.ok(error.message.includes(`(did you mean "${suggestion}"?)`), error.message);
  return true;
}

test('serve(): an unknown option throws before listening (prot → port, atuh → auth)', async () => {
  await assert.rejects(serve({ agent: agent(), prot: 0 } as never), (error) =>
    rejectsUnknown(error, AuthConfigError, 'serve(): unknown option "prot"', 'port'),
  );
  await assert.rejects(serve({ agent: agent(), port: 0, atuh: 'tok_0123456789' } as never), (error) =>
    rejectsUnknown(error, AuthConfigError, 'serve(): unknown option "atuh"', 'auth'),
  );
});

test('toNodeListener(), slackChannel(), discordChannel(): unknown options throw', () => {
  assert.throws(
    () => toNodeListener(async () => new Response('ok'), { orign: 'https://a.example' } as never),
    (error) => rejectsUnknown(error, AuthConfigError, 'toNodeListener(): unknown option "orign"', 'origin'),
  );
  assert.throws(
    () =>
      slackChannel({ signingSecret: 's'.repeat(32), botToken: 'xoxb-1', apiBaseURL: 'http://127.0.0.1:1' } as never),
    (error) => rejectsUnknown(error, AuthConfigError, 'slackChannel(): unknown option "apiBaseURL"', 'apiBaseUrl'),
  );
  assert.throws(
    () => discordChannel({ publicKey: 'a'.repeat(64), sessionSecrit: 'x'.repeat(32) } as never),
    (error) =>
      rejectsUnknown(error, AuthConfigError, 'discordChannel(): unknown option "sessionSecrit"', 'sessionSecret'),
  );
});

test('build(): an unknown option throws, and nothing is written', async (t) => {
  const out = join(tempFolder(t), 'out');
  await assert.rejects(build(fixture('plain'), { target: 'node-server', out, outt: 'x' } as never), (error) =>
    rejectsUnknown(error, Error, 'build(): unknown option "outt"', 'out'),
  );
});

test('agentward.json and agent.json: an unknown field is an error naming the file, the field and the one it resembles; the value is never shown', async (t) => {
  const settings = writeDir(
    tempFolder(t),
    { 'agentward.json': JSON.stringify({ name: 'x', apiTokn: 'baked-token-value-0123456789' }) },
    fixture('plain'),
  );
  await assert.rejects(build(settings, { target: 'node-server', out: join(tempFolder(t), 'out') }), (error: Error) => {
    rejectsUnknown(error, Error, `${join(settings, 'agentward.json')}: unknown option "apiTokn"`, 'apiToken');
    assert.equal(error.message.includes('baked-token-value'), false);
    return true;
  });
  const spec = writeDir(
    tempFolder(t),
    { 'agent.json': JSON.stringify({ name: 'x', instuctions: 'be brief' }) },
    fixture('plain'),
  );
  await assert.rejects(
    build(spec, { target: 'cloudflare-worker', out: join(tempFolder(t), 'out'), log: () => {} }),
    (error) =>
      rejectsUnknown(error, Error, `${join(spec, 'agent.json')}: unknown option "instuctions"`, 'instructions'),
  );
});

test('agentward start: a misspelled "apiTokn" in agentward.json stops start-up (exit 1) instead of serving without the token', (t) => {
  const dir = writeDir(
    tempFolder(t),
    { 'agentward.json': JSON.stringify({ name: 'x', apiTokn: 'baked-token-value-0123456789' }) },
    fixture('plain'),
  );
  const result = spawnSync(nodeBin, [join(root, 'src', 'cli', 'main.ts'), 'start', dir], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, PORT: '0' },
  });
  assert.equal(result.status, 1, result.stdout + result.stderr);
  assert.match(result.stderr, /unknown option "apiTokn" \(did you mean "apiToken"\?\)/);
  assert.doesNotMatch(result.stdout + result.stderr, /listening on|baked-token-value/);
});
