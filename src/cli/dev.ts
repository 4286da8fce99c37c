// `agentward dev`: the directory's server (dev-server.ts) in a child process, restarted when a
// file of the directory, or a file outside it that the directory imports, changes. Node's
// --watch-path cannot leave out a folder, and the file store writes under <dir>/.data: every
// message would restart the server. This watcher skips dot-folders and node_modules. This
// process loads none of the server's modules: it watches, starts and stops.
import { spawn, type ChildProcess } from 'node:child_process';
import { type Dirent, existsSync, readdirSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dataDirOf } from '../agent-dir/names.ts';
import { specifierStrings } from '../agent-dir/source-scan.ts';
import { DEV_SERVER_PORT_IN_USE, type DevReport, type DevStart } from './dev-messages.ts';
import { CliError } from './errors.ts';
import { newApiToken } from './scaffold.ts';

/** True for a changed path (relative to the directory) that must not restart the server. */
export function ignoredChange(relativePath: string): boolean {
  return relativePath.split(sep).some((segment) => segment.startsWith('.') || segment === 'node_modules');
}

/**
 * Watches every folder of a tree (dot-folders and node_modules left out), never a file. An
 * editor's atomic save and `sed -i` write a new file and rename it over the old one; a watch
 * kept on the file itself (what Node's recursive `fs.watch` does on Linux) stays on the
 * replaced inode and hears nothing more. A folder's watch hears the rename, the delete, the
 * create and every later write, whatever inode the name has. `sync()` (called at each restart)
 * watches the folders made since and drops the removed ones.
 */
export function watchTree(root: string, onChange: (path: string) => void): { sync(): void; close(): void } {
  const watchers = new Map<string, FSWatcher>();
  const failed = new Set<string>();
  let closed = false;

  const arm = (dir: string) => {
    try {
      const watcher = watch(dir, (_event, name) => {
        const file = name === null ? '' : name.toString();
        if (!ignoredChange(file)) onChange(relative(root, join(dir, file)));
      });
      // A removed folder's watch may end in an error: drop it; sync() watches it again if it comes back.
      watcher.on('error', () => {
        watcher.close();
        if (watchers.get(dir) === watcher) watchers.delete(dir);
        onChange(relative(root, dir));
      });
      watchers.set(dir, watcher);
      failed.delete(dir);
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (code === 'ENOENT' || failed.has(dir)) return;
      failed.add(dir);
      const hint =
        code === 'ENOSPC' ? ' (the system limit on watches is reached: raise fs.inotify.max_user_watches)' : '';
      console.error(
        `agentward: cannot watch ${dir}: ${String(code ?? error)}${hint}; a change there will not restart the server`,
      );
    }
  };

  const sync = () => {
    if (closed) return;
    const found = new Set<string>();
    const walk = (dir: string) => {
      found.add(dir);
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      // Folders only, links not followed: a link cannot make the walk loop.
      for (const entry of entries) if (entry.isDirectory() && !ignoredChange(entry.name)) walk(join(dir, entry.name));
    };
    walk(root);
    for (const [dir, watcher] of watchers) {
      if (found.has(dir)) continue;
      watcher.close();
      watchers.delete(dir);
    }
    for (const dir of found) if (!watchers.has(dir)) arm(dir);
  };

  sync();
  return {
    sync,
    close() {
      closed = true;
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}

/** The modules of a folder tree whose imports dev reads: what Node loads of an agent directory. */
const MODULE = /\.(?:[mc]?[jt]s|tsx|jsx)$/;

/**
 * The files outside `root` that its modules import by a relative specifier, and theirs in turn
 * (design §31): `build` refuses them, `dev` watches them. Read from the sources (import,
 * export … from, import(), require() with a literal), not from what ran: a file is watched from
 * the start, whether or not the agent has loaded it yet.
 */
export function outsideImports(root: string): string[] {
  const outside = new Set<string>();
  const seen = new Set<string>();
  const readImports = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    let source: string;
    try {
      source = readFileSync(file, 'utf8');
    } catch {
      return;
    }
    for (const { value } of specifierStrings(source)) {
      if (!value.startsWith('./') && !value.startsWith('../')) continue;
      const target = resolve(dirname(file), value.split(/[?#]/)[0]!);
      // A file inside is read when the tree is walked; one outside is read here, for its own imports.
      if (!relative(root, target).startsWith('..') || target.split(sep).includes('node_modules')) continue;
      if (!existsSync(target) || statSync(target).isDirectory()) continue;
      outside.add(target);
      if (MODULE.test(target)) readImports(target);
    }
  };
  const walkTree = (dir: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (ignoredChange(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walkTree(path);
      else if (entry.isFile() && MODULE.test(entry.name)) readImports(path);
    }
  };
  walkTree(root);
  return [...outside].sort();
}

/**
 * Watches single files, each through a watch on its folder (an atomic save replaces the file's
 * inode, which a watch on the file itself would keep hearing nothing of). `set()` says which
 * files; `onChange` gets each one's path relative to `root`.
 */
export function watchFiles(
  root: string,
  onChange: (path: string) => void,
): { set(files: readonly string[]): void; close(): void } {
  const watchers = new Map<string, { watcher: FSWatcher; names: Set<string> }>();
  const failed = new Set<string>();
  const arm = (folder: string, names: Set<string>) => {
    try {
      const watcher = watch(folder, (_event, name) => {
        const file = name === null ? '' : name.toString();
        if (watchers.get(folder)?.names.has(file)) onChange(relative(root, join(folder, file)));
      });
      watcher.on('error', () => {
        watcher.close();
        if (watchers.get(folder)?.watcher === watcher) watchers.delete(folder);
      });
      watchers.set(folder, { watcher, names });
    } catch (error) {
      if (failed.has(folder)) return;
      failed.add(folder);
      const code = (error as { code?: unknown } | null)?.code;
      console.error(
        `agentward: cannot watch ${folder} (${String(code ?? error)}): a change to ${[...names].join(', ')} there will not restart the server`,
      );
    }
  };
  return {
    set(files) {
      const wanted = new Map<string, Set<string>>();
      for (const file of files) {
        const folder = dirname(file);
        wanted.set(folder, (wanted.get(folder) ?? new Set()).add(file.slice(folder.length + 1)));
      }
      for (const [folder, { watcher }] of watchers) {
        if (wanted.has(folder)) continue;
        watcher.close();
        watchers.delete(folder);
      }
      for (const [folder, names] of wanted) {
        const current = watchers.get(folder);
        if (current === undefined) arm(folder, names);
        else current.names = names;
      }
    },
    close() {
      for (const { watcher } of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}

const RESTART_DELAY_MS = 100;
/** dev's server: dev-server.ts beside this file in the sources, dev-server.js in the package. */
const DEV_SERVER = fileURLToPath(
  new URL(`./dev-server${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
);

/** Runs until SIGINT or SIGTERM, then exits with 0 once the server has closed. */
export async function runDevLoop(dir: string, options: { quiet: boolean }): Promise<void> {
  const folder = resolve(dir);
  if (!existsSync(folder) || !statSync(folder).isDirectory())
    throw new CliError('CLI_DIRECTORY', `${folder}: is not a directory`);
  const args = [...process.execArgv, DEV_SERVER, folder, ...(options.quiet ? ['--quiet'] : [])];
  const env = {
    NODE_ENV: 'development',
    ...process.env,
    AGENT_DATA_DIR: process.env.AGENT_DATA_DIR || dataDirOf(folder),
  };
  // The token a directory without auth is served with: one for the whole dev run, so a restart keeps the playground signed in.
  const token = newApiToken();
  /** The port the first server bound: every restart listens there again (PORT=0 too), so the URL stays. */
  let port: number | undefined;

  /** The server that runs now; `stopped` is one ending for a restart. */
  let child: ChildProcess | undefined;
  let stopped: ChildProcess | undefined;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  /** The files changed since the last restart, named in its line. */
  const changed = new Set<string>();
  /** The files outside the directory already named once. */
  const announced = new Set<string>();

  const watchImports = () => {
    const files = outsideImports(folder);
    imports.set(files);
    const fresh = files.filter((file) => !announced.has(file));
    for (const file of fresh) announced.add(file);
    if (fresh.length > 0)
      console.log(
        `agentward: also watching ${fresh.map((file) => relative(folder, file)).join(', ')}: imported from outside the directory (agentward build refuses such an import: move the file into the directory before building)`,
      );
  };

  /** Starts a server; `restart` says what changed and when the restart began, for its one line. */
  const launch = (restart?: { names: string[]; began: number }) => {
    watchImports();
    const running = spawn(process.execPath, args, { stdio: ['inherit', 'inherit', 'inherit', 'ipc'], env });
    child = running;
    running.send({ type: 'start', token, banner: restart === undefined, port } satisfies DevStart);
    running.on('message', (message: DevReport) => {
      port ??= message.port;
      if (restart === undefined) return;
      const what = `${restart.names.slice(0, 3).join(', ')}${restart.names.length > 3 ? ', …' : ''} changed`;
      const ms = Math.round(performance.now() - restart.began);
      console.log(
        message.type === 'ready'
          ? `agentward: ${what}; reloaded in ${ms} ms`
          : `agentward: ${what}; the agent did not load (why is above) after ${ms} ms`,
      );
    });
    running.once('exit', (code, signal) => {
      if (child !== running) return;
      child = undefined;
      // A taken port stays taken when a file changes: say so (the server did) and stop.
      if (code === DEV_SERVER_PORT_IN_USE && !stopping) {
        tree.close();
        imports.close();
        process.exit(1);
      }
      if (!stopping)
        console.error(`agentward: the server exited (${code ?? signal}); waiting for a file change to restart`);
    });
  };

  const restart = () => {
    timer = undefined;
    const began = performance.now();
    tree.sync();
    // An editor's or sed's temporary file is gone by now: name the files that are there, else the removed ones.
    const names = [...changed].map((name) => name || '.');
    const present = names.filter((name) => existsSync(join(folder, name)));
    changed.clear();
    const next = { names: present.length > 0 ? present : names, began };
    const previous = child;
    child = undefined;
    if (previous === undefined || previous.exitCode !== null || previous.signalCode !== null) return launch(next);
    stopped = previous;
    previous.once('exit', () => {
      stopped = undefined;
      if (!stopping) launch(next);
    });
    previous.kill('SIGTERM');
  };

  const onChange = (path: string) => {
    if (stopping) return;
    changed.add(path);
    clearTimeout(timer);
    timer = setTimeout(restart, RESTART_DELAY_MS);
  };
  const tree = watchTree(folder, onChange);
  const imports = watchFiles(folder, onChange);

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      tree.close();
      imports.close();
      clearTimeout(timer);
      const running = [child, stopped].filter(
        (server): server is ChildProcess =>
          server !== undefined && server.exitCode === null && server.signalCode === null,
      );
      if (running.length === 0) process.exit(0);
      let left = running.length;
      for (const server of running) {
        server.once('exit', () => --left === 0 && process.exit(0));
        server.kill(signal);
      }
    });
  }
  launch();
}
