#!/usr/bin/env node
// The `agentward` command. Node only; run with type stripping (Node 22.18+ does it by default).
// Exit codes: 0 done (and --help, --version), 1 the command failed, 2 the command line is wrong.
// Each command's modules are imported when it runs: --help, --version and a wrong command line
// load nothing but this file and the names of the build targets.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { BUILD_TARGETS, type BuildTarget } from '../agent-dir/names.ts';
import { errorLine } from './error-line.ts';
import { CliError } from './errors.ts';

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
excepted), or a file outside it that it imports. A directory that does not load answers 503
until the fixed file is saved. Logs why each bearer token is refused and what the model's
provider said when a model call fails, and tells the playground who each request ran as
(never the token). Sessions are kept in <dir>/.data unless AGENT_DATA_DIR says otherwise.

options:
  --quiet   no request log`,
    values: [],
    switches: ['--quiet'],
  },
  start: {
    synopsis: 'agentward start <dir|out> [--quiet] [--playground] [--log-refusals] [--verbose]',
    summary: 'serve an agent directory, or run a node-server/docker build output',
    details: `Serves the agent of <dir> (agent.ts, auth.ts, agentward.json) at its base path, or runs
the server.js of a node-server or docker build output. A directory with no auth at all is
not served open: a token is generated for the run and printed once.

options:
  --quiet        no request log
  --playground   also serve the browser playground at <base>/playground (dev does it;
                 a build output is asked through AGENT_PLAYGROUND=on)
  --log-refusals print why each bearer token was refused: reason, kid, iss, never the
                 token (dev does it)
  --verbose      print what the model's provider said when a model call fails: status,
                 error type, message, keys redacted; callers still get only the status
                 (dev does it)`,
    values: [],
    switches: ['--quiet', '--playground', '--log-refusals', '--verbose'],
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
  audit: {
    synopsis: 'agentward audit export|head [<dir>] | audit verify <file.jsonl>',
    summary: "export, check and pin the agent's tamper-evident audit log",
    details: `agentward audit export [<dir>] [--since <iso>] [--until <iso>]
    writes the records of the directory's audit log (default: the current directory) to
    stdout, one JSON object a line, in seq order: those with since <= time < until.
agentward audit head [<dir>]
    prints the last record's {"seq","hash"}: keep it elsewhere; a chain rebuilt after it
    (possible without a key) then fails verify --head.
agentward audit verify <file.jsonl> [--head <seq>:<hash>] [--key-env <NAME>]
    checks the hash chain of an export: exit 0 when it holds (with a note when it starts
    mid-chain, as an export made with --since does), exit 1 naming the first broken seq.

The log is the one the directory's auth.ts exports as \`audit\`:
  export const audit = { log: postgresAuditLog({ client: auditPool, key: process.env.AUDIT_KEY }) };

options:
  --since <iso>      export records at or after this instant (e.g. 2026-01-01T00:00:00Z)
  --until <iso>      export records before this instant
  --head <seq>:<hash>  verify: the head kept from audit head
  --key-env <NAME>   verify: the environment variable holding the log's key (never on the
                     command line)`,
    values: ['--since', '--until', '--head', '--key-env'],
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

/** A name on the command line that is not known, and the names it could have been (the "did you mean" is found when it is printed). */
interface Unknown {
  what: 'option' | 'command';
  name: string;
  known: readonly string[];
}

/** A wrong command line: exit code 2, with a pointer to the help. */
class UsageError extends Error {
  readonly code = 'CLI_USAGE';
  readonly command: string | undefined;
  readonly unknown: Unknown | undefined;
  constructor(message: string, command?: string, unknown?: Unknown) {
    super(message);
    this.command = command;
    this.unknown = unknown;
  }
}

/** `unknown option "--taget" (did you mean "--target"?)`: the same closest name as option objects give. */
async function unknownText({ what, name, known }: Unknown): Promise<string> {
  const { closest } = await import('../auth/internal.ts');
  const near = closest(name, known);
  return `unknown ${what} ${JSON.stringify(name)}${near === undefined ? '' : ` (did you mean "${near}"?)`}`;
}

const unknown = (what: Unknown['what'], name: string, known: readonly string[], command?: string) =>
  new UsageError(`unknown ${what} ${JSON.stringify(name)}`, command, { what, name, known });

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
      throw unknown('option', flag, [...spec.values, ...spec.switches, '--help'], command);
    }
  }
  return parsed;
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
    if (!Object.hasOwn(COMMANDS, topic)) throw unknown('command', topic, COMMAND_NAMES);
    return void console.log(commandHelp(topic));
  }
  if (first === undefined) throw new UsageError('a command is missing');
  if (first.startsWith('-')) throw unknown('option', first, GLOBAL_OPTIONS);
  if (!Object.hasOwn(COMMANDS, first)) throw unknown('command', first, COMMAND_NAMES);

  const parsed = parseArgs(first, rest);
  if (parsed.help) return void console.log(commandHelp(first));
  if (first === 'audit') return process.exit(await audit(parsed));
  const dir = directoryArgument(first, parsed);
  const quiet = parsed.switches.has('--quiet');
  switch (first) {
    case 'init':
      return init(dir);
    case 'start': {
      const { startAgentDir } = await import('./server-main.ts');
      return startAgentDir(dir, {
        quiet,
        playground: parsed.switches.has('--playground'),
        logRefusals: parsed.switches.has('--log-refusals'),
        verbose: parsed.switches.has('--verbose'),
      });
    }
    case 'dev': {
      const { runDevLoop } = await import('./dev.ts');
      return runDevLoop(dir, { quiet });
    }
    case 'build':
      return buildCommand(dir, parsed.values);
  }
}

const AUDIT_COMMANDS = ['export', 'head', 'verify'];
/** The options each `audit` command takes. */
const AUDIT_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  export: ['--since', '--until'],
  head: [],
  verify: ['--head', '--key-env'],
};

/** `agentward audit <export|head|verify>`: its exit code (the log's pool, if any, would keep the process alive). */
async function audit({ positionals, values }: Parsed): Promise<number> {
  const [command, argument, extra] = positionals;
  if (command === undefined)
    throw new UsageError(`audit: a command is missing (${AUDIT_COMMANDS.join(', ')})`, 'audit');
  if (!AUDIT_COMMANDS.includes(command)) throw unknown('command', command, AUDIT_COMMANDS, 'audit');
  for (const flag of values.keys())
    if (!AUDIT_OPTIONS[command]!.includes(flag))
      throw new UsageError(
        `audit ${command}: ${flag} is an option of ${flag === '--head' || flag === '--key-env' ? 'audit verify' : 'audit export'}`,
        'audit',
      );
  if (extra !== undefined) throw new UsageError(`audit ${command}: unexpected argument "${extra}"`, 'audit');
  const { isoInstant } = await import('../agent/audit-chain.ts');
  for (const flag of ['--since', '--until']) {
    const value = values.get(flag);
    if (value !== undefined && isoInstant(value) === undefined)
      throw new UsageError(`audit export: ${flag} must be an ISO 8601 instant such as 2026-01-01T00:00:00Z`, 'audit');
  }
  const cli = await import('./audit.ts');
  if (command === 'export')
    return cli.auditExport(argument ?? '.', {
      ...(values.has('--since') ? { since: values.get('--since')! } : {}),
      ...(values.has('--until') ? { until: values.get('--until')! } : {}),
    });
  if (command === 'head') return cli.auditHead(argument ?? '.');
  if (argument === undefined) throw new UsageError('audit verify: the file is missing', 'audit');
  const head = values.get('--head');
  const pinned = head === undefined ? undefined : /^([1-9]\d{0,15}):([0-9a-f]{64})$/.exec(head);
  if (pinned === null)
    throw new UsageError('audit verify: --head must be <seq>:<hash>, as audit head prints them', 'audit');
  const keyEnv = values.get('--key-env');
  const key = keyEnv === undefined ? undefined : process.env[keyEnv];
  if (keyEnv !== undefined && !key)
    throw new CliError('CLI_ENV_INVALID', `audit verify: the environment variable ${keyEnv} (--key-env) is not set`);
  return cli.auditVerify(argument, {
    ...(pinned === undefined ? {} : { head: { seq: Number(pinned[1]), hash: pinned[2]! } }),
    ...(key === undefined ? {} : { key }),
  });
}

async function init(dir: string): Promise<void> {
  const { FIRST_TOOL_CALL, initAgentDir, runCommand } = await import('./scaffold.ts');
  const { dir: created, files, apiToken: token } = await initAgentDir(dir);
  console.log(`agentward: created ${files.join(', ')} in ${created}`);
  // Shown this once; it stays in agentward.json (mode 0600), which the server reads.
  console.log(`API token: ${token}`);
  console.log(`next: ${runCommand(['dev', dir])}`);
  console.log(`then, in the playground: ${FIRST_TOOL_CALL} (a tool call that waits for your approval)`);
}

async function buildCommand(dir: string, values: ReadonlyMap<string, string>): Promise<void> {
  const target = values.get('--target');
  const out = values.get('--out');
  if (target === undefined) throw new UsageError(`build: --target <${BUILD_TARGETS.join('|')}> is required`, 'build');
  if (!BUILD_TARGETS.includes(target as BuildTarget))
    throw new UsageError(`build: --target must be one of ${BUILD_TARGETS.join(', ')}`, 'build');
  if (out === undefined) throw new UsageError('build: --out <folder> is required', 'build');
  const { build } = await import('../targets/build.ts');
  const manifest = await build(dir, { target: target as BuildTarget, out });
  console.log(`agentward: built ${manifest.name} for ${manifest.target} in ${resolve(out)} (run: ${manifest.main})`);
}

main(process.argv.slice(2)).catch(async (error: unknown) => {
  if (error instanceof UsageError) {
    const help = error.command === undefined ? 'agentward --help' : `agentward ${error.command} --help`;
    const commands = error.command === undefined ? `\ncommands: ${COMMAND_NAMES.join(', ')}` : '';
    const message =
      error.unknown === undefined
        ? error.message
        : `${error.command === undefined ? '' : `${error.command}: `}${await unknownText(error.unknown)}`;
    console.error(`agentward: ${message}${commands}\nrun "${help}" for usage`);
    process.exit(2);
  }
  // A taken port (PortInUseError) is said as it is: its message names the port and the way out.
  console.error(
    (error as { code?: unknown } | null)?.code === 'PORT_IN_USE'
      ? `agentward: ${(error as Error).message}`
      : errorLine(error),
  );
  process.exit(1);
});
