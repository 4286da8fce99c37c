// The command line as a newcomer meets it: help, version, unknown commands and options, exit codes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fixture, nodeBin, root, tempFolder } from './build-helpers.ts';

const cliFile = join(root, 'src', 'cli.ts');
const binFile = join(root, 'bin', 'agentgate.js');
const COMMANDS = ['init', 'dev', 'start', 'build'];

function agentgate(args: string[], file = cliFile): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.AGENT_API_TOKEN;
  const result = spawnSync(nodeBin, [file, ...args], { encoding: 'utf8', env, timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('agentgate help and version', () => {
  for (const flag of ['--help', '-h']) {
    test(`agentgate ${flag}: the usage of every command on stdout, exit 0`, () => {
      const { status, stdout, stderr } = agentgate([flag]);
      assert.equal(status, 0);
      assert.equal(stderr, '');
      for (const command of COMMANDS) assert.match(stdout, new RegExp(`agentgate ${command} <dir`));
      assert.match(stdout, /--version/);
    });
    for (const command of COMMANDS) {
      test(`agentgate ${command} ${flag}: that command's usage, exit 0, nothing done`, (t) => {
        const { status, stdout } = agentgate([command, flag]);
        assert.equal(status, 0);
        assert.match(stdout, new RegExp(`^usage: agentgate ${command} `));
        // Even with a directory, help does nothing else.
        const dir = join(tempFolder(t), 'untouched');
        assert.equal(agentgate([command, dir, flag]).status, 0);
        assert.throws(() => readFileSync(join(dir, 'agent.ts')), /ENOENT/);
      });
    }
  }

  test('agentgate help <command> prints the command usage', () => {
    const { status, stdout } = agentgate(['help', 'build']);
    assert.equal(status, 0);
    assert.match(stdout, /^usage: agentgate build <dir> --target node-server\|docker\|cloudflare-worker --out <folder>/);
  });

  for (const flag of ['--version', '-v']) {
    test(`agentgate ${flag} prints the package version, exit 0`, () => {
      const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
      const { status, stdout } = agentgate([flag]);
      assert.equal(status, 0);
      assert.equal(stdout, `${version}\n`);
    });
  }

  test('bin/agentgate.js answers --version and dev --help the same way', () => {
    assert.equal(agentgate(['--version'], binFile).status, 0);
    const help = agentgate(['dev', '--help'], binFile);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^usage: agentgate dev/);
  });
});

describe('agentgate usage errors exit 2', () => {
  test('an unknown command is named, with the list of commands', () => {
    const { status, stdout, stderr } = agentgate(['foo']);
    assert.equal(status, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /unknown command "foo"/);
    assert.match(stderr, /commands: init, dev, start, build/);
  });

  test('no command at all is a usage error', () => {
    const { status, stderr } = agentgate([]);
    assert.equal(status, 2);
    assert.match(stderr, /a command is missing/);
  });

  test('an unknown option is named as such, for every command (build --verbose is not "needs a value")', () => {
    for (const command of COMMANDS) {
      const { status, stderr } = agentgate([command, fixture('plain'), '--verbose']);
      assert.equal(status, 2, command);
      assert.match(stderr, new RegExp(`${command}: unknown option "--verbose"`));
      assert.doesNotMatch(stderr, /needs a value/);
    }
    const global = agentgate(['--frobnicate']);
    assert.equal(global.status, 2);
    assert.match(global.stderr, /unknown option "--frobnicate"/);
  });

  test('a missing directory, a second directory, a missing or bad --target, a flag without value', (t) => {
    const out = join(tempFolder(t), 'out');
    const cases: [string[], RegExp][] = [
      [['start'], /start: the directory is missing/],
      [['init', 'a', 'b'], /init: unexpected argument "b"/],
      [['build', fixture('plain'), '--out', out], /build: --target <node-server\|docker\|cloudflare-worker> is required/],
      [['build', fixture('plain'), '--target', 'lambda', '--out', out], /--target must be one of node-server, docker, cloudflare-worker/],
      [['build', fixture('plain'), '--target', 'docker'], /--out <folder> is required/],
      [['build', fixture('plain'), '--target'], /--target needs a value/],
    ];
    for (const [args, message] of cases) {
      const { status, stderr } = agentgate(args);
      assert.equal(status, 2, args.join(' '));
      assert.match(stderr, message);
    }
  });

  test('--target=value and --out=value are read too', (t) => {
    const out = join(tempFolder(t), 'out');
    const { status, stderr } = agentgate(['build', fixture('plain'), '--target=node-server', `--out=${out}`]);
    assert.equal(status, 0, stderr);
    assert.equal(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).target, 'node-server');
  });
});

describe('agentgate failures exit 1', () => {
  test('a command that fails (a directory that does not exist) exits 1 with the reason', (t) => {
    const missing = join(tempFolder(t), 'nowhere');
    const { status, stderr } = agentgate(['start', missing]);
    assert.equal(status, 1);
    assert.match(stderr, /does not exist/);
  });
});
