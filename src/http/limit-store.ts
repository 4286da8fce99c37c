// The limit store contract (design §22) and its default, the process's memory. The route
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
}

/**
 * Where the route handler keeps its counters (design §22): `memoryLimitStore()` (the default,
 * one process), `postgresLimitStore()` from `agentward/postgres` (any number of processes on one
 * database), or your own. Each call is atomic on its own: two calls at once never both see
 * room for one. Keys are opaque strings of at most a few hundred characters (they hold a
 * principal's issuer and id); a store must keep them apart exactly.
 *
 * Windows are fixed or sliding, as the store finds best: `resetSec` says when the one that
 * counted frees. A store that cannot be reached throws an error whose `code` is
 * `STORE_UNAVAILABLE` (the route answers 503); a store with no room for a new key answers
 * `allowed: false` rather than forget another key's count.
 */
export interface LimitStore {
  /**
   * Counts `cost` against `key`'s current window of `windowSec` seconds when the window's count
   * plus `cost` is at most `limit`; else counts nothing. `cost` 0 reads the window (allowed while
   * its count is within `limit`).
   */
  hit(key: string, windowSec: number, cost: number, limit: number): Promise<WindowCount>;
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
  /** Keys kept at most (windows and concurrency keys together); default 100,000. */
  maxKeys?: number;
}

export const MEMORY_LIMIT_STORE_DEFAULTS: Readonly<{ maxKeys: number }> = Object.freeze({ maxKeys: 100_000 });

/**
 * Counters in this process's memory: the default store of `limits`. Fixed windows, aligned to
 * multiples of their length. Bounded: past `maxKeys` keys, windows that ended are forgotten
 * first; when every key is live, a new key is refused (`allowed: false`) rather than letting
 * another key start over. Each process counts alone: behind several instances, use a shared
 * store such as `postgresLimitStore()`.
 * @example
 * agentHandler(agent, { auth, limits: { requests: { limit: 60, windowSec: 60 }, store: memoryLimitStore({ maxKeys: 10_000 }) } });
 */
export function memoryLimitStore(options: MemoryLimitStoreOptions = {}): LimitStore {
  const helper = 'memoryLimitStore()';
  if (typeof options !== 'object' || options === null)
    throw new AuthConfigError(`${helper}: options must be { maxKeys? }`);
  checkOptionNames(helper, options, ['maxKeys']);
  const { maxKeys = MEMORY_LIMIT_STORE_DEFAULTS.maxKeys } = options;
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1)
    throw new AuthConfigError(`${helper}: maxKeys must be a positive integer`);
  return memoryCounters(maxKeys, () => Date.now() / 1000);
}

interface Window {
  start: number;
  count: number;
}

/** The stores of this process's memory: their slots live and die with the process, and need no renewal. */
const localStores = new WeakSet<LimitStore>();
export const isLocalStore = (store: LimitStore): boolean => localStores.has(store);

/** `memoryLimitStore()` on a clock of your own (seconds), for tests. */
export function memoryCounters(maxKeys: number, now: () => number): LimitStore {
  // One map per window length: a window moves to its map's end when it starts again, so each
  // map holds its windows in the order they end, and the ended ones are found at its head.
  const windows = new Map<number, Map<string, Window>>();
  const slots = new Map<string, Set<string>>();
  let size = 0;

  /** Room for one more key, forgetting windows that ended; else the seconds until one ends. */
  function room(t: number): number {
    let wait = Infinity;
    if (size < maxKeys) return 0;
    for (const [length, map] of windows) {
      for (const [key, window] of map) {
        if (window.start + length > t) {
          wait = Math.min(wait, window.start + length - t);
          break;
        }
        map.delete(key);
        size--;
      }
    }
    return size < maxKeys ? 0 : wait;
  }

  const store: LimitStore = {
    async hit(key, windowSec, cost, limit) {
      const t = now();
      const start = Math.floor(t / windowSec) * windowSec;
      let map = windows.get(windowSec);
      if (map === undefined) windows.set(windowSec, (map = new Map()));
      let window = map.get(key);
      if (window !== undefined && window.start !== start) {
        map.delete(key);
        size--;
        window = undefined;
      }
      const resetSec = start + windowSec - t;
      const count = window?.count ?? 0;
      if (count + cost > limit) return { allowed: false, count, resetSec };
      if (window === undefined) {
        const wait = room(t);
        if (wait > 0) return { allowed: false, count: limit - cost + 1, resetSec: Math.min(wait, resetSec) };
        map.set(key, { start, count: cost });
        size++;
      } else {
        window.count += cost;
      }
      return { allowed: true, count: count + cost, resetSec };
    },
    async acquire(key, lease, limit) {
      let held = slots.get(key);
      if (held?.has(lease)) return true;
      if ((held?.size ?? 0) >= limit) return false;
      if (held === undefined) {
        if (room(now()) > 0) return false;
        slots.set(key, (held = new Set()));
        size++;
      }
      held.add(lease);
      return true;
    },
    async release(key, lease) {
      const held = slots.get(key);
      if (held === undefined || !held.delete(lease) || held.size > 0) return;
      slots.delete(key);
      size--;
    },
  };
  localStores.add(store);
  return store;
}
