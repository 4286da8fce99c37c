#!/usr/bin/env node
// Runs src/cli.ts with Node's type stripping: in this process when Node strips types by
// default (22.18+), else in a child started with --experimental-strip-types (22.6+).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const cli = new URL('../src/cli.ts', import.meta.url);

if (process.features.typescript) {
  await import(cli.href);
} else {
  const child = spawn(process.execPath, ['--experimental-strip-types', '--no-warnings=ExperimentalWarning', fileURLToPath(cli), ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
