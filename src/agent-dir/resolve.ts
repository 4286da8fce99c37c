import { readFileSync } from 'node:fs';
import nodeModule from 'node:module';
import { join, resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Agent } from '../agent/types.ts';
import { AuthConfigError, kindOf, type AuthFn } from '../auth/internal.ts';
import { AGENT_FILE, authSources, findAuthFile, readAgentDir, SETTINGS_FILE } from './agent-dir.ts';
import type { AgentDir, AgentManifest } from './agent-dir.ts';
import { errorLocation, loadError } from './load-error.ts';
import { authFileOptions, directoryRouteOptions, type DirectoryRouteOptions } from './route-options.ts';

/** The entry points of agentward (package.json `exports`), as paths under `src/` without extension. */
export const AGENTWARD_ENTRIES: ReadonlyMap<string, string> = new Map([
  ['agentward', 'index'],
  ['agentward/auth', 'auth/index'],
  ['agentward/node', 'node'],
  ['agentward/postgres', 'postgres/index'],
  ['agentward/cloudflare', 'cloudflare/index'],
]);

const sourceRoot = new URL('../', import.meta.url);
const ownExtension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
let hooked = false;
/** The URLs (ending in `/`) of the agent directories loaded, whose modules are ES modules. */
const agentDirs = new Set<string>();

/** CommonJS formats Node picked from a surrounding package.json (`"type": "commonjs"`), and what the agent directory means. */
const AS_MODULE: Readonly<Record<string, string>> = { commonjs: 'module', 'commonjs-typescript': 'module-typescript' };

function inAgentDir(url: string): boolean {
  if (!url.startsWith('file:') || /\.c[jt]s$/.test(url) || url.includes('/node_modules/')) return false;
  for (const dir of agentDirs) if (url.startsWith(dir)) return true;
  return false;
}

/**
 * Makes `agentward`, `agentward/auth` and `agentward/node` resolve to the running copy of
 * agentward from any directory, installed or not, so the agent and the server share one copy;
 * and loads the `.ts`/`.js` files of an agent directory as ES modules whatever the surrounding
 * package.json says (a fresh `npm init -y` project is `"type": "commonjs"`), as the build does.
 */
function resolveAgentwardToThisCopy(dir: string): void {
  const dirUrl = pathToFileURL(`${dir}/`).href;
  agentDirs.add(dirUrl);
  const urls = new Map(
    [...AGENTWARD_ENTRIES].map(([specifier, entry]) => [specifier, new URL(entry + ownExtension, sourceRoot).href]),
  );
  // Read at call time: module.registerHooks arrived in Node 22.15.
  if (typeof nodeModule.registerHooks === 'function') {
    if (hooked) return;
    hooked = true;
    nodeModule.registerHooks({
      resolve(specifier, context, nextResolve) {
        const url = urls.get(specifier);
        return url === undefined ? nextResolve(specifier, context) : { url, shortCircuit: true };
      },
      load(url, context, nextLoad) {
        const loaded = nextLoad(url, context);
        const format = AS_MODULE[loaded.format ?? ''];
        if (format === undefined || !inAgentDir(url)) return loaded;
        return { ...loaded, format, source: loaded.source ?? readFileSync(new URL(url)) };
      },
    });
    return;
  }
  // Node 22.13 and 22.14: the same hooks, run off-thread by module.register, one per directory.
  const hook = `import { readFileSync } from 'node:fs';
const urls = new Map(${JSON.stringify([...urls])});
const dir = ${JSON.stringify(dirUrl)};
const asModule = ${JSON.stringify(AS_MODULE)};
export async function resolve(specifier, context, nextResolve) {
  const url = urls.get(specifier);
  return url === undefined ? nextResolve(specifier, context) : { url, shortCircuit: true };
}
export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context);
  const format = asModule[loaded.format ?? ''];
  if (format === undefined || !url.startsWith(dir) || /\\.c[jt]s$/.test(url) || url.includes('/node_modules/')) return loaded;
  return { ...loaded, format, source: loaded.source ?? readFileSync(new URL(url)) };
}
`;
  nodeModule.register(`data:text/javascript,${encodeURIComponent(hook)}`);
}

async function importModule(file: string): Promise<Record<string, unknown>> {
  let module: Record<string, unknown>;
  try {
    module = await import(pathToFileURL(file).href);
  } catch (error) {
    // A helper refusing its options at import keeps its code (AGENT_AUTH_CONFIG_INVALID) and its
    // message, after the file and line that called it (`auth.ts:3:14: apiToken(): …; got undefined`).
    if ((error as { code?: unknown } | null)?.code === 'AGENT_AUTH_CONFIG_INVALID')
      throw configErrorAt(error as Error, file);
    throw loadError(error, file, () => readFileSync(file, 'utf8'));
  }
  if (!('default' in module)) throw new AuthConfigError(`${file}: has no default export`);
  return module;
}

function configErrorAt(error: Error, file: string): Error {
  // The caller's line: a frame of the directory outside node_modules (agentward may be installed there).
  const stack = (error.stack ?? '')
    .split('\n')
    .filter((line) => !line.includes('/node_modules/'))
    .join('\n');
  const location = errorLocation({ stack }, file.slice(0, file.lastIndexOf('/') + 1), file);
  if (location === undefined) return error;
  const located = new AuthConfigError(`${location.file}:${location.line}:${location.column}: ${error.message}`);
  located.cause = error;
  return located;
}

/** `file:line` of the `export default` in a module's source, or `file` when it is not found. */
function defaultExportAt(file: string): string {
  const source = readFileSync(file, 'utf8');
  const at = source.search(/^[ \t]*export\s+default\b/m);
  return at < 0 ? file : `${file}:${source.slice(0, at).split('\n').length}`;
}

/** The default export of `auth.ts`/`auth.js` as a list: the list itself, or one entry. */
export function authList(value: unknown, file: string): readonly AuthFn[] {
  if (typeof value === 'function') return Object.freeze([value as AuthFn]);
  // `export default process.env.X` with X unset (design §20): never read as "no auth".
  if (value === undefined || value === null || value === '') {
    throw new AuthConfigError(
      `${defaultExportAt(file)}: the default export (auth) is ${kindOf(value)}: an unset environment variable? Export anonymous() for an open route`,
    );
  }
  if (!Array.isArray(value)) {
    throw new AuthConfigError(
      `${file}: the default export must be the auth list (an array of entries such as jwt(), apiToken()) or one entry (a function); got ${kindOf(value)}`,
    );
  }
  value.forEach((entry, index) => {
    if (typeof entry !== 'function')
      throw new AuthConfigError(
        `${file}: entry ${index} of the default export is not an auth entry (a function); got ${kindOf(entry)}`,
      );
  });
  return Object.freeze([...value]);
}

export function checkAgent(value: unknown, file: string): Agent {
  if (typeof value !== 'object' || value === null || typeof (value as Agent).send !== 'function') {
    throw new AuthConfigError(
      `${file}: the default export must be the agent (createAgent({ ... })); got ${kindOf(value)}`,
    );
  }
  return value as Agent;
}

/**
 * Imports the agent and, when given, the auth file: its default export (the list) and its named
 * exports (the route options, design §31). A broken auth file fails first, before the agent loads.
 */
export async function loadAgentFiles(
  agentFile: string,
  authFile: string | undefined,
): Promise<{ agent: Agent; auth: readonly AuthFn[] | undefined; options: DirectoryRouteOptions }> {
  const authModule = authFile === undefined ? undefined : await importModule(authFile);
  const auth = authModule === undefined ? undefined : authList(authModule.default, authFile as string);
  const options = authModule === undefined ? {} : authFileOptions(authModule, authFile as string);
  const agent = checkAgent((await importModule(agentFile)).default, agentFile);
  return { agent, auth, options };
}

export function sourceManifest(info: AgentDir): AgentManifest {
  const authBy = authSources(info);
  return {
    name: info.name,
    target: 'source',
    auth: authBy.length > 0,
    authBy,
    main: AGENT_FILE,
    basePath: info.basePath,
  };
}

/** What `resolveAgentDir` returns: the agent, the auth list of the directory, its route options, its manifest. */
export interface ResolvedAgentDir {
  agent: Agent;
  /** The list from `auth.ts`/`auth.js` (one entry becomes a list of one); `undefined` without the file. */
  auth: readonly AuthFn[] | undefined;
  /**
   * The other options of `serve()` the directory gives: `auth.ts`'s named exports (`scopes`,
   * `scopeImplies`, `mcp`, `onRefused`, `protectedResource`, `limits`, `telemetry`) and
   * `agentward.json`'s `mcp` and `limits`; `{}` when it gives none.
   */
  options: DirectoryRouteOptions;
  manifest: AgentManifest;
}

/**
 * Loads an agent directory: `agent.ts` (default export: the agent) and the optional `auth.ts`
 * or `auth.js` (default export: the list or one entry; named exports: the route options).
 * Errors name the file at fault; an `AuthConfigError` thrown by a helper at import keeps its
 * code and message.
 * @example
 * const { agent, auth, options, manifest } = await resolveAgentDir('./my-agent');
 * await serve({ agent, auth, ...options, basePath: manifest.basePath });
 */
export async function resolveAgentDir(dir: string): Promise<ResolvedAgentDir> {
  const { agent, auth, options, manifest } = await loadAgentDir(dir);
  return { agent, auth, options, manifest };
}

/** `resolveAgentDir` plus what the directory's files said (the baked token among them), for the server. */
export async function loadAgentDir(dir: string): Promise<ResolvedAgentDir & { info: AgentDir }> {
  const info = await readAgentDir(dir);
  resolveAgentwardToThisCopy(info.dir);
  const loaded = await loadAgentFiles(info.agentFile, info.authFile);
  const options = directoryRouteOptions(loaded.options, info.settings, {
    authFile: info.authFile,
    settingsFile: join(info.dir, SETTINGS_FILE),
  });
  return { agent: loaded.agent, auth: loaded.auth, options, manifest: sourceManifest(info), info };
}

/**
 * The `auth.ts` (or `auth.js`) module of an agent directory, loaded as `start` loads it (so
 * `agentward` resolves to this copy) but without checking its exports: `agentward audit` reads
 * its `audit` export from it. `undefined` when the directory has no auth file.
 */
export async function loadAuthFile(
  dir: string,
): Promise<{ file: string; exports: Record<string, unknown> } | undefined> {
  const folder = resolvePath(dir);
  const file = findAuthFile(folder);
  if (file === undefined) return undefined;
  resolveAgentwardToThisCopy(folder);
  return { file, exports: await importModule(file) };
}
