// The agent's store for a Worker (design §25): a `Store` whose data lives in one Durable Object,
// reached through its namespace binding from any instance of the Worker, so sessions, checkpoints
// and memory outlive the isolate that made them (a `memoryStore()` lives in one isolate). Inside
// the object, `durableObjectStore` keeps the data on the object's storage. Web-standard globals
// only (no node: import), like src/agent.
import { AuthConfigError, checkOptionNames, kindOf } from '../auth/internal.ts';
import { STORE_METHODS } from '../agent/options.ts';
import type { Store } from '../agent/types.ts';
import { durableObjectStore, type DurableObjectStorageLike } from './durable-object-store.ts';

/** The part of a Durable Object namespace binding the stores use (`env.AGENT_SESSIONS`). */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: unknown): { fetch(request: Request): Promise<Response> };
}

/** Options of `durableObjectSessionStore()`. */
export interface DurableObjectSessionStoreOptions {
  /** The name of the object that holds the store (default `'agentward'`): two agents on one namespace take two names. */
  name?: string;
}

/** Seconds a session's lock outlives its last renewal: an isolate that died in a turn frees it then. */
export const SESSION_LOCK_SEC = 60;

/** The store calls the object answers: every method of `durableObjectStore`, and a session's lock. */
const DATA_CALLS = [
  ...STORE_METHODS,
  'countCheckpoints',
  'listSessions',
  'deleteSession',
  'listPendingApprovals',
] as const;
type DataCall = (typeof DATA_CALLS)[number];
type Call = { op: DataCall; args: unknown[] } | { op: 'lock' | 'unlock'; args: [string, string, number?] };

export const unavailable = (what: string, cause?: unknown) =>
  Object.assign(new Error(`${what} (a Durable Object) is unavailable`, { cause }), {
    name: 'StoreError',
    code: 'STORE_UNAVAILABLE',
  });

/** A namespace binding, or the `AuthConfigError` that names what was given instead. */
export function checkNamespace(helper: string, namespace: unknown): DurableObjectNamespaceLike {
  const binding = namespace as DurableObjectNamespaceLike | null | undefined;
  if (typeof binding?.idFromName !== 'function' || typeof binding.get !== 'function')
    throw new AuthConfigError(
      `${helper}: namespace must be a Durable Object namespace binding (env.<NAME>); got ${kindOf(namespace)}`,
    );
  return binding;
}

/**
 * The agent's `Store` in a Durable Object: give it the namespace binding of a class that is
 * `SessionStoreObject` (`createAgent({ store: durableObjectSessionStore(env.AGENT_SESSIONS) })`).
 * Every instance of the Worker reads and writes the one object named `name`, which keeps the data
 * on its storage (`durableObjectStore`, transcripts of any length in chunks) and runs the turns of
 * a session one after another wherever they come from (`withSession`: a lock the object grants in
 * the order asked, renewed while the turn runs, freed `SESSION_LOCK_SEC` after an isolate that
 * died holding it last renewed it). One object serves the whole store: its calls are answered one
 * after another. A call that cannot reach the object throws `STORE_UNAVAILABLE` (the route answers 503).
 * @example
 * export { SessionStoreObject as AgentSessions } from 'agentward/cloudflare';
 * const agent = createAgent({ name: 'support', model, store: durableObjectSessionStore(env.AGENT_SESSIONS) });
 */
export function durableObjectSessionStore(
  namespace: DurableObjectNamespaceLike,
  options: DurableObjectSessionStoreOptions = {},
): Store {
  const helper = 'durableObjectSessionStore()';
  const binding = checkNamespace(helper, namespace);
  if (typeof options !== 'object' || options === null)
    throw new AuthConfigError(`${helper}: options must be { name? }`);
  checkOptionNames(helper, options, ['name']);
  const { name = 'agentward' } = options;
  if (typeof name !== 'string' || name === '' || name.length > 256)
    throw new AuthConfigError(`${helper}: name must be a string of 1 to 256 characters`);

  async function call(op: Call['op'], ...args: unknown[]): Promise<unknown> {
    let response: Response;
    try {
      // A stub per call: a Worker may not use one made for another request.
      response = await binding
        .get(binding.idFromName(name))
        .fetch(new Request('https://sessions.agentward/', { method: 'POST', body: JSON.stringify({ op, args }) }));
    } catch (error) {
      throw unavailable('the session store', error);
    }
    if (!response.ok) throw unavailable('the session store', new Error(`the object answered ${response.status}`));
    return ((await response.json()) as { value?: unknown }).value;
  }

  const store = Object.fromEntries(
    DATA_CALLS.map((op) => [op, (...args: unknown[]) => call(op, ...args)]),
  ) as unknown as Store;
  store.withSession = async (sessionId, turn) => {
    const lease = crypto.randomUUID();
    await call('lock', sessionId, lease, SESSION_LOCK_SEC);
    const renew = setInterval(
      () => call('lock', sessionId, lease, SESSION_LOCK_SEC).catch(lockFailed),
      (SESSION_LOCK_SEC * 1000) / 3,
    );
    (renew as { unref?(): void }).unref?.();
    try {
      return await turn(store);
    } finally {
      clearInterval(renew);
      await call('unlock', sessionId, lease).catch(lockFailed);
    }
  };
  return store;
}

const lockFailed = (error: unknown) =>
  console.error(
    'agentward: the session store failed to renew or free a session lock (it frees when its lease ends)',
    error,
  );

interface Lease {
  lease: string;
  endsSec: number;
}

/**
 * What the Durable Object behind `durableObjectSessionStore()` (`SessionStoreObject`,
 * objects.ts) does on its storage, without the `cloudflare:workers` base class. Its calls run one after another on its storage; a turn
 * waiting for a session's lock waits outside that line, woken when the lock is freed or its
 * lease ends.
 */
export class SessionStoreObjectCore {
  readonly #storage: DurableObjectStorageLike;
  readonly #store: Store;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #waiting = new Map<string, (() => void)[]>();

  constructor(state: { storage: DurableObjectStorageLike }) {
    this.#storage = state.storage;
    this.#store = durableObjectStore(state.storage);
  }

  async fetch(request: Request): Promise<Response> {
    let call: Call;
    try {
      call = (await request.json()) as Call;
    } catch {
      return new Response(null, { status: 400 });
    }
    const { op, args } = call ?? {};
    if (!Array.isArray(args) || !(op === 'lock' || op === 'unlock' || DATA_CALLS.includes(op as DataCall)))
      return new Response(null, { status: 400 });
    try {
      const value =
        op === 'lock'
          ? await this.#lock(args[0] as string, args[1] as string, args[2] as number)
          : await this.#inLine(() =>
              op === 'unlock'
                ? this.#unlock(args[0] as string, args[1] as string)
                : (this.#store[op] as (...args: unknown[]) => Promise<unknown>)(...args),
            );
      return Response.json(value === undefined ? {} : { value });
    } catch (error) {
      console.error('agentward: a session store call failed in its Durable Object', error);
      return new Response(null, { status: 500 });
    }
  }

  #inLine<T>(task: () => Promise<T>): Promise<T> {
    const done = this.#queue.then(task);
    this.#queue = done.catch(() => undefined);
    return done;
  }

  /** Takes (or renews) the session's lock for `lease`, waiting while another lease holds it. */
  async #lock(sessionId: string, lease: string, ttlSec: number): Promise<void> {
    for (;;) {
      const waitSec = await this.#inLine(async () => {
        const key = lockKey(sessionId);
        const held = (await this.#storage.get(key)) as Lease | undefined;
        const now = Date.now() / 1000;
        if (held !== undefined && held.lease !== lease && held.endsSec > now) return held.endsSec - now;
        await this.#storage.put(key, { lease, endsSec: now + ttlSec } as Lease);
        return 0;
      });
      if (waitSec === 0) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(wake, waitSec * 1000 + 10);
        const queue = this.#waiting.get(sessionId) ?? [];
        this.#waiting.set(sessionId, queue);
        queue.push(wake);
        function wake() {
          clearTimeout(timer);
          resolve();
        }
      });
    }
  }

  async #unlock(sessionId: string, lease: string): Promise<void> {
    const key = lockKey(sessionId);
    if (((await this.#storage.get(key)) as Lease | undefined)?.lease === lease) await this.#storage.delete(key);
    // The turns waiting ask again, in the order they came.
    const waiting = this.#waiting.get(sessionId);
    this.#waiting.delete(sessionId);
    for (const wake of waiting ?? []) wake();
  }
}

const lockKey = (sessionId: string) => `lock:${JSON.stringify(sessionId)}`;
