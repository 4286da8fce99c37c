// `agentward dev`'s server: the directory served as `start` serves it, plus what dev alone adds:
// the playground, and in its answers who each request ran as (the dev inspector, design §24);
// why each token was refused; what a model's provider said when a call failed (design §31); the
// banner once per dev run; and, when the directory does not load, 503 until the next save.
// dev.ts starts it with an IPC channel and tells it the run's token over it. Started any other
// way it refuses to run: no environment variable, option or header makes `start`, a built server
// or `serve()` say who a request ran as (design §26).
import { createServer } from 'node:http';
import { onProviderFailure } from '../agent/provider-detail.ts';
import { readApiTokenEnv } from '../node/server.ts';
import { DEV_SERVER_PORT_IN_USE, type DevReport, type DevStart } from './dev-messages.ts';
import { errorLine } from './error-line.ts';
import { listenAddress, PortInUseError, printProviderFailure, serveDirectory } from './server-main.ts';

const report = (message: DevReport) => process.send?.(message);

const LOAD_FAILED = JSON.stringify({
  error:
    'Service Unavailable: the agent did not load. The terminal running agentward dev says why; saving a fix restarts it.',
});

/**
 * When the directory does not load (a syntax error, a missing agent.ts): the reason is printed,
 * then every request on PORT and HOST answers 503 (never a refused or hanging connection) until
 * the next change restarts the server. The body does not repeat the reason: it can quote
 * anything the directory's code threw. Resolves with the port it listens on.
 */
export async function serveLoadFailure(): Promise<number> {
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
  return bound;
}

async function run(start: DevStart, folder: string, quiet: boolean): Promise<void> {
  if (start.port !== undefined) process.env.PORT = String(start.port);
  // A bad AGENT_API_TOKEN is no file's fault: the server stops, and dev says it exited.
  readApiTokenEnv();
  onProviderFailure(printProviderFailure);
  try {
    const server = await serveDirectory(
      folder,
      { quiet, playground: true, logRefusals: true },
      { token: start.token, banner: start.banner },
    );
    report({ type: 'ready', port: Number(new URL(server.url).port) });
  } catch (error) {
    if (error instanceof PortInUseError) throw error;
    console.error(errorLine(error));
    report({ type: 'failed', port: await serveLoadFailure() });
  }
}

const [folder, ...flags] = process.argv.slice(2);
if (process.send === undefined || folder === undefined) {
  console.error('agentward: this is the server of agentward dev, which starts it; run: agentward dev <dir>');
  process.exit(2);
}
// dev went away without stopping its server (killed): nobody reads this terminal any more.
process.once('disconnect', () => process.exit(0));
process.once('message', (start: DevStart) => {
  run(start, folder, flags.includes('--quiet')).catch((error: unknown) => {
    console.error(error instanceof PortInUseError ? `agentward: ${error.message}` : errorLine(error));
    process.exit(error instanceof PortInUseError ? DEV_SERVER_PORT_IN_USE : 1);
  });
});
