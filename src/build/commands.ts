// The CLI verbs around an agent directory: `agentgate init <dir>` and `agentgate build <dir> --target … --out …`.
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { BUILD_TARGETS } from './agent-dir.ts';
import type { BuildTarget } from './agent-dir.ts';
import { build } from './build.ts';
import { initAgentDir } from './scaffold.ts';

export const INIT_USAGE = 'agentgate init <dir>';
export const BUILD_USAGE = `agentgate build <dir> --target ${BUILD_TARGETS.join('|')} --out <folder>`;

const shown = (path: string) => relative(process.cwd(), path) || '.';

/** Scaffolds the directory and prints the baked API token: the one time it is shown. */
export async function initCommand(args: readonly string[]): Promise<void> {
  const { positionals } = parseArgs({ args: [...args], allowPositionals: true, strict: true });
  if (positionals.length !== 1) throw new Error(`usage: ${INIT_USAGE}`);
  const { dir, files, apiToken } = await initAgentDir(positionals[0] as string);
  console.log(`agentgate: created ${files.join(', ')} in ${shown(dir)}`);
  console.log('API token (shown once; it is kept in agentgate.json, keep that file out of version control):');
  console.log(`  ${apiToken}`);
  console.log(`Next: agentgate dev ${shown(dir)}, then call it with "Authorization: Bearer <token>".`);
}

/** Builds the directory for a target and says how to run the output. */
export async function buildCommand(args: readonly string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: { target: { type: 'string' }, out: { type: 'string' } },
  });
  const { target, out } = values;
  if (positionals.length !== 1 || target === undefined || out === undefined) throw new Error(`usage: ${BUILD_USAGE}`);
  if (!BUILD_TARGETS.includes(target as BuildTarget)) throw new Error(`--target must be one of ${BUILD_TARGETS.join(', ')}; usage: ${BUILD_USAGE}`);
  const manifest = await build(positionals[0] as string, { target: target as BuildTarget, out });
  console.log(`agentgate: built ${manifest.name} for ${manifest.target} in ${shown(out)} (auth file: ${manifest.auth ? 'yes' : 'no'})`);
  if (manifest.target === 'cloudflare-worker') {
    console.log(`Next: cd ${shown(out)} && npx wrangler secret put AGENT_API_TOKEN && npx wrangler deploy`);
  } else if (manifest.target === 'docker') {
    console.log(`Next: docker build -t ${manifest.name} ${shown(out)} && docker run -p 3000:3000 ${manifest.name}`);
  } else {
    console.log(`Next: node ${shown(out)}/server.js (PORT, HOST and AGENT_API_TOKEN from the environment)`);
  }
}
