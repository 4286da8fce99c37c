import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { authSources, BUILD_TARGETS, SETTINGS_FILE, readAgentDir } from '../agent-dir/agent-dir.ts';
import type { AgentDir, AgentManifest, AgentSpec, BuildTarget, ProjectSettings } from '../agent-dir/agent-dir.ts';
import { checkOptionNames } from '../auth/internal.ts';
import { bundleModules } from './bundle.ts';
import { AGENTWARD_ENTRIES } from '../agent-dir/resolve.ts';
import { WORKER_BINDINGS, type SpecWorkerOptions } from '../cloudflare/spec-worker.ts';
import { tokenDigest } from '../agent-dir/token-digest.ts';
import {
  isTypeScript,
  javaScriptName,
  javaScriptSpecifier,
  packageName,
  rewriteSpecifiers,
  stripTypes,
} from '../agent-dir/transpile.ts';

export interface BuildOptions {
  target: BuildTarget;
  /** The output folder: created, or replaced when it holds an earlier build. */
  out: string;
  /** Where the build reports what the output serves (the cloudflare-worker target); default `console.log`. */
  log?: (line: string) => void;
}

const ownExtension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
let compiled: Promise<string> | undefined;

/**
 * agentward as users install it. In the package, `dist/` (where this file runs from). Run from
 * the repository's sources, those sources compiled now with the package's own build settings
 * (`tsconfig.build.json`), once per process, into a temporary folder removed at exit: a build
 * never ships a missing or stale `dist/`.
 */
function compiledPackage(): Promise<string> {
  compiled ??=
    ownExtension === '.ts' ? compileSources() : Promise.resolve(fileURLToPath(new URL('../', import.meta.url)));
  return compiled;
}

async function compileSources(): Promise<string> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const outDir = await mkdtemp(join(tmpdir(), 'agentward-compiled-'));
  process.once('exit', () => rmSync(outDir, { recursive: true, force: true }));
  const args = ['-p', join(root, 'tsconfig.build.json'), '--outDir', outDir, '--declaration', 'false'];
  await new Promise<void>((done, fail) => {
    execFile(join(root, 'node_modules', '.bin', 'tsc'), args, (error, stdout) => {
      if (error)
        fail(new Error(`compiling agentward's sources (tsc ${args.join(' ')}) failed: ${stdout || error.message}`));
      else done();
    });
  });
  // What tsc does not compile, as scripts/build.mjs adds it: the playground's browser files.
  await cp(join(root, 'src', 'node', 'playground'), join(outDir, 'node', 'playground'), {
    recursive: true,
    filter: (path) => !path.endsWith('tsconfig.json'),
  });
  return outDir;
}

const PORT = 3000;

const writeJson = (file: string, value: unknown, mode = 0o644) =>
  writeFile(file, `${JSON.stringify(value, null, 2)}\n`, { mode });

function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** A relative module specifier from the folder `from` to the file `to`. */
function specifierTo(from: string, to: string): string {
  const rel = relative(from, to).split(sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

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

/**
 * Copies a tree of modules: TypeScript transpiled to JavaScript, each specifier passed to
 * `rewrite` (with the folder of the file that names it), other files copied as they are.
 */
async function copyModules(
  from: string,
  to: string,
  skip: (path: string) => boolean,
  rewrite: (specifier: string, folder: string) => string | undefined,
): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    if (skip(source) || /\.d\.[mc]?ts$/.test(entry.name)) continue;
    if (entry.isDirectory()) {
      await copyModules(source, join(to, entry.name), skip, rewrite);
    } else if (isTypeScript(entry.name) || /\.[mc]?js$/.test(entry.name)) {
      const target = join(to, javaScriptName(entry.name));
      const text = await readFile(source, 'utf8');
      const code = isTypeScript(entry.name) ? stripTypes(text, source) : text;
      await writeFile(
        target,
        rewriteSpecifiers(code, (specifier) => rewrite(specifier, dirname(target))),
      );
    } else if (entry.isFile()) {
      await copyFile(source, join(to, entry.name));
    }
  }
}

/**
 * Copies the compiled package, file for file as it is installed, without its types, its
 * command and the command's launcher: the built server runs the same code a user installs.
 */
async function copyCompiledPackage(to: string): Promise<void> {
  const from = await compiledPackage();
  if (!existsSync(join(from, 'index.js')))
    throw new Error(`${from}: agentward's compiled package is incomplete (no index.js); reinstall agentward`);
  const left = new Set([join(from, 'bin'), join(from, 'cli', 'main.js'), join(from, 'cli', 'main.js.map')]);
  await cp(from, to, { recursive: true, filter: (path) => !left.has(path) && !path.endsWith('.d.ts') });
}

/**
 * The versions the package.json files above the directory ask for, the nearest first (the
 * directory's own, often only `"type": "module"`, then the project's); `*` for a package none lists.
 */
async function packageVersions(dir: string, names: Iterable<string>): Promise<Record<string, string>> {
  const versions: Record<string, string> = {};
  const wanted = [...names].sort();
  for (let folder = dir; ; folder = dirname(folder)) {
    const file = join(folder, 'package.json');
    if (existsSync(file)) {
      const json = JSON.parse(await readFile(file, 'utf8')) as Record<string, Record<string, unknown> | undefined>;
      const declared: Record<string, unknown> = {
        ...json.peerDependencies,
        ...json.devDependencies,
        ...json.dependencies,
      };
      for (const name of wanted)
        if (versions[name] === undefined && typeof declared[name] === 'string') versions[name] = declared[name];
    }
    if (dirname(folder) === folder) break;
  }
  for (const name of wanted) versions[name] ??= '*';
  return Object.fromEntries(wanted.map((name) => [name, versions[name] as string]));
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

/**
 * A JavaScript string literal of any text: JSON's escapes, plus U+2028 and U+2029, which older
 * parsers take as line ends, and `<`, so the literal can never close a surrounding tag or comment.
 */
export function jsString(text: string): string {
  return JSON.stringify(text).replace(/[\u2028\u2029<]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
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

/** A Workers script name: lower-case letters, digits and dashes, at most 63 characters. */
function workerName(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 63) || 'agent'
  );
}

/** The fields of agent.json the cloudflare-worker target honours (design §7); any other is a build error naming it. */
const WORKER_SPEC_FIELDS = ['name', 'instructions', 'model'];
const WORKER_MODEL_FIELDS: Readonly<Record<string, readonly string[]>> = {
  echo: ['provider'],
  'openai-compatible': ['provider', 'baseURL', 'model'],
};

/** agent.json as the worker serves it: every field honoured, or an error naming the one that is not. */
function workerSpec(spec: AgentSpec, specFile: string): SpecWorkerOptions['spec'] {
  const cannot = (field: string, why: string) =>
    new Error(
      `${specFile}: "${field}" ${why}; the cloudflare-worker target serves name, instructions and model ({ "provider": "echo" } or { "provider": "openai-compatible", "baseURL", "model" }, the API key from the ${WORKER_BINDINGS.modelApiKey} secret)`,
    );
  for (const field of Object.keys(spec))
    if (!WORKER_SPEC_FIELDS.includes(field)) throw cannot(field, 'is not a field the worker can honour');
  const { name, instructions, model } = spec;
  if (model === undefined) return { name, ...(instructions !== undefined && { instructions }) };
  if (typeof model !== 'object' || model === null || Array.isArray(model)) throw cannot('model', 'must be an object');
  const declared = model as Record<string, unknown>;
  const provider = declared.provider;
  const fields =
    typeof provider === 'string' && Object.hasOwn(WORKER_MODEL_FIELDS, provider)
      ? WORKER_MODEL_FIELDS[provider]
      : undefined;
  if (fields === undefined) throw cannot('model.provider', 'must be "echo" or "openai-compatible"');
  for (const field of Object.keys(declared))
    if (!fields.includes(field))
      throw cannot(`model.${field}`, `is not a field the worker can honour for provider "${provider}"`);
  if (provider === 'echo')
    return { name, ...(instructions !== undefined && { instructions }), model: { provider: 'echo' } };
  const { baseURL, model: modelName } = declared;
  let url: URL | undefined;
  try {
    url = typeof baseURL === 'string' ? new URL(baseURL) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw cannot('model.baseURL', 'must be an absolute http(s) URL');
  // agent.json is served to callers (GET <base>/spec) and printed by the build.
  if (url.username !== '' || url.password !== '') throw cannot('model.baseURL', 'must not hold credentials');
  if (typeof modelName !== 'string' || modelName === '') throw cannot('model.model', 'must be a non-empty string');
  return {
    name,
    ...(instructions !== undefined && { instructions }),
    model: { provider: 'openai-compatible', baseURL: baseURL as string, model: modelName },
  };
}

function checkWorkerDir(info: AgentDir): SpecWorkerOptions['spec'] {
  if (info.authFile !== undefined) {
    throw new Error(
      `${info.authFile}: the cloudflare-worker target has no auth list (it is protected by the AGENT_API_TOKEN binding alone), so it cannot serve an agent with this file; build for node-server or docker, or remove the file`,
    );
  }
  const specFile = join(info.dir, 'agent.json');
  if (info.spec === undefined)
    throw new Error(`${specFile}: not found; the cloudflare-worker target serves this declarative spec`);
  const secret = secretLookingField(info.spec);
  if (secret !== undefined) {
    throw new Error(
      `${specFile}: "${secret}" looks like a secret, and the cloudflare-worker target serves this file to its callers; keep secrets in Workers secrets`,
    );
  }
  return workerSpec(info.spec, specFile);
}

/** The path of the first field whose name says it holds a secret (`apiKey`, `token`, `password`…), or undefined. */
function secretLookingField(value: unknown, path = ''): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, member] of Object.entries(value)) {
    const here = path === '' ? key : `${path}.${key}`;
    if (/(?:key|token)$|secret|password|credential/i.test(key)) return here;
    const nested = secretLookingField(member, here);
    if (nested !== undefined) return nested;
  }
  return undefined;
}

/** What the built worker serves, in the words the build prints. */
function workerSummary(spec: SpecWorkerOptions['spec'], basePath: string, mcp: boolean, limits: boolean): string[] {
  const model =
    spec.model?.provider === 'openai-compatible'
      ? `openai-compatible ${JSON.stringify(spec.model.model)} at ${JSON.stringify(spec.model.baseURL)} (API key: the ${WORKER_BINDINGS.modelApiKey} secret, if the provider needs one)`
      : 'echo (the built-in echo model)';
  return [
    `model: ${model}`,
    `open: GET ${basePath}/health`,
    `behind the ${WORKER_BINDINGS.apiToken} secret (unset: 401): POST ${basePath}, POST ${basePath}/chat (JSON, or server-sent events with Accept: text/event-stream), GET ${basePath}/chat/:id, POST ${basePath}/ui (useChat), GET ${basePath}/approvals?sessionId=, POST ${basePath}/approvals/:id (a spec has no tools: nothing waits for approval), GET ${basePath}/spec${mcp ? `, POST ${basePath}/mcp (MCP: the tool ask)` : ''}`,
    `sessions: one Durable Object each (class ${WORKER_BINDINGS.sessionClass}, binding ${WORKER_BINDINGS.sessions}), kept across requests and restarts`,
    ...(limits
      ? [
          `limits: counted in Durable Objects (class ${WORKER_BINDINGS.limitsClass}, binding ${WORKER_BINDINGS.limits}), per API token, failures per CF-Connecting-IP`,
        ]
      : []),
    'not on this target: auth.ts and any auth list, tools, memory, session ownership, channels, the playground',
  ];
}

function wranglerToml(info: AgentDir): string {
  const { apiToken, modelApiKey, sessions, sessionClass, limits, limitsClass } = WORKER_BINDINGS;
  // A migration of its own: a worker deployed before it had limits adds the class without touching v1.
  const limitObjects =
    info.settings.limits === undefined
      ? ''
      : `
# One Durable Object per counted key (agentward.json "limits"): the budget every instance of the worker shares.
[[durable_objects.bindings]]
name = "${limits}"
class_name = "${limitsClass}"

[[migrations]]
tag = "v2"
new_sqlite_classes = ["${limitsClass}"]
`;
  return `# Built by agentward (target cloudflare-worker). Deploy: npx wrangler deploy
# Secrets (never in this file):
#   npx wrangler secret put ${apiToken}   every route but ${info.basePath}/health answers 401 until it is set
#   npx wrangler secret put ${modelApiKey}     the API key of an openai-compatible model, sent as Authorization: Bearer
# Locally (npx wrangler dev), the same names go into a .dev.vars file beside this one: ${apiToken}=<a token>
name = "${workerName(info.name)}"
main = "worker.js"
compatibility_date = "2025-01-01"

# One Durable Object per session: its transcript, kept across requests and restarts; its turns run one at a time.
[[durable_objects.bindings]]
name = "${sessions}"
class_name = "${sessionClass}"

[[migrations]]
tag = "v1"
new_sqlite_classes = ["${sessionClass}"]
${limitObjects}`;
}

async function buildWorker(
  info: AgentDir,
  spec: SpecWorkerOptions['spec'],
  out: string,
  log: (line: string) => void,
): Promise<AgentManifest> {
  const { limits } = info.settings;
  const { code, entryName } = await bundleModules(
    fileURLToPath(new URL(`../cloudflare/spec-worker${ownExtension}`, import.meta.url)),
  );
  // The directory's text reaches the code only inside string literals, parsed at start-up.
  const worker = `// Built by agentward (target cloudflare-worker): serves agent.json behind the ${WORKER_BINDINGS.apiToken} binding.
${code}
const agentward = ${entryName}.createSpecWorker({ spec: JSON.parse(${jsString(JSON.stringify(spec))}), basePath: ${jsString(info.basePath)}, mcp: ${info.settings.mcp === true}${limits === undefined ? '' : `, limits: JSON.parse(${jsString(JSON.stringify(limits))})`} });
export default agentward.worker;
export const ${WORKER_BINDINGS.sessionClass} = agentward.SessionObject;
${
  limits === undefined
    ? ''
    : `export const ${WORKER_BINDINGS.limitsClass} = agentward.LimitObject;
`
}`;
  await writeFile(join(out, 'worker.js'), worker);
  await writeFile(join(out, 'wrangler.toml'), wranglerToml(info));
  const summary = workerSummary(spec, info.basePath, info.settings.mcp === true, limits !== undefined);
  log(
    `agentward: the cloudflare-worker build of ${JSON.stringify(info.name)} serves\n${summary.map((line) => `  ${line}`).join('\n')}`,
  );
  return {
    name: info.name,
    target: 'cloudflare-worker',
    // Without its secret binding the worker refuses every call: it never serves open.
    auth: true,
    authBy: [WORKER_BINDINGS.apiToken],
    main: 'worker.js',
    basePath: info.basePath,
    model: spec.model ?? { provider: 'echo' },
    secrets: [
      WORKER_BINDINGS.apiToken,
      ...(spec.model?.provider === 'openai-compatible' ? [WORKER_BINDINGS.modelApiKey] : []),
    ],
    durableObjects: {
      [WORKER_BINDINGS.sessions]: WORKER_BINDINGS.sessionClass,
      ...(limits !== undefined && { [WORKER_BINDINGS.limits]: WORKER_BINDINGS.limitsClass }),
    },
  };
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
