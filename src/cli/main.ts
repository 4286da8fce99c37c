#!/usr/bin/env node
// The `agentward` command. Node only; run with type stripping (Node 22.18+ does it by default).
// Exit codes: 0 done (and --help, --version), 1 the command failed, 2 the command line is wrong.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiToken, closest, type AuthFn } from '../auth/internal.ts';
import { BUILD_TARGETS, SETTINGS_FILE, type BuildTarget } from '../agent-dir/agent-dir.ts';
import { build } from '../targets/build.ts';
import { migrateDatabase } from './database.ts';
import { runDevLoop, serveLoadFailure } from './dev.ts';
import { loadAgentDir } from '../agent-dir/resolve.ts';
import { FIRST_TOOL_CALL, initAgentDir, newApiToken } from './scaffold.ts';
import {
  builtOutputTarget,
  dataDirOf,
  DEV_CHILD_PORT_IN_USE,
  DEV_RUN_TOKEN,
  directoryAuth,
  PortInUseError,
  startAgentDir,
  startAgentServer,
  type ServerFlags,
} from './server-main.ts';
import { readApiTokenEnv } from '../node/server.ts';

interface CommandSpec {
  synopsis: string;
  summary: string;
  details: string;
  /** Flags that take a value; every other flag is a switch. */
  values: readonly string[];
  switches: readonly string[];
}

const ENVIRONMENT = `environment:
  PORT             port to listen on (default 3000; 0 picks a free port)
  HOST             address to listen on (default 127.0.0.1)
  AGENT_API_TOKEN  a token accepted besides the directory's auth (appended to the auth list)
  AGENT_LOG        request log: text (default), json (one JSON object per line), off
  AGENT_DATA_DIR   where a file store keeps sessions (dev and start: <dir>/.data)
  AGENT_DATABASE_URL  PostgreSQL for postgresStore: start migrates its schema first
                   (AGENT_DATABASE_SCHEMA, default agentward) with the directory's pg
  AGENT_PLAYGROUND on: a built server serves the playground too`;

const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  init: {
    synopsis: 'agentward init <dir>',
    summary: 'scaffold an agent directory',
    details: `Creates <dir> with agent.ts (the agent), agent.json (name, instructions, model),
agentward.json (name, basePath, and a fresh API token, file mode 0600) and package.json
("type": "module", so the files load as ES modules in any npm project). The token is
printed once. Refuses a directory that already holds an agent.`,
    values: [],
    switches: [],
  },
  dev: {
    synopsis: 'agentward dev <dir> [--quiet]',
    summary: 'serve an agent directory with the playground, restarting when its files change',
    details: `Serves <dir> like start, plus the browser playground at <base>/playground, and restarts
when a file of the directory changes however it is saved: in place, renamed over (editors'
atomic saves, sed -i), deleted or created (dot-folders such as .data and node_modules
excepted). A directory that does not load answers 503 until the fixed file is saved. Logs
why each bearer token is refused, and tells the playground who each request ran as (never
the token). Sessions are kept in <dir>/.data unless AGENT_DATA_DIR says otherwise.

options:
  --quiet   no request log`,
    values: [],
    switches: ['--quiet'],
  },
  start: {
    synopsis: 'agentward start <dir|out> [--quiet] [--playground] [--log-refusals]',
    summary: 'serve an agent directory, or run a node-server/docker build output',
    details: `Serves the agent of <dir> (agent.ts, auth.ts, agentward.json) at its base path, or runs
the server.js of a node-server or docker build output. A directory with no auth at all is
not served open: a token is generated for the run and printed once.

options:
  --quiet        no request log
  --playground   also serve the browser playground at <base>/playground (dev does it;
                 a build output is asked through AGENT_PLAYGROUND=on)
  --log-refusals print why each bearer token was refused: reason, kid, iss, never the
                 token (dev does it)`,
    values: [],
    switches: ['--quiet', '--playground', '--log-refusals'],
  },
  build: {
    synopsis: `agentward build <dir> --target ${BUILD_TARGETS.join('|')} --out <folder>`,
    summary: 'build an agent directory for a deployment target',
    details: `Writes the build into <folder> (created, or replaced when it holds an earlier build).
  node-server        server.js, the transpiled directory and agentward's runtime: node server.js
  docker             the same plus a Dockerfile and .dockerignore
  cloudflare-worker  worker.js and wrangler.toml serving agent.json: npx wrangler dev
The baked API token is never written out, only its SHA-256 digest.

options:
  --target <name>   ${BUILD_TARGETS.join(', ')}
  --out <folder>    the output folder`,
    values: ['--target', '--out'],
    switches: [],
  },
};

const COMMAND_NAMES = Object.keys(COMMANDS);
const GLOBAL_OPTIONS = ['--help', '--version'];

const USAGE = `usage: agentward <command> [options]

commands:
${COMMAND_NAMES.map((name) => `  ${COMMANDS[name]!.synopsis}\n      ${COMMANDS[name]!.summary}`).join('\n')}

options:
  -h, --help      show this help, or a command's help (agentward <command> --help)
  -v, --version   print the version

${ENVIRONMENT}`;

const commandHelp = (name: string) =>
  `usage: ${COMMANDS[name]!.synopsis}\n\n${COMMANDS[name]!.details}\n\n${ENVIRONMENT}`;

/** A wrong command line: exit code 2, with a pointer to the help. */
class UsageError extends Error {
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

function version(): string {
  const file = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

interface Parsed {
  positionals: string[];
  values: Map<string, string>;
  switches: Set<string>;
  help: boolean;
}

/** Reads `args` against a command's flags: `--flag value` or `--flag=value`; anything unknown is a usage error. */
function parseArgs(command: string, args: readonly string[]): Parsed {
  const spec = COMMANDS[command]!;
  const parsed: Parsed = { positionals: [], values: new Map(), switches: new Set(), help: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--help' || arg === '-h') {
      parsed.help = true;
      continue;
    }
    if (!arg.startsWith('-') || arg === '-') {
      parsed.positionals.push(arg);
      continue;
    }
    const equals = arg.indexOf('=');
    const flag = equals === -1 ? arg : arg.slice(0, equals);
    if (spec.values.includes(flag)) {
      const value = equals === -1 ? args[++i] : arg.slice(equals + 1);
      if (value === undefined || value === '' || (equals === -1 && value.startsWith('-')))
        throw new UsageError(`${command}: ${flag} needs a value`, command);
      parsed.values.set(flag, value);
    } else if (spec.switches.includes(flag)) {
      if (equals !== -1) throw new UsageError(`${command}: ${flag} takes no value`, command);
      parsed.switches.add(flag);
    } else {
      throw new UsageError(
        `${command}: ${unknown('option', flag, [...spec.values, ...spec.switches, '--help'])}`,
        command,
      );
    }
  }
  return parsed;
}

/** `unknown option "--taget" (did you mean "--target"?)`: the same closest name as option objects give. */
function unknown(what: 'option' | 'command', name: string, known: readonly string[]): string {
  const near = closest(name, known);
  return `unknown ${what} ${JSON.stringify(name)}${near === undefined ? '' : ` (did you mean "${near}"?)`}`;
}

/** The one directory argument of a command. */
function directoryArgument(command: string, { positionals }: Parsed): string {
  const [dir, extra] = positionals;
  if (dir === undefined) throw new UsageError(`${command}: the directory is missing`, command);
  if (extra !== undefined) throw new UsageError(`${command}: unexpected argument "${extra}"`, command);
  return dir;
}

async function main(args: readonly string[]): Promise<void> {
  const [first, ...rest] = args;
  if (first === '--help' || first === '-h') return void console.log(USAGE);
  if (first === '--version' || first === '-v') return void console.log(version());
  if (first === 'help') {
    const [topic] = rest;
    if (topic === undefined) return void console.log(USAGE);
    if (!Object.hasOwn(COMMANDS, topic)) throw new UsageError(unknown('command', topic, COMMAND_NAMES));
    return void console.log(commandHelp(topic));
  }
  if (first === undefined) throw new UsageError('a command is missing');
  if (first.startsWith('-')) throw new UsageError(unknown('option', first, GLOBAL_OPTIONS));
  if (!Object.hasOwn(COMMANDS, first)) throw new UsageError(unknown('command', first, COMMAND_NAMES));

  const parsed = parseArgs(first, rest);
  if (parsed.help) return void console.log(commandHelp(first));
  const dir = directoryArgument(first, parsed);
  const flags: ServerFlags = {
    quiet: parsed.switches.has('--quiet'),
    playground: parsed.switches.has('--playground'),
    logRefusals: parsed.switches.has('--log-refusals'),
  };
  // Set by dev for its server child alone: answers then say who they ran as (never under start or a build).
  if (first === 'start' && process.env.AGENTWARD_DEV_CHILD === '1') flags.dev = true;
  switch (first) {
    case 'init':
      return init(dir);
    case 'start':
      return start(dir, flags);
    case 'dev':
      return runDevLoop(dir, { cli: fileURLToPath(import.meta.url), quiet: flags.quiet === true });
    case 'build':
      return buildCommand(dir, parsed.values);
  }
}

async function init(dir: string): Promise<void> {
  const { dir: created, files, apiToken: token } = await initAgentDir(dir);
  console.log(`agentward: created ${files.join(', ')} in ${created}`);
  // Shown this once; it stays in agentward.json (mode 0600), which the server reads.
  console.log(`API token: ${token}`);
  console.log(`next: agentward dev ${dir}`);
  console.log(`then, in the playground: ${FIRST_TOOL_CALL} (a tool call that waits for your approval)`);
}

/**
 * Serves a build output as it is; serves an agent directory with its auth list (its auth
 * file, else the token `init` baked in, plus AGENT_API_TOKEN). A directory with no auth at
 * all is not served open: a token is generated for this run and shown once. (To serve
 * openly on purpose, export `anonymous()` from auth.ts.)
 */
async function start(dir: string, flags: ServerFlags): Promise<void> {
  const folder = resolve(dir);
  if (!existsSync(folder)) throw new Error(`${folder}: does not exist`);
  const target = await builtOutputTarget(folder);
  if (target !== undefined) return startAgentDir(folder, flags);

  // An empty AGENT_API_TOKEN stops the start here, before a token is generated for the run.
  readApiTokenEnv();
  // A file store of the directory keeps its sessions in the directory (dev restarts keep them).
  process.env.AGENT_DATA_DIR ||= dataDirOf(folder);
  try {
    await serveDirectory(folder, flags);
  } catch (error) {
    // Under dev, a directory that does not load (or whose server cannot start) is answered 503 until the fix is saved.
    if (process.env.AGENTWARD_DEV_CHILD !== '1' || error instanceof PortInUseError) throw error;
    console.error(errorLine(error));
    await serveLoadFailure();
  }
}

async function serveDirectory(folder: string, flags: ServerFlags): Promise<void> {
  await migrateDatabase(folder);
  const { agent, auth, manifest, info } = await loadAgentDir(folder);
  let list: readonly AuthFn[] | undefined = directoryAuth(auth, info.settings.apiToken);
  let credential: string | undefined;
  if (process.env.AGENT_API_TOKEN) {
    credential = '"Authorization: Bearer $AGENT_API_TOKEN"';
  } else if (auth === undefined && info.settings.apiToken !== undefined && !folder.includes("'")) {
    credential = `"Authorization: Bearer $(node -p 'require(${JSON.stringify(join(folder, SETTINGS_FILE))}).apiToken')"`;
  } else if (list === undefined) {
    // Under dev, the token is made once for the whole dev run: a save must not log the playground out.
    const token =
      process.env.AGENTWARD_DEV_CHILD === '1' && process.env[DEV_RUN_TOKEN]
        ? process.env[DEV_RUN_TOKEN]
        : newApiToken();
    list = [apiToken(token)];
    console.log(
      `agentward: no auth configured (no auth.ts, no token in ${SETTINGS_FILE}, no AGENT_API_TOKEN); generated an API token for this ${process.env.AGENTWARD_DEV_CHILD === '1' ? 'dev run (kept across restarts)' : 'run'}:`,
    );
    console.log(`  ${token}`);
    credential = `'Authorization: Bearer ${token}'`;
  }
  const server = await startAgentServer({
    name: manifest.name,
    agent,
    auth: list,
    basePath: manifest.basePath,
    mcp: info.settings.mcp === true,
    limits: info.settings.limits,
    dir: folder,
    ...flags,
  });
  console.log('try:');
  console.log(
    `  curl -X POST ${server.url}${manifest.basePath} -H 'Content-Type: application/json'${credential ? ` -H ${credential}` : ''} -d '{"message":"hello"}'`,
  );
  if (credential === undefined) console.log('  (add the credentials your auth.ts accepts)');
}

async function buildCommand(dir: string, values: ReadonlyMap<string, string>): Promise<void> {
  const target = values.get('--target');
  const out = values.get('--out');
  if (target === undefined) throw new UsageError(`build: --target <${BUILD_TARGETS.join('|')}> is required`, 'build');
  if (!BUILD_TARGETS.includes(target as BuildTarget))
    throw new UsageError(`build: --target must be one of ${BUILD_TARGETS.join(', ')}`, 'build');
  if (out === undefined) throw new UsageError('build: --out <folder> is required', 'build');
  const manifest = await build(dir, { target: target as BuildTarget, out });
  console.log(`agentward: built ${manifest.name} for ${manifest.target} in ${resolve(out)} (run: ${manifest.main})`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    const help = error.command === undefined ? 'agentward --help' : `agentward ${error.command} --help`;
    const commands = error.command === undefined ? `\ncommands: ${COMMAND_NAMES.join(', ')}` : '';
    console.error(`agentward: ${error.message}${commands}\nrun "${help}" for usage`);
    process.exit(2);
  }
  if (error instanceof PortInUseError) {
    console.error(`agentward: ${error.message}`);
    process.exit(process.env.AGENTWARD_DEV_CHILD === '1' ? DEV_CHILD_PORT_IN_USE : 1);
  }
  console.error(errorLine(error));
  process.exit(1);
});

/** Messages of the project's errors never hold a secret; a stack adds nothing for a user. */
function errorLine(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return `agentward: ${(error as Error)?.message ?? String(error)}${typeof code === 'string' ? ` (${code})` : ''}`;
}
