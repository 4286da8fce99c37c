// The limit store of the cloudflare-worker target (design §22, §25): each key's counters in a
// Durable Object of its own, the one place on the network that key is counted. Web-standard
// globals only (no node: import), like src/agent.
import { AuthConfigError, kindOf } from '../auth/internal.ts';
import { refuseOptions } from '../agent/options.ts';
import type { LimitStore, Reservation, WindowCount } from '../http/limit-store.ts';

/** The part of `DurableObjectStorage` this store uses. */
export interface LimitStorageLike {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  /** The entries whose names start with `prefix`. */
  list(options: { prefix: string }): Promise<Map<string, unknown>>;
  /** When the object's alarm is set to ring, in milliseconds since the epoch; `null` when none is set. */
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number): Promise<void>;
}

/** The part of a Durable Object namespace binding the store uses. */
export interface LimitNamespaceLike {
  idFromName(name: string): unknown;
  get(id: unknown): { fetch(request: Request): Promise<Response> };
}

type Operation =
  | { op: 'hit'; key: string; windowSec: number; cost: number; limit: number }
  | { op: 'reserve'; key: string; windowSec: number; cost: number; more: number; limit: number }
  | { op: 'settle'; key: string; windowSec: number; start: number; delta: number }
  | { op: 'acquire'; key: string; lease: string; limit: number; ttlSec: number }
  | { op: 'release'; key: string; lease: string };

const unavailable = (cause?: unknown) =>
  Object.assign(new Error('the limit store (a Durable Object) is unavailable', { cause }), {
    name: 'StoreError',
    code: 'STORE_UNAVAILABLE',
  });

/**
 * A `LimitStore` over a Durable Object namespace whose class is `LimitObject` (bound as
 * `AGENT_LIMITS` by the cloudflare-worker target): each key is counted by the object named after
 * it, so every instance of the worker counts into one place. A call that cannot reach the
 * object throws `STORE_UNAVAILABLE` (the route answers 503). It takes no options: given any, or
 * a `namespace` that is not a binding's, it throws `AuthConfigError`.
 */
export function durableObjectLimitStore(
  namespace: LimitNamespaceLike,
  options?: Readonly<Record<string, never>>,
): LimitStore {
  const helper = 'durableObjectLimitStore()';
  if (typeof namespace?.idFromName !== 'function' || typeof namespace.get !== 'function')
    throw new AuthConfigError(
      `${helper}: namespace must be a Durable Object namespace binding; got ${kindOf(namespace)}`,
    );
  refuseOptions(helper, options);
  async function call(operation: Operation): Promise<unknown> {
    let response: Response;
    try {
      const stub = namespace.get(namespace.idFromName(JSON.stringify(operation.key)));
      response = await stub.fetch(
        new Request('https://limits.agentward/', { method: 'POST', body: JSON.stringify(operation) }),
      );
    } catch (error) {
      throw unavailable(error);
    }
    if (!response.ok) throw unavailable(new Error(`the limit object answered ${response.status}`));
    return response.json();
  }
  return {
    hit: (key, windowSec, cost, limit) => call({ op: 'hit', key, windowSec, cost, limit }) as Promise<WindowCount>,
    reserve: (key, windowSec, cost, more, limit) =>
      call({ op: 'reserve', key, windowSec, cost, more, limit }) as Promise<Reservation>,
    settle: (key, windowSec, start, delta) =>
      call({ op: 'settle', key, windowSec, start, delta }) as Promise<WindowCount>,
    acquire: (key, lease, limit, ttlSec) => call({ op: 'acquire', key, lease, limit, ttlSec }) as Promise<boolean>,
    release: async (key, lease) => void (await call({ op: 'release', key, lease })),
  };
}

interface Window {
  start: number;
  count: number;
}

/** The window length of a stored window's name, `window:<windowSec>:<key>`. */
const windowSecOf = (name: string) => Number(name.slice('window:'.length, name.indexOf(':', 'window:'.length)));

/**
 * What the Durable Object behind `durableObjectLimitStore()` (`LimitObject`, objects.ts) does
 * on its storage, without the `cloudflare:workers` base class: one object per key. Its
 * operations run one after another (a queue in the object, the only instance of it anywhere),
 * each reading and writing its storage, so two calls never both see room for one. Fixed windows
 * on the object's clock; slots are leases that end `ttlSec` after they were last taken. An alarm
 * rings when the earliest stored window ends and removes every window that has ended (design
 * §25), so the keys of callers who came once leave nothing behind.
 */
export class LimitObjectCore {
  readonly #storage: LimitStorageLike;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(state: { storage: LimitStorageLike }) {
    this.#storage = state.storage;
  }

  async fetch(request: Request): Promise<Response> {
    const operation = (await request.json()) as Operation;
    return Response.json(await this.#inTurn(() => this.#run(operation)));
  }

  /** The Durable Object's alarm: removes the windows that have ended, and rings again when the next one ends. */
  async alarm(): Promise<void> {
    await this.#inTurn(async () => {
      const storage = this.#storage;
      const now = Date.now() / 1000;
      let next = Infinity;
      for (const [name, window] of await storage.list({ prefix: 'window:' })) {
        const ends = (window as Window).start + windowSecOf(name);
        if (ends <= now) await storage.delete(name);
        else next = Math.min(next, ends);
      }
      if (next !== Infinity) await storage.setAlarm(next * 1000);
    });
  }

  /** Runs `operation` after the ones before it: one at a time. */
  #inTurn<T>(operation: () => Promise<T>): Promise<T> {
    const done = this.#queue.then(operation);
    this.#queue = done.catch(() => undefined);
    return done;
  }

  /** Sets the alarm to ring when a window that ends at `ends` (seconds) does, unless it rings before. */
  async #alarmBy(ends: number): Promise<void> {
    const set = await this.#storage.getAlarm();
    if (set === null || set > ends * 1000) await this.#storage.setAlarm(ends * 1000);
  }

  async #run(operation: Operation): Promise<Reservation | WindowCount | boolean | null> {
    const storage = this.#storage;
    const now = Date.now() / 1000;
    if (operation.op === 'hit' || operation.op === 'reserve' || operation.op === 'settle') {
      const { key, windowSec } = operation;
      const name = `window:${windowSec}:${key}`;
      const start = Math.floor(now / windowSec) * windowSec;
      const stored = (await storage.get(name)) as Window | undefined;
      const count = stored !== undefined && stored.start >= start ? stored.count : 0;
      const answer = (allowed: boolean, count: number) => ({
        allowed,
        count,
        resetSec: start + windowSec - now,
        start,
      });
      let cost: number;
      if (operation.op !== 'settle') {
        if (count + operation.cost > operation.limit) return { ...answer(false, count), reserved: 0 };
        // hit: `cost`; reserve: `cost` and as much of `more` as fits (design §25).
        cost =
          operation.cost +
          (operation.op === 'reserve' ? Math.min(operation.more, operation.limit - count - operation.cost) : 0);
      } else {
        // The window that began at `start` while it lasts; else only a positive delta counts, in the current one.
        cost = operation.start === start ? Math.max(-count, operation.delta) : Math.max(0, operation.delta);
      }
      // A read creates nothing; a window back at 0 is dropped; a window stored is removed when it ends.
      if (cost !== 0) {
        if (count + cost === 0) await storage.delete(name);
        else await Promise.all([storage.put(name, { start, count: count + cost }), this.#alarmBy(start + windowSec)]);
      }
      return operation.op === 'reserve'
        ? { ...answer(true, count + cost), reserved: cost }
        : answer(true, count + cost);
    }
    // The slots of the key: lease id → when it ends (a Map: any id is a key, none a property).
    const name = `slots:${operation.key}`;
    const leases = new Map((await storage.get(name)) as Map<string, number> | undefined);
    for (const [lease, ends] of leases) if (ends <= now) leases.delete(lease);
    if (operation.op === 'release') {
      leases.delete(operation.lease);
      await (leases.size === 0 ? storage.delete(name) : storage.put(name, leases));
      return null;
    }
    const { lease, limit, ttlSec } = operation;
    if (!leases.has(lease) && leases.size >= limit) return false;
    leases.set(lease, now + ttlSec);
    await storage.put(name, leases);
    return true;
  }
}
