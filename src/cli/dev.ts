// `agentward dev`: `agentward start --playground` in a child process, restarted when a file of
// the directory changes. Node's --watch-path cannot leave out a folder, and the file store
// writes under <dir>/.data: every message would restart the server. This watcher skips
// dot-folders and node_modules.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync, watch } from 'node:fs';
import { resolve, sep } from 'node:path';
import { dataDirOf, DEV_CHILD_PORT_IN_USE } from './server-main.ts';

/** True for a changed path (relative to the directory) that must not restart the server. */
export function ignoredChange(relativePath: string): boolean {
  return relativePath.split(sep).some((segment) => segment.startsWith('.') || segment === 'node_modules');
}

const RESTART_DELAY_MS = 100;

/** Runs until SIGINT or SIGTERM, then exits with 0 once the server has closed. */
export async function runDevLoop(dir: string, options: { cli: string; quiet: boolean }): Promise<void> {
  const folder = resolve(dir);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new Error(`${folder}: is not a directory`);
  const args = [...process.execArgv, options.cli, 'start', folder, '--playground', '--log-refusals', ...(options.quiet ? ['--quiet'] : [])];
  const env = { NODE_ENV: 'development', ...process.env, AGENT_DATA_DIR: process.env.AGENT_DATA_DIR || dataDirOf(folder), AGENTWARD_DEV_CHILD: '1' };

  /** The server that runs now; `stopped` is one ending for a restart. */
  let child: ChildProcess | undefined;
  let stopped: ChildProcess | undefined;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;

  const launch = () => {
    const running = spawn(process.execPath, args, { stdio: 'inherit', env });
    child = running;
    running.once('exit', (code, signal) => {
      if (child !== running) return;
      child = undefined;
      // A taken port stays taken when a file changes: say so (the child did) and stop.
      if (code === DEV_CHILD_PORT_IN_USE && !stopping) {
        watcher.close();
        process.exit(1);
      }
      if (!stopping) console.error(`agentward: the server exited (${code ?? signal}); waiting for a file change to restart`);
    });
  };

  const restart = () => {
    timer = undefined;
    console.log('agentward: a file changed; restarting');
    const previous = child;
    child = undefined;
    if (previous === undefined || previous.exitCode !== null) return launch();
    stopped = previous;
    previous.once('exit', () => {
      stopped = undefined;
      if (!stopping) launch();
    });
    previous.kill('SIGTERM');
  };

  const watcher = watch(folder, { recursive: true }, (_event, name) => {
    if (name !== null && ignoredChange(name.toString())) return;
    clearTimeout(timer);
    timer = setTimeout(restart, RESTART_DELAY_MS);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      watcher.close();
      clearTimeout(timer);
      const running = [child, stopped].filter((server): server is ChildProcess => server !== undefined && server.exitCode === null && server.signalCode === null);
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
