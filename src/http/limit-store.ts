// The limit store contract (design §22, §25) and its default, the process's memory. The route
// handler keeps its counters in one: `agentHandler(agent, { limits: { store } })`.
import { AuthConfigError, checkOptionNames } from '../auth/internal.ts';

/** What a limit store answers about a window. */
export interface WindowCount {
  /** Whether `cost` was added: the window's count plus `cost` stayed within `limit`. */
  readonly allowed: boolean;
  /**
   * The window's count after the call. A store that cannot tell on a refusal answers
   * `limit - cost + 1`, the least count that refuses.
   */
  readonly count: number;
  /** Seconds until the window frees (its count starts again from 0): above 0. */
  readonly resetSec: number;
  /** When the window began, in seconds on the store's own clock: what `settle()` names it by. */
  readonly start: number;
}

/** What a limit store answers about a reservation: the window, and what was counted in it. */
export interface Reservation extends WindowCount {
  /** What was counted: `cost` plus as much of `more` as fit within the limit; 0 when refused. */
  readonly reserved: number;
}

/**
 * Where the route handler keeps its counters (design §22, §25): `memoryLimitStore()` (the
 * default, one process), `postgresLimitStore()` from `agentward/postgres` (any number of
 * processes on one database), the Durable Object store of `agentward/cloudflare`, or your own.
 * Each call is atomic on its own: two calls at once never both see room for one. Keys are opaque
 * strings of at most a few hundred characters (they hold a principal's issuer and id); a store
 * must keep them apart exactly. The handler's keys start with their policy
 * (`requests/<windowSec>:`, `tokens/…`, `failures/…`, `concurrent:`), then `p` and the
 * principal's key or `a` and a client address: a bounded store may bound each kind apart.
 *
 * Windows are fixed or sliding, as the store finds best: `resetSec` says when the one that
 * counted frees. A read (`cost` 0) never creates a key. A store never refuses for want of room:
 * a bounded one forgets its least recently counted windows first. A store that cannot be
 * reached throws an error whose `code` is `STORE_UNAVAILABLE` (the route answers 503).
 *
 * How the handler uses it: `requests` is one `hit` per request; `failures` takes a slot with
 * `hit(…, 1, limit)` before auth and gives it back with `settle(…, -1)` unless the answer is a
 * 401; `tokens` reserves each model turn with `reserve(…, input, outputReserve, limit)` (design
 * §25; a store without `reserve` is asked `hit(…, input + maxOutputTokens, limit)` instead) and
 * replaces the reservation with what the turn spent with `settle(…, spent - reserved)`;
 * `concurrent` holds leases.
 */
export interface LimitStore {
  /**
   * Counts `cost` against `key`'s current window of `windowSec` seconds when the window's count
   * plus `cost` is at most `limit`; else counts nothing. `cost` 0 reads the window (allowed while
   * its count is within `limit`) and creates nothing.
   */
  hit(key: string, windowSec: number, cost: number, limit: number): Promise<WindowCount>;
  /**
   * Counts `cost` and as much of `more` as fits within `limit` against `key`'s current window, as
   * one atomic step: when the window's count plus `cost` is at most `limit`, adds `cost +
   * min(more, limit - count - cost)` and answers it as `reserved`; else counts nothing (`allowed`
   * false, `reserved` 0). What `limits.tokens` reserves for a model turn (design §25): its input,
   * and for what it will write, what the window has left up to `outputReserve`. Optional: without
   * it, a turn reserves its input (and `maxOutputTokens`) with `hit`.
   */
  reserve?(key: string, windowSec: number, cost: number, more: number, limit: number): Promise<Reservation>;
  /**
   * Adds `delta` (negative: gives back) to the window of `key` that began at `start` (a
   * `WindowCount.start` of this store), never taking its count below 0 and never refusing. When
   * that window has ended (or the key is gone), a positive `delta` counts in the current window
   * and a negative one changes nothing. Answers the window as it is after the call.
   */
  settle(key: string, windowSec: number, start: number, delta: number): Promise<WindowCount>;
  /**
   * Takes one of `key`'s `limit` slots for `lease` (a unique id) when fewer than `limit` are
   * taken; the same lease again keeps its slot and is never refused. A store shared by
   * processes gives a slot back `ttlSec` after its lease was last acquired (a process that died
   * holding it); the handler acquires a lease again every `ttlSec / 2` while its request runs.
   */
  acquire(key: string, lease: string, limit: number, ttlSec: number): Promise<boolean>;
  /** Gives `lease`'s slot back; a lease unknown to the store changes nothing. */
  release(key: string, lease: string): Promise<void>;
}

export interface MemoryLimitStoreOptions {
  /**
   * Windows kept at most per kind of key (each policy's, principals apart from client
   * addresses); default 100,000. Past it, the least recently counted window of that kind goes.
   */
  maxKeys?: number;
  /** @internal The test hook: a clock in milliseconds (default `Date.now`). Not part of the public API. See CONTRIBUTING.md. */
  _internal?: { now?: () => number };
}

export const MEMORY_LIMIT_STORE_DEFAULTS: Readonly<{ maxKeys: number }> = Object.freeze({ maxKeys: 100_000 });

/**
 * Counters in this process's memory: the default store of `limits`. Fixed windows, aligned to
 * multiples of their length. Bounded per kind of key (design §25): `maxKeys` windows for each
 * policy's principals and as many for its client addresses, so that many addresses filling
 * `failures` can never crowd out a principal's `requests`; past the bound the least recently
 * counted window of that kind is forgotten, so a new caller is never refused for want of room.
 * A read creates nothing; a window counted back to 0 is dropped. Each process counts alone:
 * behind several instances, use a shared store such as `postgresLimitStore()`.
 * @example
 * agentHandler(agent, { auth, limits: { requests: { limit: 60, windowSec: 60 }, store: memoryLimitStore({ maxKeys: 10_000 }) } });
 */
export function memoryLimitStore(options: MemoryLimitStoreOptions = {}): LimitStore {
  const helper = 'memoryLimitStore()';
  if (typeof options !== 'object' || options === null)
    throw new AuthConfigError(`${helper}: options must be { maxKeys? }`);
  checkOptionNames(helper, options, ['maxKeys', '_internal']);
  const { maxKeys = MEMORY_LIMIT_STORE_DEFAULTS.maxKeys, _internal = {} } = options;
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1)
    throw new AuthConfigError(`${helper}: maxKeys must be a positive integer`);
  if (typeof _internal !== 'object' || _internal === null)
    throw new AuthConfigError(`${helper}: _internal must be an object`);
  checkOptionNames(`${helper} _internal`, _internal, ['now']);
  const { now = Date.now } = _internal;
  if (typeof now !== 'function') throw new AuthConfigError(`${helper}: _internal.now must be a function`);
  return memoryCounters(maxKeys, () => now() / 1000);
}

interface Window {
  start: number;
  count: number;
  /** Counted since the bound last passed over it (a second chance before it is forgotten). */
  used: boolean;
  readonly key: string;
  readonly windowSec: number;
  /** The windows of its kind: a refunded failure slot drops its window without reading the key's kind again. */
  readonly kind: Set<Window>;
}

/**
 * A store of this process's memory, called without a promise: its slots live and die with the
 * process (no renewal), and the limiter skips a promise and a tick per call (docs/design.md §30,
 * "Speed tricks and what they bought").
 */
export interface LocalCounters {
  hit(key: string, windowSec: number, cost: number, limit: number): WindowCount;
  reserve(key: string, windowSec: number, cost: number, more: number, limit: number): Reservation;
  settle(key: string, windowSec: number, start: number, delta: number): WindowCount;
  /** `lease` a number for the limiter's own slots: unique in this process, and no string to make and hash per request. */
  acquire(key: string, lease: string | number, limit: number): boolean;
  release(key: string, lease: string | number): void;
}
const localStores = new WeakMap<LimitStore, LocalCounters>();
/** The memory store behind `store`, called without promises; `undefined` for any other store. */
export const localCounters = (store: LimitStore): LocalCounters | undefined => localStores.get(store);

/** The kind of a key: its policy and window up to `:`, and whether a principal (`p`) or an address (`a`) follows. */
function kindOf(key: string): string {
  const colon = key.indexOf(':');
  return colon < 0 ? '' : key.slice(0, colon + 2);
}

/** The memory store's windows, on the clock `now` (seconds). */
function memoryCounters(maxKeys: number, now: () => number): LimitStore {
  // The windows by length and key; and each kind's windows in the order the bound passes over
  // them: a window counted since the last pass gets a second chance at the end, so the least
  // recently counted goes first, without reordering anything on a count.
  const windows = new Map<number, Map<string, Window>>();
  const kinds = new Map<string, Set<Window>>();
  const slots = new Map<string, Set<string | number>>();

  const answer = (allowed: boolean, count: number, start: number, windowSec: number, t: number): WindowCount => ({
    allowed,
    count,
    resetSec: start + windowSec - t,
    start,
  });

  function add(key: string, windowSec: number, start: number, count: number): void {
    const kindKey = kindOf(key);
    let kind = kinds.get(kindKey);
    if (kind === undefined) kinds.set(kindKey, (kind = new Set()));
    // Only a full kind is walked: an iterator per count costs a request (docs/design.md §30).
    if (kind.size >= maxKeys)
      for (const oldest of kind) {
        if (kind.size < maxKeys) break;
        kind.delete(oldest);
        if (oldest.used) {
          oldest.used = false;
          kind.add(oldest);
        } else {
          windows.get(oldest.windowSec)!.delete(oldest.key);
        }
      }
    const window: Window = { start, count, used: false, key, windowSec, kind };
    kind.add(window);
    let byKey = windows.get(windowSec);
    if (byKey === undefined) windows.set(windowSec, (byKey = new Map()));
    byKey.set(key, window);
  }

  /**
   * Counts `cost` and as much of `more` as fits within `limit` (what `reserve` counts), or nothing
   * past it; answered as a reservation (`reserving`) in one object, not a count copied into one.
   */
  function count(key: string, windowSec: number, cost: number, more: number, limit: number, reserving: boolean) {
    const t = now();
    const start = Math.floor(t / windowSec) * windowSec;
    const window = windows.get(windowSec)?.get(key);
    const counted = window !== undefined && window.start === start ? window.count : 0;
    const allowed = counted + cost <= limit;
    const added = allowed ? cost + Math.min(more, limit - counted - cost) : 0;
    if (added !== 0) {
      if (window === undefined) add(key, windowSec, start, added);
      else (window.start = start), (window.count = counted + added), (window.used = true);
    }
    const resetSec = start + windowSec - t;
    return reserving
      ? { allowed, count: counted + added, resetSec, start, reserved: added }
      : { allowed, count: counted + added, resetSec, start };
  }

  const hit = (key: string, windowSec: number, cost: number, limit: number): WindowCount =>
    count(key, windowSec, cost, 0, limit, false);

  const counters: LocalCounters = {
    hit,
    reserve: (key, windowSec, cost, more, limit) => count(key, windowSec, cost, more, limit, true) as Reservation,
    settle(key, windowSec, start, delta) {
      const t = now();
      const window = windows.get(windowSec)?.get(key);
      if (window === undefined || window.start !== start || start !== Math.floor(t / windowSec) * windowSec)
        return hit(key, windowSec, Math.max(0, delta), Number.MAX_SAFE_INTEGER);
      window.count = Math.max(0, window.count + delta);
      window.used = true;
      // A window back at 0 holds nothing worth a key (a refunded failure slot).
      if (window.count === 0) {
        windows.get(windowSec)!.delete(key);
        window.kind.delete(window);
      }
      return answer(true, window.count, start, windowSec, t);
    },
    acquire(key, lease, limit) {
      let held = slots.get(key);
      if (held?.has(lease)) return true;
      if ((held?.size ?? 0) >= limit) return false;
      // A slot lives only while its request runs: never refused for want of room.
      if (held === undefined) slots.set(key, (held = new Set()));
      held.add(lease);
      return true;
    },
    release(key, lease) {
      const held = slots.get(key);
      if (held?.delete(lease) && held.size === 0) slots.delete(key);
    },
  };
  const store: LimitStore = {
    hit: async (key, windowSec, cost, limit) => counters.hit(key, windowSec, cost, limit),
    reserve: async (key, windowSec, cost, more, limit) => counters.reserve(key, windowSec, cost, more, limit),
    settle: async (key, windowSec, start, delta) => counters.settle(key, windowSec, start, delta),
    acquire: async (key, lease, limit) => counters.acquire(key, lease, limit),
    release: async (key, lease) => counters.release(key, lease),
  };
  localStores.set(store, counters);
  return store;
}
