// `agentward dev`: `agentward start --playground` in a child process, restarted when a file of
// the directory changes. Node's --watch-path cannot leave out a folder, and the file store
// writes under <dir>/.data: every message would restart the server. This watcher skips
// dot-folders and node_modules.
import { spawn, type ChildProcess } from 'node:child_process';
import { type Dirent, existsSync, readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { createServer } from 'node:http';
import { join, relative, resolve, sep } from 'node:path';
import { newApiToken } from './scaffold.ts';
import { dataDirOf, DEV_CHILD_PORT_IN_USE, DEV_RUN_TOKEN, listenAddress, PortInUseError } from './server-main.ts';

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

const RESTART_DELAY_MS = 100;

/** Runs until SIGINT or SIGTERM, then exits with 0 once the server has closed. */
export async function runDevLoop(dir: string, options: { cli: string; quiet: boolean }): Promise<void> {
  const folder = resolve(dir);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new Error(`${folder}: is not a directory`);
  const args = [
    ...process.execArgv,
    options.cli,
    'start',
    folder,
    '--playground',
    '--log-refusals',
    ...(options.quiet ? ['--quiet'] : []),
  ];
  // The token a directory without auth is served with: one for the whole dev run, so a restart keeps the playground signed in.
  const env = {
    NODE_ENV: 'development',
    ...process.env,
    AGENT_DATA_DIR: process.env.AGENT_DATA_DIR || dataDirOf(folder),
    AGENTWARD_DEV_CHILD: '1',
    [DEV_RUN_TOKEN]: newApiToken(),
  };

  /** The server that runs now; `stopped` is one ending for a restart. */
  let child: ChildProcess | undefined;
  let stopped: ChildProcess | undefined;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  /** The files changed since the last restart, named in its log line. */
  const changed = new Set<string>();

  const launch = () => {
    const running = spawn(process.execPath, args, { stdio: 'inherit', env });
    child = running;
    running.once('exit', (code, signal) => {
      if (child !== running) return;
      child = undefined;
      // A taken port stays taken when a file changes: say so (the child did) and stop.
      if (code === DEV_CHILD_PORT_IN_USE && !stopping) {
        tree.close();
        process.exit(1);
      }
      if (!stopping)
        console.error(`agentward: the server exited (${code ?? signal}); waiting for a file change to restart`);
    });
  };

  const restart = () => {
    timer = undefined;
    tree.sync();
    // An editor's or sed's temporary file is gone by now: name the files that are there, else the removed ones.
    const names = [...changed].map((name) => name || '.');
    const present = names.filter((name) => existsSync(join(folder, name)));
    const shown = present.length > 0 ? present : names;
    changed.clear();
    console.log(`agentward: ${shown.slice(0, 3).join(', ')}${shown.length > 3 ? ', …' : ''} changed; restarting`);
    const previous = child;
    child = undefined;
    if (previous === undefined || previous.exitCode !== null || previous.signalCode !== null) return launch();
    stopped = previous;
    previous.once('exit', () => {
      stopped = undefined;
      if (!stopping) launch();
    });
    previous.kill('SIGTERM');
  };

  const tree = watchTree(folder, (path) => {
    if (stopping) return;
    changed.add(path);
    clearTimeout(timer);
    timer = setTimeout(restart, RESTART_DELAY_MS);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      tree.close();
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

const LOAD_FAILED = JSON.stringify({
  error:
    'Service Unavailable: the agent did not load. The terminal running agentward dev says why; saving a fix restarts it.',
});

/**
 * `dev`'s server child when the directory does not load (a syntax error, a missing agent.ts):
 * the reason is printed, then every request on PORT and HOST answers 503 (never a refused or
 * hanging connection) until the next change restarts the child. The body does not repeat the
 * reason: it can quote anything the directory's code threw.
 */
export async function serveLoadFailure(): Promise<void> {
  const { port, host, url } = listenAddress();
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(503, { 'content-type': 'application/json', 'cache-control': 'no-store', 'retry-after': '1' });
    res.end(LOAD_FAILED);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: { code?: unknown }) =>
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(port) : error),
    );
    server.listen(port, host, resolve);
  });
  const { port: bound } = server.address() as { port: number };
  console.error(`agentward: the agent did not load; ${url(bound)} answers 503 until a file changes`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      server.close(() => process.exit(0));
      server.closeAllConnections();
    });
  }
}
