// Shared by the build tests: temp folders, fixture paths, running a built server.js as a child process,
// and checking the playground page a server answers.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const nodeBin = join(root, 'node_modules', '.bin', 'node');
export const fixture = (name: string) => join(root, 'fixtures', 'agents', name);

/** The token baked into the fixtures' agentward.json (a test value, not a secret). */
export const BAKED_TOKEN = 'fixture-baked-token-not-a-secret-0123456789';
export const LIST_TOKEN = 'fixture-list-token-0123456789';
export const ENV_TOKEN = 'env-token-from-AGENT_API_TOKEN-0123456789';

/** A fresh temp folder, removed by `cleanup()`. */
export function tempFolder(t: { after(fn: () => void): void }, prefix = 'agentward-build-'): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

/** Writes `files` (path → content) under `folder`, starting from a copy of `from` when given. */
export function writeDir(folder: string, files: Record<string, string>, from?: string): string {
  if (from !== undefined) cpSync(from, folder, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(folder, path)), { recursive: true });
    writeFileSync(join(folder, path), content);
  }
  return folder;
}

export interface BuiltServer {
  /** Where the agent routes are, e.g. `http://127.0.0.1:41234/agent`. */
  agentUrl: string;
  stop(): Promise<number | null>;
}

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', ...extra };
  if (!('AGENT_API_TOKEN' in extra)) delete env.AGENT_API_TOKEN;
  return env;
}

/** How long a server may take to print where it listens (or to exit) before the test gives up on it. */
const START_BOUND_MS = 60_000;

/** Runs `node <out>/server.js` and resolves once it prints where it listens. */
export function startBuiltServer(out: string, env: Record<string, string> = {}): Promise<BuiltServer> {
  return startNodeServer([join(out, 'server.js')], env);
}

/** Runs `node <args>` (a server: server.js, or the CLI's start) and resolves once it prints where it listens. */
export function startNodeServer(args: string[], env: Record<string, string> = {}): Promise<BuiltServer> {
  const child = spawn(nodeBin, args, { cwd: tmpdir(), env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    // Bounded: a server that neither listens nor exits fails the test instead of hanging it.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} printed no "listening on" in ${START_BOUND_MS} ms:\n${stdout}\n${stderr}`));
    }, START_BOUND_MS);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve({ agentUrl: match[1] as string, stop: () => (child.kill('SIGTERM'), exited) });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited (${code}) before listening:\n${stdout}\n${stderr}`));
    });
  });
}

/** Runs `node <out>/server.js` expecting it to fail at start-up; resolves with its exit code and output. */
export function runBuiltServerToExit(
  out: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(nodeBin, [join(out, 'server.js')], {
    cwd: tmpdir(),
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => {
    // Bounded: a server that neither listens nor exits is ended, and the test sees its output.
    const timer = setTimeout(() => child.kill('SIGKILL'), START_BOUND_MS);
    child.once('exit', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr })));
    // A server that did start would never exit on its own: end it, so the test fails instead of hanging.
    child.stdout.on('data', () => {
      if (/listening on/.test(stdout)) child.kill('SIGKILL');
    });
  });
}

/** POSTs a message to the agent with an optional Authorization header. */
export async function sendMessage(
  agentUrl: string,
  authorization?: string,
): Promise<{ status: number; text?: string; headers: Headers }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization !== undefined) headers.authorization = authorization;
  const response = await fetch(agentUrl, { method: 'POST', headers, body: JSON.stringify({ message: 'who am I?' }) });
  const body = (await response.json()) as { text?: string };
  return { status: response.status, text: body.text, headers: response.headers };
}

export { bearerAuthorization as bearer } from './requests.ts';
export const basicAuth = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/**
 * Checks a playground page and its Content-Security-Policy: its inline script and styles are
 * src/node/playground/script.js and styles.css as they are, and the CSP allows each by its SHA-256.
 */
export function assertPlaygroundInlined(html: string, csp: string): void {
  const directives = csp.split('; ');
  for (const [tag, file, directive] of [
    ['script', 'script.js', 'script-src'],
    ['style', 'styles.css', 'style-src'],
  ] as const) {
    const source = readFileSync(join(root, 'src', 'node', 'playground', file), 'utf8');
    assert.equal(
      new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(html)?.[1],
      source,
      `the page inlines ${file} as it is`,
    );
    const hash = createHash('sha256').update(source).digest('base64');
    assert.ok(directives.includes(`${directive} 'sha256-${hash}'`), `the CSP allows ${file} by its hash: ${csp}`);
  }
}
