import nodeModule from 'node:module';
import { pathToFileURL } from 'node:url';
import type { Agent } from '../agent/types.ts';
import type { AuthFn } from '../auth/types.ts';
import { AGENT_FILE, readAgentDir } from './agent-dir.ts';
import type { AgentDir, AgentManifest } from './agent-dir.ts';

/** The entry points of agentgate (package.json `exports`), as paths under `src/` without extension. */
export const AGENTGATE_ENTRIES: ReadonlyMap<string, string> = new Map([
  ['agentgate', 'index'],
  ['agentgate/auth', 'auth/index'],
  ['agentgate/node', 'node/index'],
]);

const sourceRoot = new URL('../', import.meta.url);
const ownExtension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
let hooked = false;

/**
 * Makes `agentgate`, `agentgate/auth` and `agentgate/node` resolve to the running copy of
 * agentgate from any directory, installed or not, so the agent and the server share one copy.
 */
function resolveAgentgateToThisCopy(): void {
  if (hooked) return;
  hooked = true;
  const urls = new Map([...AGENTGATE_ENTRIES].map(([specifier, entry]) => [specifier, new URL(entry + ownExtension, sourceRoot).href]));
  // Read at call time: module.registerHooks arrived in Node 22.15.
  if (typeof nodeModule.registerHooks === 'function') {
    nodeModule.registerHooks({
      resolve(specifier, context, nextResolve) {
        const url = urls.get(specifier);
        return url === undefined ? nextResolve(specifier, context) : { url, shortCircuit: true };
      },
    });
    return;
  }
  // Node 22.13 and 22.14: the same hook, run off-thread by module.register.
  const hook = `const urls = new Map(${JSON.stringify([...urls])});
export async function resolve(specifier, context, nextResolve) {
  const url = urls.get(specifier);
  return url === undefined ? nextResolve(specifier, context) : { url, shortCircuit: true };
}
`;
  nodeModule.register(`data:text/javascript,${encodeURIComponent(hook)}`);
}

/** What a value is, for an error message; never the value itself (it could be a secret). */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

async function importDefault(file: string): Promise<unknown> {
  let module: Record<string, unknown>;
  try {
    module = await import(pathToFileURL(file).href);
  } catch (error) {
    // A helper refusing its options at import keeps its code and message (AGENT_AUTH_CONFIG_INVALID).
    if ((error as { code?: unknown } | null)?.code === 'AGENT_AUTH_CONFIG_INVALID') throw error;
    throw new Error(`${file}: cannot be loaded: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }
  if (!('default' in module)) throw new Error(`${file}: has no default export`);
  return module.default;
}

/** The default export of `auth.ts`/`auth.js` as a list: the list itself, or one entry. */
export function authList(value: unknown, file: string): readonly AuthFn[] {
  if (typeof value === 'function') return Object.freeze([value as AuthFn]);
  if (!Array.isArray(value)) {
    throw new Error(`${file}: the default export must be the auth list (an array of entries such as jwt(), apiToken()) or one entry (a function); got ${kindOf(value)}`);
  }
  value.forEach((entry, index) => {
    if (typeof entry !== 'function') throw new Error(`${file}: entry ${index} of the default export is not an auth entry (a function); got ${kindOf(entry)}`);
  });
  return Object.freeze([...value]);
}

export function checkAgent(value: unknown, file: string): Agent {
  if (typeof value !== 'object' || value === null || typeof (value as Agent).send !== 'function') {
    throw new Error(`${file}: the default export must be the agent (createAgent({ ... })); got ${kindOf(value)}`);
  }
  return value as Agent;
}

/** Imports the agent and, when given, the auth file; a broken auth file fails first, before the agent loads. */
export async function loadAgentFiles(agentFile: string, authFile: string | undefined): Promise<{ agent: Agent; auth: readonly AuthFn[] | undefined }> {
  const auth = authFile === undefined ? undefined : authList(await importDefault(authFile), authFile);
  const agent = checkAgent(await importDefault(agentFile), agentFile);
  return { agent, auth };
}

export function sourceManifest(info: AgentDir): AgentManifest {
  return { name: info.name, target: 'source', auth: info.authFile !== undefined, main: AGENT_FILE, basePath: info.basePath };
}

/** What `resolveAgentDir` returns: the agent, the auth list of the directory, its manifest. */
export interface ResolvedAgentDir {
  agent: Agent;
  /** The list from `auth.ts`/`auth.js` (one entry becomes a list of one); `undefined` without the file. */
  auth: readonly AuthFn[] | undefined;
  manifest: AgentManifest;
}

/**
 * Loads an agent directory: `agent.ts` (default export: the agent) and the optional `auth.ts`
 * or `auth.js` (default export: the list or one entry). Errors name the file at fault; an
 * `AuthConfigError` thrown by a helper at import keeps its code and message.
 * @example
 * const { agent, auth, manifest } = await resolveAgentDir('./my-agent');
 * await serve({ agent, auth, basePath: manifest.basePath });
 */
export async function resolveAgentDir(dir: string): Promise<ResolvedAgentDir> {
  const { agent, auth, manifest } = await loadAgentDir(dir);
  return { agent, auth, manifest };
}

/** `resolveAgentDir` plus what the directory's files said (the baked token among them), for the server. */
export async function loadAgentDir(dir: string): Promise<ResolvedAgentDir & { info: AgentDir }> {
  const info = await readAgentDir(dir);
  resolveAgentgateToThisCopy();
  const { agent, auth } = await loadAgentFiles(info.agentFile, info.authFile);
  return { agent, auth, manifest: sourceManifest(info), info };
}
