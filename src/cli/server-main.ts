// The node server of an agent directory or of a build output, as `start`, `dev`'s server and a
// built `server.js` run it: the directory's auth list and route options given to `serve()`, the
// listening address from the environment, the banner, a graceful close on signals.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Agent } from '../agent/types.ts';
import { onProviderFailure, type ProviderDetail } from '../agent/provider-detail.ts';
import { apiToken, type Refusal, type AuthFn } from '../auth/internal.ts';
import { printable } from '../node/request-log.ts';
import { closeOnSignals, readApiTokenEnv, serve, urlHost } from '../node/server.ts';
import type { AgentServer, ServeOptions } from '../node/server.ts';
import { DEV_INSPECT } from '../node/dev-inspect.ts';
import { BUILD_TARGETS, dataDirOf, SETTINGS_FILE } from '../agent-dir/names.ts';
import type { AgentManifest, BuildTarget, ProjectSettings } from '../agent-dir/agent-dir.ts';
import { directoryRouteOptions, type DirectoryRouteOptions } from '../agent-dir/route-options.ts';
import { limitStoreOf, migrateDatabase } from './database.ts';
import { CliError } from './errors.ts';
import { loadAgentDir, loadAgentFiles } from '../agent-dir/resolve.ts';
import { apiTokenDigest } from '../agent-dir/token-digest.ts';
import { NO_AUTH_CONFIGURED } from '../cloudflare/spec-worker.ts';
import { newApiToken } from './scaffold.ts';

export { dataDirOf };

/**
 * The list the server is given: the auth file's list when there is one (the baked token is
 * then not used); otherwise the token `init` baked into agentward.json. `serve()` appends
 * `apiToken(AGENT_API_TOKEN)` to either.
 */
export function directoryAuth(
  auth: readonly AuthFn[] | undefined,
  bakedToken: string | undefined,
): readonly AuthFn[] | undefined {
  if (auth !== undefined) return auth;
  return bakedToken === undefined ? undefined : [apiToken(bakedToken)];
}

/** What the CLI's switches ask of the server: no request log, the playground, the refusal and provider lines. */
export interface ServerFlags {
  quiet?: boolean;
  playground?: boolean;
  /** Print why each bearer token was refused (design §12): the reason, kid and iss, never the token. */
  logRefusals?: boolean;
  /** Print what a model's provider said when a model call failed (design §31): status, type, message, redacted. */
  verbose?: boolean;
}

/** What only `agentward dev`'s server asks (dev-server.ts): the inspector, the run's token, the banner once. */
export interface DevRun {
  /** The token a directory without auth is served with: one for the whole dev run. */
  token: string;
  /** False on a restart: `dev` prints one line for it instead of the banner. */
  banner: boolean;
}

/** One line per refused token (`dev`, `--log-refusals`): kid and iss come from the client, so they are escaped. */
export function printRefusal(r: Refusal): void {
  console.log(
    `agentward: ${r.entry} refused a bearer token: ${r.reason}${r.kid === undefined ? '' : ` kid="${printable(r.kid)}"`}${r.iss === undefined ? '' : ` iss="${printable(r.iss)}"`}`,
  );
}

/** Control, format and separator characters escaped: a provider's message is one line of the terminal. */
const oneLine = (text: string) =>
  text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * The line `dev` and `start --verbose` print for a model failure (design §31), e.g.
 * `agentward: the model failed (openai.chat gpt-5): HTTP 400 invalid_request_error: Unsupported parameter: 'temperature'`.
 * Its text was redacted of the key and header values when the error was made.
 */
export function printProviderFailure(detail: ProviderDetail): void {
  const parts = [
    detail.status === undefined ? undefined : `HTTP ${detail.status}`,
    detail.type,
    detail.message === undefined
      ? undefined
      : `${detail.type === undefined && detail.status === undefined ? '' : ': '}${detail.message}`,
  ];
  const said = parts
    .filter((part) => part !== undefined)
    .join(' ')
    .replace(/ : /, ': ');
  console.error(
    oneLine(
      `agentward: the model failed${detail.provider === undefined ? '' : ` (${detail.provider})`}: ${said || 'no detail'}`,
    ),
  );
}

/** The target of the build output in `dir` (a `manifest.json` of a build), or undefined for anything else. */
export async function builtOutputTarget(dir: string): Promise<BuildTarget | undefined> {
  try {
    const { target } = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Partial<AgentManifest>;
    return BUILD_TARGETS.includes(target as BuildTarget) ? (target as BuildTarget) : undefined;
  } catch {
    return undefined;
  }
}

const DEFAULT_PORT = 3000;

/** The port the server was to listen on is taken: `start` and `dev` exit 1 saying so, rather than wait. */
export class PortInUseError extends Error {
  readonly code = 'PORT_IN_USE';
  constructor(port: number) {
    super(`port ${port} is in use; set PORT=… to another port (PORT=0 picks a free one)`);
    this.name = 'PortInUseError';
  }
}

function portFrom(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535)
    throw new CliError('CLI_ENV_INVALID', 'PORT must be an integer from 0 to 65535');
  return Number(value);
}

/** Where `start` and `dev` listen: PORT (default 3000) and HOST (default 127.0.0.1) from the environment. */
export function listenAddress(): { port: number; host: string; url(port: number): string } {
  const port = portFrom(process.env.PORT) ?? DEFAULT_PORT;
  const host = process.env.HOST || '127.0.0.1';
  return { port, host, url: (bound) => `http://${urlHost(host)}:${bound}` };
}

/** Two listeners of refusals as one: the `--log-refusals` line, and the one `auth.ts` exports. */
function bothListeners(first: ServeOptions['onRefused'], second: ServeOptions['onRefused']): ServeOptions['onRefused'] {
  if (first === undefined || second === undefined) return first ?? second;
  return (refusal) => {
    first(refusal);
    return second(refusal);
  };
}

/**
 * Serves the agent on PORT and HOST from the environment, prints where (unless `banner` is
 * false), and closes gracefully on SIGTERM/SIGINT. With no auth list and no AGENT_API_TOKEN the
 * agent routes refuse everyone (401) rather than run open; an auth.ts exporting `anonymous()`
 * serves openly on purpose. `routeOptions` are the directory's (auth.ts and agentward.json):
 * its limits are counted in PostgreSQL with AGENT_DATABASE_URL unless they name a store.
 */
export async function startAgentServer(
  options: {
    name: string;
    agent: Agent;
    auth: readonly AuthFn[] | undefined;
    basePath: string;
    routeOptions?: DirectoryRouteOptions;
    dir?: string;
    /** `agentward dev`'s server only: answers say who they ran as, for the playground (dev-inspect.ts). */
    inspector?: boolean;
    banner?: boolean;
  } & ServerFlags,
): Promise<AgentServer> {
  const { name, agent, basePath, quiet, playground = false, logRefusals = false, inspector = false } = options;
  const say = options.banner === false ? () => undefined : (line: string) => console.log(line);
  const { limits: limitsOption, onRefused, ...route } = options.routeOptions ?? {};
  // The directory's limits, counted in PostgreSQL with AGENT_DATABASE_URL (shared by the instances), else in memory.
  const store =
    limitsOption === undefined || options.dir === undefined || 'store' in limitsOption
      ? undefined
      : await limitStoreOf(options.dir, say);
  const limits = limitsOption === undefined ? undefined : { ...limitsOption, ...(store !== undefined && { store }) };
  if (options.auth === undefined && !process.env.AGENT_API_TOKEN) {
    console.warn(
      'agentward: no auth configured (no auth.ts or auth.js, no apiToken in agentward.json, no AGENT_API_TOKEN): every agent route answers 401',
    );
  }
  const auth = options.auth ?? [NO_AUTH_CONFIGURED];
  const { port, host } = listenAddress();
  const serveOptions: ServeOptions = {
    ...route,
    agent,
    auth,
    basePath,
    limits,
    port,
    host,
    log: quiet ? 'off' : undefined,
    playground,
    onRefused: bothListeners(logRefusals ? printRefusal : undefined, onRefused),
  };
  if (inspector) Object.assign(serveOptions, { [DEV_INSPECT]: true });
  const server = await serve(serveOptions).catch((error: unknown) => {
    throw (error as { code?: unknown } | null)?.code === 'EADDRINUSE' ? new PortInUseError(port) : error;
  });
  // dev stops its server at every restart: one line says so there, dev's (design §31).
  if (inspector) closeQuietlyOnSignals(server);
  else closeOnSignals(server);
  say(`agentward: ${name} listening on ${server.url}${basePath}`);
  if (route.mcp !== undefined && route.mcp !== false) say(`agentward: MCP server at ${server.url}${basePath}/mcp`);
  if (playground)
    say(
      `agentward: playground at ${server.url}${basePath}/playground (paste an API token there${inspector ? '; it shows who each request ran as' : ''})`,
    );
  return server;
}

/** `closeOnSignals` without its line: dev's server is stopped at every restart. */
function closeQuietlyOnSignals(server: AgentServer): void {
  const onSignal = () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/**
 * Serves an agent directory with its auth list (its auth file, else the token `init` baked in,
 * plus AGENT_API_TOKEN) and its route options. A directory with no auth at all is not served
 * open: a token is generated for this run and shown once (under `dev`, the one token of the dev
 * run, shown with the banner). (To serve openly on purpose, export `anonymous()` from auth.ts.)
 */
export async function serveDirectory(folder: string, flags: ServerFlags, dev?: DevRun): Promise<AgentServer> {
  const say = dev?.banner === false ? () => undefined : (line: string) => console.log(line);
  await migrateDatabase(folder, say);
  const { agent, auth, options, manifest, info } = await loadAgentDir(folder);
  let list: readonly AuthFn[] | undefined = directoryAuth(auth, info.settings.apiToken);
  let credential: string | undefined;
  let generated: string | undefined;
  if (process.env.AGENT_API_TOKEN) {
    credential = '"Authorization: Bearer $AGENT_API_TOKEN"';
  } else if (auth === undefined && info.settings.apiToken !== undefined && !folder.includes("'")) {
    credential = `"Authorization: Bearer $(node -p 'require(${JSON.stringify(join(folder, SETTINGS_FILE))}).apiToken')"`;
  } else if (list === undefined) {
    // Under dev, the token is made once for the whole dev run: a save must not log the playground out.
    generated = dev?.token ?? newApiToken();
    list = [apiToken(generated)];
    credential = `'Authorization: Bearer ${generated}'`;
  }
  const server = await startAgentServer({
    name: manifest.name,
    agent,
    auth: list,
    basePath: manifest.basePath,
    routeOptions: options,
    dir: folder,
    ...flags,
    inspector: dev !== undefined,
    banner: dev?.banner !== false,
  });
  if (generated !== undefined) {
    say(
      `agentward: no auth configured (no auth.ts, no token in ${SETTINGS_FILE}, no AGENT_API_TOKEN); generated an API token for this ${dev === undefined ? 'run' : 'dev run (kept across restarts)'}:`,
    );
    say(`  ${generated}`);
  }
  say('try:');
  say(
    `  curl -X POST ${server.url}${manifest.basePath} -H 'Content-Type: application/json'${credential ? ` -H ${credential}` : ''} -d '{"message":"hello"}'`,
  );
  if (credential === undefined) say('  (add the credentials your auth.ts accepts)');
  return server;
}

/** What `server.js` of a `node-server` or `docker` build runs, given the URL of its folder. */
export async function runBuiltServer(outUrl: URL): Promise<AgentServer> {
  const manifest = JSON.parse(await readFile(new URL('manifest.json', outUrl), 'utf8')) as AgentManifest;
  const settings = JSON.parse(await readFile(new URL(`app/${SETTINGS_FILE}`, outUrl), 'utf8')) as ProjectSettings;
  const hasAuthFile = manifest.authBy.includes('auth.ts') || manifest.authBy.includes('auth.js');
  const authFile = hasAuthFile ? fileURLToPath(new URL('app/auth.js', outUrl)) : undefined;
  await migrateDatabase(fileURLToPath(outUrl));
  const { agent, auth, options } = await loadAgentFiles(fileURLToPath(new URL('app/agent.js', outUrl)), authFile);
  // A build holds the digest of the baked token, never the token.
  const baked = settings.apiTokenSha256 === undefined ? undefined : [apiTokenDigest(settings.apiTokenSha256)];
  // The playground only when asked: AGENT_PLAYGROUND=on (what `agentward start <out> --playground` sets).
  return startAgentServer({
    name: manifest.name,
    agent,
    auth: auth ?? baked,
    basePath: manifest.basePath,
    routeOptions: directoryRouteOptions(options, settings, {
      authFile: authFile ?? 'auth.js',
      settingsFile: fileURLToPath(new URL(`app/${SETTINGS_FILE}`, outUrl)),
    }),
    dir: fileURLToPath(outUrl),
    playground: process.env.AGENT_PLAYGROUND === 'on',
  });
}

/** How a build output of each target runs. */
const RUN_HINTS: Readonly<Record<BuildTarget, string>> = {
  'node-server': 'node server.js',
  docker: 'docker build -t my-agent . && docker run -p 3000:3000 my-agent',
  'cloudflare-worker': 'npx wrangler dev (locally) or npx wrangler deploy',
};

/**
 * `agentward start <dir|out>`: serves an agent directory from source, or runs a build output
 * (a folder with `manifest.json` and `server.js`) with its own copy of agentward.
 */
export async function startAgentDir(dir: string, flags: ServerFlags = {}): Promise<void> {
  const folder = resolve(dir);
  if (!existsSync(folder)) throw new CliError('CLI_DIRECTORY', `${folder}: does not exist`);
  const target = await builtOutputTarget(folder);
  if (target !== undefined) return startBuiltOutput(folder, target, flags);
  // An empty AGENT_API_TOKEN stops the start here, before a token is generated for the run.
  readApiTokenEnv();
  // A file store of the directory keeps its sessions in the directory (dev restarts keep them).
  process.env.AGENT_DATA_DIR ||= dataDirOf(folder);
  if (flags.verbose) onProviderFailure(printProviderFailure);
  await serveDirectory(folder, flags);
}

/** Runs a build output's server.js in this process; `--verbose` is heard through the output's own copy of agentward. */
async function startBuiltOutput(folder: string, target: BuildTarget, flags: ServerFlags): Promise<void> {
  const serverFile = join(folder, 'server.js');
  if (!existsSync(serverFile)) {
    throw new CliError(
      'CLI_DIRECTORY',
      `${folder}: is a ${target} build output, which agentward start does not run; run it with: cd ${folder} && ${RUN_HINTS[target]}`,
    );
  }
  if (flags.quiet) process.env.AGENT_LOG = 'off';
  if (flags.playground) process.env.AGENT_PLAYGROUND = 'on';
  if (flags.verbose) {
    // The output runs its own copy of agentward, in this process: its listener is the one to install.
    const own = pathToFileURL(join(folder, 'agentward', 'agent', 'provider-detail.js')).href;
    ((await import(own)) as { onProviderFailure: typeof onProviderFailure }).onProviderFailure(printProviderFailure);
  }
  await import(pathToFileURL(serverFile).href);
}
