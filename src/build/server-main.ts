import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Agent } from '../agent/types.ts';
import { apiToken } from '../auth/api-token.ts';
import type { AuthFn } from '../auth/types.ts';
import { closeOnSignals, serve } from '../node/server.ts';
import type { AgentServer, ServeOptions } from '../node/server.ts';
import { SETTINGS_FILE } from './agent-dir.ts';
import type { AgentManifest, ProjectSettings } from './agent-dir.ts';
import { loadAgentDir, loadAgentFiles } from './resolve.ts';
import { NO_AUTH_CONFIGURED } from './spec-worker.ts';

/**
 * The list the server is given: the auth file's list when there is one (the baked token is
 * then not used); otherwise the token `init` baked into agentgate.json. `serve()` appends
 * `apiToken(AGENT_API_TOKEN)` to either.
 */
export function directoryAuth(auth: readonly AuthFn[] | undefined, bakedToken: string | undefined): readonly AuthFn[] | undefined {
  if (auth !== undefined) return auth;
  return bakedToken === undefined ? undefined : [apiToken(bakedToken)];
}

function portFrom(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new Error('PORT must be an integer from 0 to 65535');
  return Number(value);
}

/**
 * Serves the agent on PORT and HOST from the environment, prints where, and closes gracefully
 * on SIGTERM/SIGINT. With no auth list and no AGENT_API_TOKEN the agent routes refuse everyone
 * (401) rather than run open; an auth.ts exporting `anonymous()` serves openly on purpose.
 */
export async function startAgentServer(options: { name: string; agent: Agent; auth: readonly AuthFn[] | undefined; basePath: string; onRefused?: ServeOptions['onRefused'] }): Promise<AgentServer> {
  const { name, agent, basePath } = options;
  if (options.auth === undefined && !process.env.AGENT_API_TOKEN) {
    console.warn('agentgate: no auth configured (no auth.ts or auth.js, no apiToken in agentgate.json, no AGENT_API_TOKEN): every agent route answers 401');
  }
  const auth = options.auth ?? [NO_AUTH_CONFIGURED];
  const server = await serve({ agent, auth, basePath, port: portFrom(process.env.PORT), host: process.env.HOST || undefined, onRefused: options.onRefused });
  closeOnSignals(server);
  console.log(`agentgate: ${name} listening on ${server.url}${basePath}`);
  return server;
}

/** What `server.js` of a `node-server` or `docker` build runs, given the URL of its folder. */
export async function runBuiltServer(outUrl: URL): Promise<AgentServer> {
  const manifest = JSON.parse(await readFile(new URL('manifest.json', outUrl), 'utf8')) as AgentManifest;
  const settings = JSON.parse(await readFile(new URL(`app/${SETTINGS_FILE}`, outUrl), 'utf8')) as ProjectSettings;
  const authFile = manifest.auth ? fileURLToPath(new URL('app/auth.js', outUrl)) : undefined;
  const { agent, auth } = await loadAgentFiles(fileURLToPath(new URL('app/agent.js', outUrl)), authFile);
  return startAgentServer({ name: manifest.name, agent, auth: directoryAuth(auth, settings.apiToken), basePath: manifest.basePath });
}

/**
 * `agentgate start <dir|out>`: serves an agent directory from source, or runs a build output
 * (a folder with `manifest.json` and `server.js`) with its own copy of agentgate.
 */
export async function startAgentDir(dir: string): Promise<void> {
  const serverFile = join(resolve(dir), 'server.js');
  if (existsSync(join(resolve(dir), 'manifest.json')) && existsSync(serverFile)) {
    await import(pathToFileURL(serverFile).href);
    return;
  }
  const { agent, auth, manifest, info } = await loadAgentDir(dir);
  await startAgentServer({ name: manifest.name, agent, auth: directoryAuth(auth, info.settings.apiToken), basePath: manifest.basePath });
}
