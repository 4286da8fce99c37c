#!/usr/bin/env node
// The `agentward` command. Plain JavaScript, so that it runs (and can refuse) on any Node.
// In the package it is dist/bin/agentward.js and runs the compiled dist/cli/main.js; in the
// repository it is bin/agentward.js and runs src/cli/main.ts. Agent directories hold TypeScript
// (agent.ts), so the CLI runs with Node's type stripping: in this process when Node strips
// types by default (22.18+), else in a child started with --experimental-strip-types.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  console.error(`agentward needs Node 22.13 or newer (found ${process.version})`);
  process.exit(1);
}

const compiled = new URL('../cli/main.js', import.meta.url);
const cli = existsSync(compiled) ? compiled : new URL('../src/cli/main.ts', import.meta.url);

if (process.features.typescript) {
  await import(cli.href);
} else {
  const child = spawn(
    process.execPath,
    ['--experimental-strip-types', '--no-warnings=ExperimentalWarning', fileURLToPath(cli), ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
