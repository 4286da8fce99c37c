/**
 * Runs a worker entry file inside workerd (the Cloudflare Workers runtime) through Miniflare,
 * for the Node-only tests that check the auth layer and the handler in a real Workers runtime.
 *
 * The entry is bundled with esbuild the way Workers bundlers do (ESM, neutral platform, the
 * `workerd` / `worker` / `browser` export conditions), so a `node:` import or a Node global in
 * the code under test fails here: no `nodejs_compat` flag is set unless a test asks for one.
 *
 * @example
 * const worker = await startWorker({ entry: 'tests/helpers/workerd/auth-worker.ts', bindings: { API_TOKEN: 'abc' } });
 * try {
 *   const response = await worker.fetch('http://worker/strict', { headers: { authorization: 'Bearer abc' } });
 *   assert.equal(response.status, 200);
 * } finally {
 *   await worker.dispose();
 * }
 *
 * Reminder for worker entries: workerd forbids random values, timers and I/O (fetch, crypto
 * digests are fine to *define*, not to *run*) at global scope. Create helpers at module scope
 * only when their creation does no such work; otherwise create them on the first request.
 */
import { build, type BuildOptions } from 'esbuild';
import { Miniflare, type MiniflareOptions } from 'miniflare';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface WorkerOptions {
  /** The worker entry file: absolute, or relative to the repository root. Its default export has `fetch(request, env, ctx)`. */
  entry: string;
  /** Bindings visible as `env` in the worker (strings, JSON values). */
  bindings?: Record<string, unknown>;
  /** Default `'2026-07-01'`. */
  compatibilityDate?: string;
  /** Default none (so Node compatibility is *not* on). */
  compatibilityFlags?: string[];
  /** Extra esbuild options (e.g. `define`), merged over the defaults. */
  esbuild?: Partial<BuildOptions>;
  /** Extra Miniflare options (e.g. `outboundService`, `serviceBindings`), merged over the defaults. */
  miniflare?: Partial<MiniflareOptions>;
  /** Also print the worker's console output (it is always collected in `logs`). Default false. */
  printLogs?: boolean;
}

/** One line the worker wrote with `console.*`. */
export interface WorkerLog {
  readonly level: string;
  readonly message: string;
}

export interface RunningWorker {
  /** Sends a request to the worker; `url` may use any host, e.g. `http://worker/path`. */
  fetch(url: string, init?: RequestInit): Promise<Response>;
  /** Stops workerd. Always call it (in `finally` or an `after` hook). */
  dispose(): Promise<void>;
  /** Everything the worker logged so far, in order (workerd delivers it shortly after the response). */
  readonly logs: readonly WorkerLog[];
  /** Resolves with the first log line matching `predicate`, waiting for it up to `timeoutMs` (default 5000). */
  waitForLog(predicate: (log: WorkerLog) => boolean, timeoutMs?: number): Promise<WorkerLog>;
  /** The Miniflare instance, for what `fetch` does not cover. */
  readonly miniflare: Miniflare;
}

/** Bundles `entry` into one ESM script for workerd and returns its source. */
export async function bundleWorker(entry: string, esbuild: Partial<BuildOptions> = {}): Promise<string> {
  const result = await build({
    entryPoints: [isAbsolute(entry) ? entry : join(root, entry)],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    target: 'es2022',
    logLevel: 'silent',
    ...esbuild,
    // The Workers runtime's own modules, as wrangler leaves them (agentward/cloudflare's classes extend its DurableObject).
    ...(esbuild.bundle !== false && { external: ['cloudflare:*', ...(esbuild.external ?? [])] }),
  });
  const [output] = result.outputFiles ?? [];
  if (output === undefined) throw new Error(`esbuild produced no output for ${entry}`);
  return output.text;
}

/** Bundles the worker entry and starts it in workerd; resolves once it answers requests. */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const script = await bundleWorker(options.entry, options.esbuild);
  const logs: WorkerLog[] = [];
  const miniflare = new Miniflare({
    modules: true,
    script,
    compatibilityDate: options.compatibilityDate ?? '2026-07-01',
    compatibilityFlags: options.compatibilityFlags ?? [],
    bindings: options.bindings ?? {},
    telemetry: { enabled: false },
    structuredWorkerdLogs: true,
    handleStructuredLogs: ({ level, message }: WorkerLog) => {
      logs.push({ level, message });
      if (options.printLogs) console.log(`[worker ${level}] ${message}`);
    },
    ...options.miniflare,
  } as MiniflareOptions);
  try {
    await miniflare.ready;
  } catch (error) {
    // A worker that fails to start (an error at its top level) must not keep the test process alive.
    await miniflare.dispose().catch(() => undefined);
    throw error;
  }
  return {
    miniflare,
    logs,
    // Miniflare answers with its own undici Response; it has the Web Response interface.
    fetch: (url, init) => miniflare.dispatchFetch(url, init as never) as unknown as Promise<Response>,
    dispose: () => miniflare.dispose(),
    async waitForLog(predicate, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = logs.find(predicate);
        if (found !== undefined) return found;
        if (Date.now() > deadline)
          throw new Error(`no matching worker log within ${timeoutMs} ms; logs: ${JSON.stringify(logs)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}
