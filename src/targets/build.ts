// build(): checks its options and the output folder, hands the directory to its target's file
// (node-server.ts, docker.ts, cloudflare-worker.ts) to write into a folder beside it, writes the
// manifest, and only then puts that folder in place of the output folder.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { BUILD_TARGETS, readAgentDir } from '../agent-dir/agent-dir.ts';
import type { AgentManifest, BuildTarget } from '../agent-dir/agent-dir.ts';
import { checkOptionNames, kindOf } from '../auth/internal.ts';
import { isInside, writeJson } from './copy.ts';
import { BuildError } from './errors.ts';
import { buildWorker, checkWorkerDir } from './cloudflare-worker.ts';
import { buildDocker } from './docker.ts';
import { buildNodeServer } from './node-server.ts';

export interface BuildOptions {
  target: BuildTarget;
  /** The output folder: created, or replaced when it holds an earlier build. */
  out: string;
  /** Where the build reports what the output serves (the cloudflare-worker target); default `console.log`. */
  log?: (line: string) => void;
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

/** Refuses an `out` that is or holds the agent directory, and a non-empty folder that is no earlier build (never deleted). */
async function checkOut(out: string, dir: string): Promise<void> {
  if (isInside(dir, out))
    throw new BuildError(
      'BUILD_OUT_REFUSED',
      `${out}: the output folder must not be the agent directory or contain it`,
    );
  if (existsSync(out) && (await readdir(out)).length > 0 && !(await holdsBuild(out)))
    throw new BuildError(
      'BUILD_OUT_REFUSED',
      `${out}: exists and is not an agentward build output; refusing to overwrite it`,
    );
}

/**
 * Runs `write` on a new folder beside `out` (same parent: renames, not copies) and puts it in
 * place of `out` only once it is whole: a build that fails leaves nothing of itself, and an
 * earlier build in `out` as it was (`start` never reads half a build). While it runs, the earlier
 * build waits beside it under a dot name, so a build whose output folder is inside the agent
 * directory never copies it (dot names are never copied).
 */
async function writeWhole<T>(out: string, write: (folder: string) => Promise<T>): Promise<T> {
  await mkdir(dirname(out), { recursive: true });
  const staging = await mkdtemp(join(dirname(out), `.${basename(out)}.building-`));
  const earlier = existsSync(out) ? `${staging}.earlier` : undefined;
  if (earlier !== undefined) await rename(out, earlier);
  let result: T;
  try {
    result = await write(staging);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    if (earlier !== undefined) await rename(earlier, out);
    throw error;
  }
  await rename(staging, out);
  if (earlier !== undefined) await rm(earlier, { recursive: true, force: true });
  return result;
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
    throw new BuildError(
      'BUILD_OPTIONS_INVALID',
      `build(): options { target, out, log? } are required; got ${kindOf(options)}`,
    );
  checkOptionNames(
    'build()',
    options,
    ['target', 'out', 'log'],
    (message) => new BuildError('BUILD_OPTIONS_INVALID', message),
  );
  const { target, out: outOption } = options;
  if (!BUILD_TARGETS.includes(target))
    throw new BuildError(
      'BUILD_OPTIONS_INVALID',
      `build(): target must be one of ${BUILD_TARGETS.join(', ')}; got ${kindOf(target)}`,
    );
  if (typeof outOption !== 'string' || outOption === '')
    throw new BuildError(
      'BUILD_OPTIONS_INVALID',
      `build(): out must be the path of the output folder; got ${kindOf(outOption)}`,
    );
  const info = await readAgentDir(dir);
  const spec = target === 'cloudflare-worker' ? checkWorkerDir(info) : undefined;
  const out = resolve(outOption);
  await checkOut(out, info.dir);
  const log = options.log ?? ((line: string) => console.log(line));
  return writeWhole(out, async (folder) => {
    const manifest =
      spec !== undefined
        ? await buildWorker(info, spec, folder, log)
        : target === 'docker'
          ? await buildDocker(info, folder, log)
          : (await buildNodeServer(info, folder, target, log)).manifest;
    await writeJson(join(folder, 'manifest.json'), manifest);
    return manifest;
  });
}
