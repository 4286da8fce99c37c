// The node-server target: the agent directory transpiled into app/, agentward's compiled package
// into agentward/, and server.js and package.json beside them. The docker target builds on it.
import { writeFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { authSources, SETTINGS_FILE } from '../agent-dir/agent-dir.ts';
import type { AgentDir, AgentManifest, BuildTarget, ProjectSettings } from '../agent-dir/agent-dir.ts';
import { AGENTWARD_ENTRIES } from '../agent-dir/resolve.ts';
import { tokenDigest } from '../agent-dir/token-digest.ts';
import { javaScriptSpecifier, packageName } from '../agent-dir/transpile.ts';
import { copyCompiledPackage, copyModules, isInside, packageVersions, specifierTo, writeJson } from './copy.ts';
import { BuildError } from './errors.ts';

/** The port server.js and the Dockerfile name: the built server's default (DEFAULT_PORT in src/cli/server-main.ts). */
export const PORT = 3000;

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

/** Key files, logs and env files: never copied into a build, at any depth (a private key in an image is a leaked key). */
const NEVER_COPIED =
  /\.(?:pem|key|p8|p12|pfx|jks|keystore|der|log|env)$|^id_(?:rsa|dsa|ecdsa|ed25519)(?:\.|$)|^npm-debug\.log/i;

/** The node-server output's manifest, and the third-party packages app/ imports (its package.json lists them). */
export interface NodeServerBuild {
  manifest: AgentManifest;
  packages: ReadonlySet<string>;
}

/** Writes the node-server output into `out`; the docker target calls it with its own name and adds its files. */
export async function buildNodeServer(
  info: AgentDir,
  out: string,
  target: BuildTarget,
  log: (line: string) => void,
): Promise<NodeServerBuild> {
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
      throw new BuildError(
        'BUILD_UNSUPPORTED',
        `${info.dir}: imports ${specifier}, which is not an entry point of agentward (${[...AGENTWARD_ENTRIES.keys()].join(', ')})`,
      );
    }
    if (specifier.startsWith('.') && !isInside(resolve(info.dir, relative(app, folder), specifier), info.dir)) {
      throw new BuildError(
        'BUILD_UNSUPPORTED',
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
  const authBy = authSources(info);
  return {
    manifest: { name: info.name, target, auth: authBy.length > 0, authBy, main: 'server.js', basePath: info.basePath },
    packages,
  };
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
