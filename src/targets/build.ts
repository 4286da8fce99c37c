import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { authSources, BUILD_TARGETS, SETTINGS_FILE, readAgentDir } from '../agent-dir/agent-dir.ts';
import type { AgentDir, AgentManifest, BuildTarget, ProjectSettings } from '../agent-dir/agent-dir.ts';
import { checkOptionNames } from '../auth/internal.ts';
import { AGENTWARD_ENTRIES } from '../agent-dir/resolve.ts';
import { tokenDigest } from '../agent-dir/token-digest.ts';
import { javaScriptSpecifier, packageName } from '../agent-dir/transpile.ts';
import { copyCompiledPackage, copyModules, isInside, packageVersions, specifierTo, writeJson } from './copy.ts';
import { buildWorker, checkWorkerDir } from './cloudflare-worker.ts';

export interface BuildOptions {
  target: BuildTarget;
  /** The output folder: created, or replaced when it holds an earlier build. */
  out: string;
  /** Where the build reports what the output serves (the cloudflare-worker target); default `console.log`. */
  log?: (line: string) => void;
}

const PORT = 3000;

/** True when `out/manifest.json` is the manifest of an agentward build. */
async function holdsBuild(out: string): Promise<boolean> {
  try {
    const manifest = JSON.parse(await readFile(join(out, 'manifest.json'), 'utf8')) as Partial<AgentManifest>;
    return BUILD_TARGETS.includes(manifest.target as BuildTarget) && typeof manifest.main === 'string';
  } catch {
    return false;
  }
}

/** Creates `out`, or replaces it when it holds an earlier build; any other non-empty folder is refused, never deleted. */
async function prepareOut(out: string, dir: string): Promise<void> {
  if (isInside(dir, out)) throw new Error(`${out}: the output folder must not be the agent directory or contain it`);
  if (existsSync(out) && (await readdir(out)).length > 0) {
    if (!(await holdsBuild(out)))
      throw new Error(`${out}: exists and is not an agentward build output; refusing to overwrite it`);
    await rm(out, { recursive: true, force: true });
  }
  await mkdir(out, { recursive: true });
}

function serverScript(target: BuildTarget): string {
  return `// Built by agentward (target ${target}). Run: node server.js
// Environment: PORT (default ${PORT}), HOST (default 127.0.0.1), AGENT_API_TOKEN (accepted besides the auth list),
// AGENT_LOG (text, json or off), AGENT_PLAYGROUND (on: serve the playground at <basePath>/playground).
import { runBuiltServer } from './agentward/cli/server-main.js';

try {
  await runBuiltServer(new URL('./', import.meta.url));
} catch (error) {
  const code = typeof error?.code === 'string' ? \` (\${error.code})\` : '';
  console.error(\`agentward: cannot start: \${error?.message ?? error}\${code}\`);
  process.exit(1);
}
`;
}

/**
 * What never goes into the image context: secrets, local data, installs, logs, VCS and editor
 * files. Docker matches a plain pattern at the context root only: each begins with the "any
 * folder" prefix, so it holds at every depth.
 */
const DOCKER_IGNORE = `# Built by agentward: kept out of the image context, at every depth.
**/.env*
**/*.env
**/.dev.vars
**/.data
**/node_modules
**/npm-debug.log*
**/*.log
**/.git
**/.gitignore
**/.npmrc
**/.yarnrc*
**/*.pem
**/*.key
**/*.p8
**/*.p12
**/*.pfx
**/*.jks
**/*.keystore
**/*.der
**/id_rsa*
**/id_dsa*
**/id_ecdsa*
**/id_ed25519*
**/.DS_Store
**/.vscode
**/.idea
Dockerfile
.dockerignore
`;

function dockerfile(basePath: string, installs: boolean): string {
  const probe = `fetch('http://127.0.0.1:' + process.env.PORT + '${basePath}/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`;
  return `# Built by agentward (target docker). Build: docker build -t my-agent .  Run: docker run -p ${PORT}:${PORT} -e AGENT_API_TOKEN my-agent
FROM node:22-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=${PORT}
WORKDIR /app
# Owned by the runtime user: it reads the 0600 app/agentward.json, and a file store writes under /app/.data.
COPY --chown=node:node . .
${installs ? 'RUN npm install --omit=dev --ignore-scripts --no-audit --no-fund\n' : ''}USER node
EXPOSE ${PORT}
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["node", "-e", ${JSON.stringify(probe)}]
CMD ["node", "server.js"]
`;
}

/** Key files, logs and env files: never copied into a build, at any depth (a private key in an image is a leaked key). */
const NEVER_COPIED =
  /\.(?:pem|key|p8|p12|pfx|jks|keystore|der|log|env)$|^id_(?:rsa|dsa|ecdsa|ed25519)(?:\.|$)|^npm-debug\.log/i;

async function buildNodeServer(
  info: AgentDir,
  out: string,
  target: BuildTarget,
  log: (line: string) => void,
): Promise<AgentManifest> {
  const app = join(out, 'app');
  const runtime = join(out, 'agentward');
  const packages = new Set<string>();

  await copyCompiledPackage(runtime);

  // The directory's own package.json stays behind: its "type" could make the transpiled ES modules CommonJS,
  // and the packages it names are listed in the output's package.json.
  const notCopied = new Set([SETTINGS_FILE, 'package.json', 'package-lock.json'].map((name) => join(info.dir, name)));
  const refused: string[] = [];
  const skipInDir = (path: string) => {
    const name = path.slice(path.lastIndexOf(sep) + 1);
    if (isInside(path, out) || name === 'node_modules' || name.startsWith('.') || notCopied.has(path)) return true;
    if (!NEVER_COPIED.test(name)) return false;
    refused.push(relative(info.dir, path));
    return true;
  };
  await copyModules(info.dir, app, skipInDir, (specifier, folder) => {
    const entry = AGENTWARD_ENTRIES.get(specifier);
    if (entry !== undefined) return specifierTo(folder, join(runtime, `${entry}.js`));
    if (specifier.startsWith('agentward/')) {
      throw new Error(
        `${info.dir}: imports ${specifier}, which is not an entry point of agentward (${[...AGENTWARD_ENTRIES.keys()].join(', ')})`,
      );
    }
    if (specifier.startsWith('.') && !isInside(resolve(info.dir, relative(app, folder), specifier), info.dir)) {
      throw new Error(
        `${info.dir}: imports ${specifier}, outside the agent directory; the build copies only the directory (import agentward as 'agentward')`,
      );
    }
    const name = packageName(specifier);
    if (name !== undefined) packages.add(name);
    return javaScriptSpecifier(specifier);
  });

  // With an auth file the baked token is not used, so nothing of it is shipped; without one, only its digest.
  const baked = info.authFile === undefined ? info.settings.apiToken : undefined;
  const settings: ProjectSettings = {
    name: info.name,
    basePath: info.basePath,
    ...(info.settings.mcp === true && { mcp: true }),
    ...(info.settings.limits !== undefined && { limits: info.settings.limits }),
    ...(baked !== undefined && { apiTokenSha256: await tokenDigest(baked) }),
  };
  if (refused.length > 0)
    log(
      `agentward: not copied into app/ (key files, logs and env files never go into a build; load keys from the environment): ${refused.join(', ')}`,
    );
  await writeJson(join(app, SETTINGS_FILE), settings, 0o600);
  await writeFile(join(out, 'server.js'), serverScript(target));
  const dependencies = await packageVersions(info.dir, packages);
  await writeJson(join(out, 'package.json'), {
    name: packageNameOf(info.name),
    private: true,
    type: 'module',
    main: 'server.js',
    scripts: { start: 'node server.js' },
    dependencies,
  });
  if (target === 'docker') {
    await writeFile(join(out, 'Dockerfile'), dockerfile(info.basePath, packages.size > 0));
    await writeFile(join(out, '.dockerignore'), DOCKER_IGNORE);
  }
  const authBy = authSources(info);
  return { name: info.name, target, auth: authBy.length > 0, authBy, main: 'server.js', basePath: info.basePath };
}

/** An npm package name for the output's package.json (npm refuses spaces, capitals and most punctuation). */
function packageNameOf(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[-._]+|-+$/g, '')
      .slice(0, 214) || 'agent'
  );
}

/**
 * Builds an agent directory for a target and returns the manifest written to `<out>/manifest.json`.
 * - `node-server`: the transpiled directory (`app/`), agentward's compiled package (`agentward/`),
 *   `server.js` and `package.json`; runs as `node <out>/server.js` with no install step unless
 *   the directory imports third-party packages (listed in package.json).
 * - `docker`: the same plus a `Dockerfile`.
 * - `cloudflare-worker`: `worker.js` serving the agent agent.json declares (its model, the routes
 *   of `agentHandler`, sessions in Durable Objects) behind the `AGENT_API_TOKEN` binding alone,
 *   and `wrangler.toml`; a directory with `auth.ts`/`auth.js`, or an agent.json field the worker
 *   cannot honour, is refused with an error naming it. The build logs what the worker serves.
 * @example
 * await build('./my-agent', { target: 'node-server', out: './dist' });
 */
export async function build(dir: string, options: BuildOptions): Promise<AgentManifest> {
  if (typeof options !== 'object' || options === null)
    throw new Error('build(): options { target, out, log? } are required');
  checkOptionNames('build()', options, ['target', 'out', 'log'], (message) => new Error(message));
  const { target, out: outOption } = options;
  if (!BUILD_TARGETS.includes(target)) throw new Error(`build(): target must be one of ${BUILD_TARGETS.join(', ')}`);
  if (typeof outOption !== 'string' || outOption === '')
    throw new Error('build(): out must be the path of the output folder');
  const info = await readAgentDir(dir);
  const spec = target === 'cloudflare-worker' ? checkWorkerDir(info) : undefined;
  const out = resolve(outOption);
  await prepareOut(out, info.dir);
  const log = options.log ?? ((line: string) => console.log(line));
  const manifest =
    spec !== undefined ? await buildWorker(info, spec, out, log) : await buildNodeServer(info, out, target, log);
  await writeJson(join(out, 'manifest.json'), manifest);
  return manifest;
}
