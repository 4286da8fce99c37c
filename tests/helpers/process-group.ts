// Ending a child started with `detached: true` (its own process group) and everything it started.
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/** Sends `signal` to the whole process group of `child`; a group already gone is not an error. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    /* gone */
  }
}

/**
 * Ends `child`'s process group, never waiting without a bound: SIGTERM, up to `graceMs` for the
 * child to exit, then SIGKILL to the whole group (a grandchild such as workerd may ignore SIGTERM
 * or outlive its parent and hold the pipes open, which would keep the test process alive), and
 * the pipes closed.
 */
export async function stopGroup(child: ChildProcess, graceMs = 5_000): Promise<void> {
  const exited =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once('exit', () => resolve()));
  signalGroup(child, 'SIGTERM');
  await Promise.race([exited, sleep(graceMs)]);
  signalGroup(child, 'SIGKILL');
  await Promise.race([exited, sleep(graceMs)]);
  child.stdout?.destroy();
  child.stderr?.destroy();
}
