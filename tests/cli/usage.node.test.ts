// The command line as a newcomer meets it: help, version, unknown commands and options, exit codes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fixture, nodeBin, root, tempFolder } from '../helpers/build.ts';

const cliFile = join(root, 'src', 'cli', 'main.ts');
const binFile = join(root, 'bin', 'agentward.js');
const COMMANDS = ['init', 'dev', 'start', 'build'];

function agentward(args: string[], file = cliFile): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.AGENT_API_TOKEN;
  const result = spawnSync(nodeBin, [file, ...args], { encoding: 'utf8', env, timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('agentward help and version', () => {
  for (const flag of ['--help', '-h']) {
    test(`agentward ${flag}: the usage of every command on stdout, exit 0`, () => {
      const { status, stdout, stderr } = agentward([flag]);
      assert.equal(status, 0);
      assert.equal(stderr, '');
      for (const command of COMMANDS) assert.match(stdout, new RegExp(`agentward ${command} <dir`));
      assert.match(stdout, /--version/);
    });
    for (const command of COMMANDS) {
      test(`agentward ${command} ${flag}: that command's usage, exit 0, nothing done`, (t) => {
        const { status, stdout } = agentward([command, flag]);
        assert.equal(status, 0);
        assert.match(stdout, new RegExp(`^usage: agentward ${command} `));
        // Even with a directory, help does nothing else.
        const dir = join(tempFolder(t), 'untouched');
        assert.equal(agentward([command, dir, flag]).status, 0);
        assert.throws(() => readFileSync(join(dir, 'agent.ts')), /ENOENT/);
      });
    }
  }

  test('agentward help <command> prints the command usage', () => {
    const { status, stdout } = agentward(['help', 'build']);
    assert.equal(status, 0);
    assert.match(
      stdout,
      /^usage: agentward build <dir> --target node-server\|docker\|cloudflare-worker --out <folder>/,
    );
  });

  for (const flag of ['--version', '-v']) {
    test(`agentward ${flag} prints the package version, exit 0`, () => {
      const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
      const { status, stdout } = agentward([flag]);
      assert.equal(status, 0);
      assert.equal(stdout, `${version}\n`);
    });
  }

  test('bin/agentward.js answers --version and dev --help the same way', () => {
    assert.equal(agentward(['--version'], binFile).status, 0);
    const help = agentward(['dev', '--help'], binFile);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^usage: agentward dev/);
  });
});

describe('agentward usage errors exit 2', () => {
  test('an unknown command is named, with the list of commands', () => {
    const { status, stdout, stderr } = agentward(['foo']);
    assert.equal(status, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /unknown command "foo"/);
    assert.match(stderr, /commands: init, dev, start, build/);
  });

  test('no command at all is a usage error', () => {
    const { status, stderr } = agentward([]);
    assert.equal(status, 2);
    assert.match(stderr, /a command is missing/);
  });

  test('an unknown option is named as such, for every command (build --verbose is not "needs a value")', () => {
    for (const command of COMMANDS) {
      // start takes --verbose (design §31): every other command does not.
      const option = command === 'start' ? '--chatty' : '--verbose';
      const { status, stderr } = agentward([command, fixture('plain'), option]);
      assert.equal(status, 2, command);
      assert.match(stderr, new RegExp(`${command}: unknown option "${option}"`));
      assert.doesNotMatch(stderr, /needs a value/);
    }
    const global = agentward(['--frobnicate']);
    assert.equal(global.status, 2);
    assert.match(global.stderr, /unknown option "--frobnicate"/);
  });

  test('an unknown option or command close to a known one is named with "did you mean", for every command', () => {
    const cases: [string[], string][] = [
      [['build', fixture('plain'), '--taget', 'docker'], 'build: unknown option "--taget" (did you mean "--target"?)'],
      [
        ['build', fixture('plain'), '--target', 'docker', '--ot', 'x'],
        'build: unknown option "--ot" (did you mean "--out"?)',
      ],
      [['dev', fixture('plain'), '--quite'], 'dev: unknown option "--quite" (did you mean "--quiet"?)'],
      [
        ['start', fixture('plain'), '--playgound'],
        'start: unknown option "--playgound" (did you mean "--playground"?)',
      ],
      [
        ['start', fixture('plain'), '--log-refusal'],
        'start: unknown option "--log-refusal" (did you mean "--log-refusals"?)',
      ],
      [['init', 'x', '--hlep'], 'init: unknown option "--hlep" (did you mean "--help"?)'],
      [['--verison'], 'unknown option "--verison" (did you mean "--version"?)'],
      [['strat', 'x'], 'unknown command "strat" (did you mean "start"?)'],
      [['help', 'buidl'], 'unknown command "buidl" (did you mean "build"?)'],
    ];
    for (const [args, message] of cases) {
      const { status, stderr } = agentward(args);
      assert.equal(status, 2, args.join(' '));
      assert.ok(stderr.includes(`agentward: ${message}\n`), `${args.join(' ')}: ${stderr}`);
    }
    // Nothing close: no guess.
    assert.doesNotMatch(agentward(['build', fixture('plain'), '--verbose']).stderr, /did you mean/);
    assert.doesNotMatch(agentward(['frobnicate']).stderr, /did you mean/);
  });

  test('a switch given a value is named as such', () => {
    const { status, stderr } = agentward(['dev', fixture('plain'), '--quiet=yes']);
    assert.equal(status, 2);
    assert.match(stderr, /dev: --quiet takes no value/);
  });

  test('a missing directory, a second directory, a missing or bad --target, a flag without value', (t) => {
    const out = join(tempFolder(t), 'out');
    const cases: [string[], RegExp][] = [
      [['start'], /start: the directory is missing/],
      [['init', 'a', 'b'], /init: unexpected argument "b"/],
      [
        ['build', fixture('plain'), '--out', out],
        /build: --target <node-server\|docker\|cloudflare-worker> is required/,
      ],
      [
        ['build', fixture('plain'), '--target', 'lambda', '--out', out],
        /--target must be one of node-server, docker, cloudflare-worker/,
      ],
      [['build', fixture('plain'), '--target', 'docker'], /--out <folder> is required/],
      [['build', fixture('plain'), '--target'], /--target needs a value/],
    ];
    for (const [args, message] of cases) {
      const { status, stderr } = agentward(args);
      assert.equal(status, 2, args.join(' '));
      assert.match(stderr, message);
    }
  });

  test('--target=value and --out=value are read too', (t) => {
    const out = join(tempFolder(t), 'out');
    const { status, stderr } = agentward(['build', fixture('plain'), '--target=node-server', `--out=${out}`]);
    assert.equal(status, 0, stderr);
    assert.equal(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).target, 'node-server');
  });
});

describe('agentward failures exit 1', () => {
  test('a command that fails (a directory that does not exist) exits 1 with the reason', (t) => {
    const missing = join(tempFolder(t), 'nowhere');
    const { status, stderr } = agentward(['start', missing]);
    assert.equal(status, 1);
    assert.match(stderr, /does not exist/);
  });
});
