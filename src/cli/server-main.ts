import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Agent } from '../agent/types.ts';
import { apiToken, type Refusal, type AuthFn } from '../auth/internal.ts';
import { printable } from '../node/request-log.ts';
import { closeOnSignals, serve, urlHost } from '../node/server.ts';
import type { AgentServer, ServeOptions } from '../node/server.ts';
import { DEV_INSPECT } from '../node/dev-inspect.ts';
import { BUILD_TARGETS, SETTINGS_FILE } from '../agent-dir/agent-dir.ts';
import type { AgentManifest, BuildTarget, ProjectLimits, ProjectSettings } from '../agent-dir/agent-dir.ts';
import { limitStoreOf, migrateDatabase } from './database.ts';
import { loadAgentDir, loadAgentFiles } from '../agent-dir/resolve.ts';
import { apiTokenDigest } from '../agent-dir/token-digest.ts';
import { NO_AUTH_CONFIGURED } from '../cloudflare/spec-worker.ts';

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

/** What the CLI's switches ask of the server: no request log, the playground. */
export interface ServerFlags {
  quiet?: boolean;
  playground?: boolean;
  /** Print why each bearer token was refused (design §12): the reason, kid and iss, never the token. */
  logRefusals?: boolean;
  /** `agentward dev`'s server child only: answers say who they ran as, for the playground (dev-inspect.ts). */
  dev?: boolean;
}

/** One line per refused token (`dev`, `--log-refusals`): kid and iss come from the client, so they are escaped. */
export function printRefusal(r: Refusal): void {
  console.log(
    `agentward: ${r.entry} refused a bearer token: ${r.reason}${r.kid === undefined ? '' : ` kid="${printable(r.kid)}"`}${r.iss === undefined ? '' : ` iss="${printable(r.iss)}"`}`,
  );
}

/** Where `start` and `dev` keep a directory's sessions when AGENT_DATA_DIR is not set. */
export const dataDirOf = (dir: string) => join(dir, '.data');

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

/** The exit code of `dev`'s server child whose port is taken: `dev` then exits 1 instead of waiting for a file change. */
export const DEV_CHILD_PORT_IN_USE = 75;
/** The environment variable through which `dev` hands its children the one token of the dev run (a directory without auth). */
export const DEV_RUN_TOKEN = 'AGENTWARD_DEV_RUN_TOKEN';

function portFrom(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new Error('PORT must be an integer from 0 to 65535');
  return Number(value);
}

/** Where `start` and `dev` listen: PORT (default 3000) and HOST (default 127.0.0.1) from the environment. */
export function listenAddress(): { port: number; host: string; url(port: number): string } {
  const port = portFrom(process.env.PORT) ?? DEFAULT_PORT;
  const host = process.env.HOST || '127.0.0.1';
  return { port, host, url: (bound) => `http://${urlHost(host)}:${bound}` };
}

/**
 * Serves the agent on PORT and HOST from the environment, prints where, and closes gracefully
 * on SIGTERM/SIGINT. With no auth list and no AGENT_API_TOKEN the agent routes refuse everyone
 * (401) rather than run open; an auth.ts exporting `anonymous()` serves openly on purpose.
 */
export async function startAgentServer(
  options: {
    name: string;
    agent: Agent;
    auth: readonly AuthFn[] | undefined;
    basePath: string;
    mcp?: boolean;
    limits?: ProjectLimits;
    dir?: string;
    onRefused?: ServeOptions['onRefused'];
  } & ServerFlags,
): Promise<AgentServer> {
  const { name, agent, basePath, mcp = false, quiet, playground = false, logRefusals = false, dev = false } = options;
  // agentward.json's limits, counted in PostgreSQL with AGENT_DATABASE_URL (shared by the instances), else in memory.
  const store = options.limits === undefined || options.dir === undefined ? undefined : await limitStoreOf(options.dir);
  const limits =
    options.limits === undefined ? undefined : { ...options.limits, ...(store !== undefined && { store }) };
  if (options.auth === undefined && !process.env.AGENT_API_TOKEN) {
    console.warn(
      'agentward: no auth configured (no auth.ts or auth.js, no apiToken in agentward.json, no AGENT_API_TOKEN): every agent route answers 401',
    );
  }
  const auth = options.auth ?? [NO_AUTH_CONFIGURED];
  const log = quiet ? 'off' : undefined;
  const { port, host } = listenAddress();
  const serveOptions: ServeOptions = {
    agent,
    auth,
    basePath,
    mcp,
    limits,
    port,
    host,
    log,
    playground,
    onRefused: options.onRefused ?? (logRefusals ? printRefusal : undefined),
  };
  if (dev) Object.assign(serveOptions, { [DEV_INSPECT]: true });
  const server = await serve(serveOptions).catch((error: unknown) => {
    throw (error as { code?: unknown } | null)?.code === 'EADDRINUSE' ? new PortInUseError(port) : error;
  });
  closeOnSignals(server);
  console.log(`agentward: ${name} listening on ${server.url}${basePath}`);
  if (mcp) console.log(`agentward: MCP server at ${server.url}${basePath}/mcp`);
  if (playground)
    console.log(
      `agentward: playground at ${server.url}${basePath}/playground (paste an API token there${dev ? '; it shows who each request ran as' : ''})`,
    );
  return server;
}

/** What `server.js` of a `node-server` or `docker` build runs, given the URL of its folder. */
export async function runBuiltServer(outUrl: URL): Promise<AgentServer> {
  const manifest = JSON.parse(await readFile(new URL('manifest.json', outUrl), 'utf8')) as AgentManifest;
  const settings = JSON.parse(await readFile(new URL(`app/${SETTINGS_FILE}`, outUrl), 'utf8')) as ProjectSettings;
  const hasAuthFile = manifest.authBy.includes('auth.ts') || manifest.authBy.includes('auth.js');
  const authFile = hasAuthFile ? fileURLToPath(new URL('app/auth.js', outUrl)) : undefined;
  await migrateDatabase(fileURLToPath(outUrl));
  const { agent, auth } = await loadAgentFiles(fileURLToPath(new URL('app/agent.js', outUrl)), authFile);
  // A build holds the digest of the baked token, never the token.
  const baked = settings.apiTokenSha256 === undefined ? undefined : [apiTokenDigest(settings.apiTokenSha256)];
  // The playground only when asked: AGENT_PLAYGROUND=on (what `agentward start <out> --playground` sets).
  return startAgentServer({
    name: manifest.name,
    agent,
    auth: auth ?? baked,
    basePath: manifest.basePath,
    mcp: settings.mcp === true,
    limits: settings.limits,
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
  const target = await builtOutputTarget(folder);
  const serverFile = join(folder, 'server.js');
  if (target !== undefined && !existsSync(serverFile)) {
    throw new Error(
      `${folder}: is a ${target} build output, which agentward start does not run; run it with: cd ${folder} && ${RUN_HINTS[target]}`,
    );
  }
  if (target !== undefined) {
    if (flags.quiet) process.env.AGENT_LOG = 'off';
    if (flags.playground) process.env.AGENT_PLAYGROUND = 'on';
    await import(pathToFileURL(serverFile).href);
    return;
  }
  await migrateDatabase(folder);
  const { agent, auth, manifest, info } = await loadAgentDir(folder);
  await startAgentServer({
    name: manifest.name,
    agent,
    auth: directoryAuth(auth, info.settings.apiToken),
    basePath: manifest.basePath,
    mcp: info.settings.mcp === true,
    limits: info.settings.limits,
    dir: folder,
    ...flags,
  });
}
