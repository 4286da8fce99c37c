// `wrangler dev` from the repository's node_modules, in a project folder, for the tests that run
// a Worker as a user would: its own HOME (no login, no metrics), its own process group.
import { spawn } from 'node:child_process';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { nodeBin, root, tempFolder } from './build.ts';
import { stopGroup } from './process-group.ts';

/** wrangler dev bundles, then starts workerd: the bound of its start on a loaded machine. */
const READY_MS = 240_000;

/** A loopback port nobody listens on at the moment. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts `wrangler dev` in `cwd` on a free loopback port and resolves with its origin once it
 * prints "Ready on http"; rejects if it exits first or prints nothing of the sort within
 * READY_MS. The test's `after` ends its whole process group.
 */
export async function startWranglerDev(t: { after(fn: () => unknown): void }, cwd: string): Promise<string> {
  const home = tempFolder(t, 'agentward-wrangler-home-');
  const port = await freePort();
  const child = spawn(
    nodeBin,
    [join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), 'dev', '--port', String(port), '--ip', '127.0.0.1'],
    {
      cwd,
      env: {
        PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH}`,
        HOME: home,
        XDG_CONFIG_HOME: join(home, '.config'),
        WRANGLER_SEND_METRICS: 'false',
        CI: '1',
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  t.after(() => stopGroup(child));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`wrangler dev printed no "Ready on http" line within ${READY_MS} ms:\n${output}`)),
      READY_MS,
    );
    const read = (chunk: Buffer) => {
      output += chunk;
      if (/Ready on http/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`wrangler dev exited before it was ready:\n${output}`));
    });
  });
  return `http://127.0.0.1:${port}`;
}
