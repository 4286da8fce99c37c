// What bench/http.ts and bench/runtimes.ts share: the answer every server gives, a store that
// keeps nothing, the quiet-machine gate, and asking a child process over IPC; and what the
// in-process suites share: `POST /agent` as the node server's route view gives it.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { RunResult, Store } from '../src/agent/types.ts';
import type { RouteRequest } from '../src/http/route-request.ts';

/** Other processes' CPU use (fraction of the machine) under which the machine counts as quiet. */
export const QUIET_BUSY = 0.1;

/** One measurement the load generator (bench/http.ts --load-generator) runs. */
export interface Load {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  seconds?: number;
  amount?: number;
}
export interface LoadResult {
  requestsPerSec: number;
  ok: number;
  failed: number;
}

/** What every server answers to `POST /agent`: the shape of a run result. */
export function runResult(message: string): RunResult {
  return {
    sessionId: crypto.randomUUID(),
    status: 'completed',
    text: message,
    messages: [
      { role: 'user', content: message },
      { role: 'assistant', content: message },
    ],
    approvals: [],
  };
}

/** A store that keeps nothing: the benchmark measures the server, auth and run, not storage growth. */
export function discardStore(): Store {
  return {
    loadSession: async () => undefined,
    saveSession: async () => undefined,
    loadCheckpoint: async () => undefined,
    saveCheckpoint: async () => undefined,
    deleteCheckpoint: async () => false,
    listCheckpoints: async () => [],
    loadMemory: async () => [],
    appendMemory: async () => undefined,
    listSessions: async () => [],
    deleteSession: async () => false,
  };
}

export function ask<T>(child: ChildProcess, message: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = () => reject(new Error('a benchmark process exited'));
    child.once('exit', onExit);
    child.once('message', (answer) => {
      child.off('exit', onExit);
      resolve(answer as T);
    });
    child.send(message as object);
  });
}

/** Fraction of the machine's CPU time spent busy over `ms` (from /proc/stat); 0 where it cannot be read. */
export async function machineBusy(ms: number): Promise<number> {
  const read = () => {
    try {
      const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
      const idle = fields[3]! + (fields[4] ?? 0);
      return { idle, total: fields.slice(0, 8).reduce((a, b) => a + b, 0) };
    } catch {
      return undefined;
    }
  };
  const before = read();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = read();
  if (before === undefined || after === undefined || after.total === before.total) return 0;
  return 1 - (after.idle - before.idle) / (after.total - before.total);
}

/** Waits until the machine is quiet (at most `maxWaitMs`): whether it was, the last reading, and how long it waited. */
export async function quietGate(maxWaitMs: number): Promise<{ quiet: boolean; busy: number; waitedMs: number }> {
  const started = Date.now();
  let busy = 1;
  do {
    busy = await machineBusy(250);
    if (busy <= QUIET_BUSY) return { quiet: true, busy, waitedMs: Date.now() - started };
  } while (Date.now() - started < maxWaitMs);
  return { quiet: false, busy, waitedMs: Date.now() - started };
}

/**
 * `POST /agent` with `{"message":"hello"}` and `Authorization: Bearer <token>`, as the node
 * server's route view gives it (the socket's address, the body at once): a new one per call.
 */
export function routeViewPost(token: string): () => RouteRequest {
  const body = new TextEncoder().encode('{"message":"hello"}');
  const fields = new Map([
    ['authorization', `Bearer ${token}`],
    ['content-type', 'application/json'],
  ]);
  const headers = { get: (name: string) => fields.get(name) ?? null };
  const signal = new AbortController().signal;
  return () => ({
    method: 'POST',
    url: 'http://127.0.0.1:3000/agent',
    headers,
    signal,
    clientAddress: '127.0.0.1',
    readBody: () => Promise.resolve(body),
    request: () => {
      throw new Error('the built-in entries read the route view');
    },
  });
}
