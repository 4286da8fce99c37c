// Design §30, one configuration error rule, on the Node-only factories: serve(), fileStore(),
// toNodeListener() and the channels refuse an unknown key and a wrong type with `AuthConfigError`
// (a `TypeError`), code `AGENT_AUTH_CONFIG_INVALID`, naming the factory and the option, before
// anything listens or touches the disk. The portable factories are in tests/repo/config-errors.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { discordChannel, fileStore, serve, slackChannel, toNodeListener } from '../../src/node.ts';
import { assertFactoryRefuses, type FactoryMistakes } from '../helpers/config-error.ts';
import { literalOf } from '../helpers/message-literals.ts';
import { BuildError } from '../../src/targets/errors.ts';
import { build } from '../../src/targets/build.ts';
import { CliError } from '../../src/cli/errors.ts';
import { directoryAuditLog } from '../../src/cli/audit.ts';
import { runDevLoop } from '../../src/cli/dev.ts';
import { initAgentDir } from '../../src/cli/scaffold.ts';
import { startAgentDir } from '../../src/cli/server-main.ts';

const SECRET = 'node-config-errors-secret-0123456789abcdef';
const agent = () => createAgent({ name: 'config', model: echoModel(), store: memoryStore() });
const handler = async () => new Response('ok');
const slack = { signingSecret: SECRET, botToken: 'xoxb-config-errors' };
const discord = { publicKey: 'a'.repeat(64) };

/** Every Node-only factory, each with one unknown key and one wrong type. */
const FACTORIES: readonly FactoryMistakes[] = [
  {
    factory: 'serve()',
    unknownKey: ['prot', () => serve({ agent: agent(), prot: 0, log: 'off' } as never)],
    wrongType: ['port', () => serve({ agent: agent(), port: '0', log: 'off' } as never)],
  },
  {
    factory: 'fileStore()',
    unknownKey: ['ttl', () => (fileStore as (...args: unknown[]) => unknown)('.data-never-made', { ttl: 1 })],
    wrongType: ['dir', () => fileStore(42 as never)],
  },
  {
    factory: 'toNodeListener()',
    unknownKey: ['orign', () => toNodeListener(handler, { orign: 'https://a.example' } as never)],
    wrongType: ['origin', () => toNodeListener(handler, { origin: 42 } as never)],
  },
  {
    factory: 'slackChannel()',
    unknownKey: ['apiBaseURL', () => slackChannel({ ...slack, apiBaseURL: 'http://127.0.0.1:1' } as never)],
    wrongType: ['botToken', () => slackChannel({ ...slack, botToken: 42 } as never)],
  },
  {
    factory: 'discordChannel()',
    unknownKey: ['sessionSecrit', () => discordChannel({ ...discord, sessionSecrit: SECRET } as never)],
    wrongType: ['botToken', () => discordChannel({ ...discord, botToken: 42 } as never)],
  },
];

for (const factory of FACTORIES) {
  test(`${factory.factory}: an unknown key and a wrong type are AuthConfigError (a TypeError), code AGENT_AUTH_CONFIG_INVALID, naming the factory and the option`, async () => {
    await assertFactoryRefuses(factory, [SECRET]);
  });
}

/** serve()'s other options, each closed or checked in the same way: `[option, options]`. */
const SERVE_MISTAKES: readonly (readonly [string, Record<string, unknown>])[] = [
  ['host', { host: 42 }],
  ['basePath', { basePath: 42 }],
  ['shutdownTimeoutMs', { shutdownTimeoutMs: '10s' }],
  ['playground', { playground: 'yes' }],
  ['log', { log: 42 }],
  ['timeouts', { timeouts: 30_000 }],
  ['timeouts.bodyMs', { timeouts: { bodyMs: '30s' } }],
  ['store', { agent: { name: 'config', model: echoModel() }, store: './.data' }],
  ['agent', { agent: 'config' }],
  ['channels', { channels: [slackChannel(slack)] }],
  ['channel "slack"', { channels: { slack: 'https://hooks.slack.example' } }],
];

test('serve(): host, basePath, shutdownTimeoutMs, playground, log, timeouts, store, agent and channels of the wrong type are AuthConfigError naming the option, before listening', async () => {
  for (const [option, options] of SERVE_MISTAKES) {
    const unknownKey = `${option}Typo`;
    await assertFactoryRefuses({
      factory: 'serve()',
      // The unknown key beside each mistake is found first: the options object is closed.
      unknownKey: [
        unknownKey,
        () => serve({ agent: agent(), port: 0, log: 'off', ...options, [unknownKey]: 1 } as never),
      ],
      wrongType: [option, () => serve({ agent: agent(), port: 0, log: 'off', ...options } as never)],
    });
  }
});

test('build() and the commands fail with BuildError and CliError, each with a code and one literal of src/ (design §38)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'agentward-errors-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'agent.ts'), 'export default {};\n');
  const missing = join(dir, 'missing');
  const cases: readonly (readonly [
    what: string,
    provoke: () => Promise<unknown>,
    kind: abstract new (...args: never) => Error,
    code: string,
  ])[] = [
    ['build() without options', () => build(dir, null as never), BuildError, 'BUILD_OPTIONS_INVALID'],
    [
      'build() with an unknown option',
      () => build(dir, { target: 'node-server', out: missing, tagret: 1 } as never),
      BuildError,
      'BUILD_OPTIONS_INVALID',
    ],
    [
      'build() for no target of its own',
      () => build(dir, { target: 'lambda' as never, out: missing }),
      BuildError,
      'BUILD_OPTIONS_INVALID',
    ],
    ['build() without out', () => build(dir, { target: 'node-server', out: '' }), BuildError, 'BUILD_OPTIONS_INVALID'],
    ['init in a directory with an agent', () => initAgentDir(dir), CliError, 'CLI_DIRECTORY'],
    ['start of a directory that does not exist', () => startAgentDir(missing), CliError, 'CLI_DIRECTORY'],
    ['dev of a directory that does not exist', () => runDevLoop(missing, { quiet: true }), CliError, 'CLI_DIRECTORY'],
    ['audit of a directory without auth.ts', () => directoryAuditLog(dir), CliError, 'CLI_NO_AUDIT_LOG'],
  ];
  for (const [what, provoke, kind, code] of cases) {
    await assert.rejects(provoke(), (error: unknown) => {
      assert.ok(error instanceof kind, `${what}: ${String(error)}`);
      assert.equal((error as { code?: unknown }).code, code, what);
      assert.notEqual(literalOf(error.message), undefined, `${what}: one literal of src/ writes "${error.message}"`);
      return true;
    });
  }
});
