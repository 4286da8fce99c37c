#!/usr/bin/env node
// The `agentgate` command. Node only; run with type stripping (Node 22.18+ does it by default).
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiToken } from './auth/api-token.ts';
import type { Refusal } from './auth/refusals.ts';
import type { AuthFn } from './auth/types.ts';
import { BUILD_TARGETS, SETTINGS_FILE, type BuildTarget } from './build/agent-dir.ts';
import { build } from './build/build.ts';
import { loadAgentDir } from './build/resolve.ts';
import { initAgentDir, newApiToken } from './build/scaffold.ts';
import { directoryAuth, startAgentDir, startAgentServer } from './build/server-main.ts';

const USAGE = `usage:
  agentgate init <dir>      scaffold an agent directory (agent.ts, agent.json, agentgate.json with an API token)
  agentgate dev <dir>       serve an agent directory, restarting when its files change
  agentgate start <dir|out> serve an agent directory, or run a build output
  agentgate build <dir> --target node-server|docker|cloudflare-worker --out <folder>

environment: PORT (default 3000), HOST (default 127.0.0.1), AGENT_API_TOKEN (appended to the auth list)`;

class UsageError extends Error {}

async function main(args: readonly string[]): Promise<void> {
  const [command, dir, ...rest] = args;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE);
    return;
  }
  if (dir === undefined || dir.startsWith('-')) throw new UsageError(`${command}: the directory is missing`);
  switch (command) {
    case 'init':
      return init(dir);
    case 'start':
      return start(dir, rest.includes('--log-refusals'));
    case 'dev':
      return dev(dir);
    case 'build':
      return buildCommand(dir, rest);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

async function init(dir: string): Promise<void> {
  const { dir: created, files, apiToken: token } = await initAgentDir(dir);
  console.log(`agentgate: created ${files.join(', ')} in ${created}`);
  // Shown this once; it stays in agentgate.json (mode 0600), which the server reads.
  console.log(`API token: ${token}`);
  console.log(`next: agentgate dev ${dir}`);
}

/**
 * Serves a build output as it is; serves an agent directory with its auth list (its auth
 * file, else the token `init` baked in, plus AGENT_API_TOKEN). A directory with no auth at
 * all is not served open: a token is generated for this run and shown once. (To serve
 * openly on purpose, export `anonymous()` from auth.ts.)
 */
async function start(dir: string, logRefusals = false): Promise<void> {
  const folder = resolve(dir);
  if (existsSync(join(folder, 'manifest.json')) && existsSync(join(folder, 'server.js'))) return startAgentDir(folder);

  const { agent, auth, manifest, info } = await loadAgentDir(folder);
  let list: readonly AuthFn[] | undefined = directoryAuth(auth, info.settings.apiToken);
  let credential: string | undefined;
  if (process.env.AGENT_API_TOKEN) {
    credential = '"Authorization: Bearer $AGENT_API_TOKEN"';
  } else if (auth === undefined && info.settings.apiToken !== undefined && !folder.includes("'")) {
    credential = `"Authorization: Bearer $(node -p 'require(${JSON.stringify(join(folder, SETTINGS_FILE))}).apiToken')"`;
  } else if (list === undefined) {
    const token = newApiToken();
    list = [apiToken(token)];
    console.log(`agentgate: no auth configured (no auth.ts, no token in ${SETTINGS_FILE}, no AGENT_API_TOKEN); generated an API token for this run:`);
    console.log(`  ${token}`);
    credential = `'Authorization: Bearer ${token}'`;
  }
  // `dev` prints why each bearer token was refused (design §12): the reason, kid and iss, never the token.
  const onRefused = logRefusals ? (r: Refusal) => console.log(`agentgate: ${r.entry} refused a bearer token: ${r.reason}${r.kid === undefined ? '' : ` kid=${JSON.stringify(r.kid)}`}${r.iss === undefined ? '' : ` iss=${JSON.stringify(r.iss)}`}`) : undefined;
  const server = await startAgentServer({ name: manifest.name, agent, auth: list, basePath: manifest.basePath, onRefused });
  console.log('try:');
  console.log(
    `  curl -X POST ${server.url}${manifest.basePath} -H 'Content-Type: application/json'${credential ? ` -H ${credential}` : ''} -d '{"message":"hello"}'`,
  );
  if (credential === undefined) console.log('  (add the credentials your auth.ts accepts)');
}

/** `start` in a child process that Node restarts whenever a file of the directory changes. */
async function dev(dir: string): Promise<void> {
  const folder = resolve(dir);
  if (!existsSync(folder)) throw new UsageError(`dev: ${folder} does not exist`);
  const cli = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ['--watch-path', folder, '--watch-preserve-output', cli, 'start', folder, '--log-refusals'], {
    stdio: 'inherit',
    env: { NODE_ENV: 'development', ...process.env },
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  const code = await new Promise<number>((done) => child.on('exit', (exitCode, signal) => done(exitCode ?? (signal ? 0 : 1))));
  process.exit(code);
}

async function buildCommand(dir: string, args: readonly string[]): Promise<void> {
  let target: string | undefined;
  let out: string | undefined;
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i], args[i + 1]];
    if (value === undefined) throw new UsageError(`build: ${flag} needs a value`);
    if (flag === '--target') target = value;
    else if (flag === '--out') out = value;
    else throw new UsageError(`build: unknown option ${flag}`);
  }
  if (!BUILD_TARGETS.includes(target as BuildTarget)) throw new UsageError(`build: --target must be one of ${BUILD_TARGETS.join(', ')}`);
  if (out === undefined) throw new UsageError('build: --out <folder> is required');
  const manifest = await build(dir, { target: target as BuildTarget, out });
  console.log(`agentgate: built ${manifest.name} for ${manifest.target} in ${resolve(out)} (run: ${manifest.main})`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(`agentgate: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  // Messages of the project's errors never hold a secret; a stack adds nothing for a user.
  const code = (error as { code?: unknown } | null)?.code;
  console.error(`agentgate: ${(error as Error)?.message ?? String(error)}${typeof code === 'string' ? ` (${code})` : ''}`);
  process.exit(1);
});
