import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { isPlainObject } from '../agent/tools.ts';
import { AuthConfigError, B64TOKEN, checkOptionNames } from '../auth/internal.ts';
import { readLimits, type LimitWindow } from '../http/limits.ts';

import { AGENT_FILE, AUTH_FILES, DEFAULT_BASE_PATH, SETTINGS_FILE, SPEC_FILE, type BuildTarget } from './names.ts';

export { AGENT_FILE, AUTH_FILES, BUILD_TARGETS, DEFAULT_BASE_PATH, SETTINGS_FILE, SPEC_FILE } from './names.ts';
export type { BuildTarget } from './names.ts';

/** `agentward.json`: project settings. `apiToken` is the token `init` baked in. */
export interface ProjectSettings {
  name?: string;
  basePath?: string;
  apiToken?: string;
  /** In a build output only: the lowercase hex SHA-256 digest of `apiToken`, which is not copied. */
  apiTokenSha256?: string;
  /** Serve the agent as a remote MCP server at `POST <base>/mcp` too (design §18). */
  mcp?: boolean;
  /** Limits per principal (design §22); the store is the server's (PostgreSQL with AGENT_DATABASE_URL), the address the socket's. */
  limits?: ProjectLimits;
}

/** `"limits"` of agentward.json: `serve()`'s `limits` without what only code can give (a store, a function). */
export interface ProjectLimits {
  requests?: LimitWindow;
  concurrent?: number;
  tokens?: LimitWindow;
  failures?: LimitWindow;
}

/** `agent.json`: the declarative spec, the part of an agent that the Workers target serves. */
export interface AgentSpec {
  name: string;
  instructions?: string;
  model?: unknown;
  [field: string]: unknown;
}

/** `manifest.json` of a build; the resolver describes a source directory the same way, with target `'source'`. */
export interface AgentManifest {
  name: string;
  target: BuildTarget | 'source';
  /** True when the server refuses calls without credentials (`authBy` says how). */
  auth: boolean;
  /**
   * What protects it: `"auth.ts"` or `"auth.js"` (the directory's auth list), `"api-token"` (the
   * token `init` baked in, which a build keeps only as a digest), or `"AGENT_API_TOKEN"` alone
   * (the environment variable, or the cloudflare-worker's secret binding: without it every call
   * is refused). A node server also accepts `AGENT_API_TOKEN` beside an auth file or baked token.
   */
  authBy: string[];
  /** The file that runs: `server.js`, `worker.js`, or `agent.ts` for a source directory. */
  main: string;
  basePath: string;
  /** cloudflare-worker only: the model the worker runs, as agent.json declares it (absent there: echo). */
  model?: { provider: 'echo' } | { provider: 'openai-compatible'; baseURL: string; model: string };
  /** cloudflare-worker only: the names of the secret bindings it reads (`AGENT_API_TOKEN`, and `MODEL_API_KEY` for a hosted model). */
  secrets?: string[];
  /** cloudflare-worker only: Durable Object binding name → class name, as wrangler.toml declares them. */
  durableObjects?: Record<string, string>;
}

/** What the files of an agent directory say, read and checked, before any of its code runs. */
export interface AgentDir {
  dir: string;
  agentFile: string;
  authFile: string | undefined;
  settings: ProjectSettings;
  spec: AgentSpec | undefined;
  name: string;
  basePath: string;
}

/** One or more path segments of URL-safe characters, no trailing slash: `/agent`, `/v1/support`. */
const BASE_PATH = /^(?:\/[A-Za-z0-9._~-]+)+$/;

async function readJsonFile(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AuthConfigError(`${file}: not valid JSON (${(error as Error).message})`, { cause: error });
  }
}

/** A name is one line of text: no control character, no line or paragraph separator (U+2028, U+2029). */
const NOT_A_NAME = /[\p{Cc}\p{Zl}\p{Zp}]/u;

function checkName(name: unknown, file: string): void {
  if (typeof name !== 'string' || name.length === 0)
    throw new AuthConfigError(`${file}: "name" must be a non-empty string`);
  if (NOT_A_NAME.test(name))
    throw new AuthConfigError(
      `${file}: "name" must be one line of text, without control characters or line separators (U+2028, U+2029)`,
    );
}

const SETTINGS_FIELDS = Object.freeze(['name', 'basePath', 'apiToken', 'apiTokenSha256', 'mcp', 'limits']);
const SPEC_FIELDS = Object.freeze(['name', 'instructions', 'model']);

/** Options of `serve()` that agentward.json does not hold: `auth.ts` exports them (design §31). */
const AUTH_FILE_KEYS = Object.freeze(['auth', 'scopes', 'scopeImplies', 'onRefused', 'protectedResource', 'telemetry']);

function checkSettings(value: unknown, file: string): ProjectSettings {
  if (!isPlainObject(value)) throw new AuthConfigError(`${file}: must be a JSON object`);
  const inAuthFile = Object.keys(value).find((key) => AUTH_FILE_KEYS.includes(key));
  if (inAuthFile !== undefined) {
    const example = inAuthFile === 'auth' ? 'export default [jwt({ … })]' : `export const ${inAuthFile} = …`;
    throw new AuthConfigError(
      `${file}: "${inAuthFile}" belongs in auth.ts (${example}): agentward.json holds data only (${SETTINGS_FIELDS.filter((key) => key !== 'apiTokenSha256').join(', ')}); auth.ts holds the auth list and the route options beside it (scopes, scopeImplies, mcp, onRefused, protectedResource, limits, telemetry)`,
    );
  }
  // A misspelled "apiToken" would leave the server without its token.
  checkOptionNames(file, value, SETTINGS_FIELDS, (message) => new AuthConfigError(message));
  const { name, basePath, apiToken, mcp, limits } = value;
  if (mcp !== undefined && typeof mcp !== 'boolean') throw new AuthConfigError(`${file}: "mcp" must be true or false`);
  if (limits !== undefined) checkProjectLimits(limits, file);
  if (name !== undefined) checkName(name, file);
  if (basePath !== undefined && (typeof basePath !== 'string' || !BASE_PATH.test(basePath))) {
    throw new AuthConfigError(
      `${file}: "basePath" must be a path such as "/agent" (segments of letters, digits, -._~; no trailing slash)`,
    );
  }
  // The message never quotes the token.
  if (apiToken !== undefined && (typeof apiToken !== 'string' || !B64TOKEN.test(apiToken))) {
    throw new AuthConfigError(`${file}: "apiToken" must be a non-empty RFC 6750 b64token`);
  }
  return value as ProjectSettings;
}

/** `"limits"`: what `serve()`'s `limits` takes, checked the same way, but the store and the address, which only code can give. */
export function checkProjectLimits(limits: unknown, file: string): ProjectLimits {
  if (isPlainObject(limits) && ('store' in limits || 'clientAddress' in limits)) {
    throw new AuthConfigError(
      `${file}: "limits" takes requests, concurrent, tokens and failures; a store and clientAddress are code: give them to serve() (the server keeps its counters in PostgreSQL when AGENT_DATABASE_URL is set)`,
    );
  }
  readLimits(file, limits, true);
  return limits as ProjectLimits;
}

function checkSpec(value: unknown, file: string): AgentSpec {
  if (!isPlainObject(value)) throw new AuthConfigError(`${file}: must be a JSON object`);
  checkOptionNames(file, value, SPEC_FIELDS, (message) => new AuthConfigError(message));
  checkName(value.name, file);
  if (value.instructions !== undefined && typeof value.instructions !== 'string')
    throw new AuthConfigError(`${file}: "instructions" must be a string`);
  return value as AgentSpec;
}

/**
 * What protects a node server of this directory: its auth file, else the token `init` baked in
 * (unused beside an auth file), else only `AGENT_API_TOKEN`: without it every call is refused.
 */
export function authSources(info: AgentDir): string[] {
  if (info.authFile !== undefined) return [basename(info.authFile)];
  return info.settings.apiToken === undefined ? ['AGENT_API_TOKEN'] : ['api-token'];
}

/** The auth file of a directory, if any; both `auth.ts` and `auth.js` is ambiguous and refused. */
export function findAuthFile(dir: string): string | undefined {
  const present = AUTH_FILES.map((name) => join(dir, name)).filter((file) => existsSync(file));
  if (present.length > 1) throw new AuthConfigError(`${dir}: holds both auth.ts and auth.js; keep one of them`);
  return present[0];
}

/** Reads and checks the files of an agent directory: `agent.ts` must exist; the JSON files are optional. */
export async function readAgentDir(directory: string): Promise<AgentDir> {
  const dir = resolve(directory);
  const agentFile = join(dir, AGENT_FILE);
  if (!existsSync(agentFile)) {
    throw new AuthConfigError(
      `${agentFile}: not found; an agent directory needs agent.ts whose default export is the agent`,
    );
  }
  const authFile = findAuthFile(dir);
  const settingsFile = join(dir, SETTINGS_FILE);
  const settings = existsSync(settingsFile) ? checkSettings(await readJsonFile(settingsFile), settingsFile) : {};
  const specFile = join(dir, SPEC_FILE);
  const spec = existsSync(specFile) ? checkSpec(await readJsonFile(specFile), specFile) : undefined;
  return {
    dir,
    agentFile,
    authFile,
    settings,
    spec,
    name: settings.name ?? spec?.name ?? basename(dir),
    basePath: settings.basePath ?? DEFAULT_BASE_PATH,
  };
}
