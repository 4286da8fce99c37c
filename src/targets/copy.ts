// Copying and compiling into a build output: agentward's compiled package, the agent directory's
// modules (transpiled, their specifiers rewritten), and the JSON files the outputs hold.
import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isTypeScript, javaScriptName, rewriteSpecifiers, stripTypes } from '../agent-dir/transpile.ts';
import { BuildError } from './errors.ts';

/** `.ts` run from the repository's sources, `.js` from the package: the extension of agentward's own modules. */
export const ownExtension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
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
        fail(
          new BuildError(
            'BUILD_FAILED',
            `compiling agentward's sources (tsc ${args.join(' ')}) failed: ${stdout || error.message}`,
            { cause: error },
          ),
        );
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

export const writeJson = (file: string, value: unknown, mode = 0o644) =>
  writeFile(file, `${JSON.stringify(value, null, 2)}\n`, { mode });

export function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** A relative module specifier from the folder `from` to the file `to`. */
export function specifierTo(from: string, to: string): string {
  const rel = relative(from, to).split(sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

/**
 * Copies a tree of modules: TypeScript transpiled to JavaScript, each specifier passed to
 * `rewrite` (with the folder of the file that names it), other files copied as they are.
 */
export async function copyModules(
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
export async function copyCompiledPackage(to: string): Promise<void> {
  const from = await compiledPackage();
  if (!existsSync(join(from, 'index.js')))
    throw new BuildError(
      'BUILD_FAILED',
      `${from}: agentward's compiled package is incomplete (no index.js); reinstall agentward`,
    );
  const left = new Set([join(from, 'bin'), join(from, 'cli', 'main.js'), join(from, 'cli', 'main.js.map')]);
  await cp(from, to, { recursive: true, filter: (path) => !left.has(path) && !path.endsWith('.d.ts') });
}

/**
 * The versions the package.json files above the directory ask for, the nearest first (the
 * directory's own, often only `"type": "module"`, then the project's); `*` for a package none lists.
 */
export async function packageVersions(dir: string, names: Iterable<string>): Promise<Record<string, string>> {
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
