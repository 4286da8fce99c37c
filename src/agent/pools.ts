// Which database pool a store, a limit store or an audit log takes its connections from (design
// §34): the route handler refuses an audit log or a limit store on the very pool whose
// connection a turn of the agent's store holds, since their writes inside the turn would wait for
// a connection of that pool, and once every connection is held by a turn nothing proceeds. Kept
// under a symbol, off the public API, and not enumerable: a pool's options hold the database's
// password, and a store that is logged must not show it.

/** The key of the pool a store or log takes its connections from. */
export const POOL: unique symbol = Symbol('agentward.pool') as never;

/** Marks `value` as taking its connections from `pool`; returns `value`. */
export function withPool<T extends object>(value: T, pool: object): T {
  Object.defineProperty(value, POOL, { value: pool });
  return value;
}

/** The pool `value` takes its connections from, when it was marked with one. */
export function poolOf(value: unknown): object | undefined {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  const pool: unknown = (value as { [POOL]?: unknown })[POOL];
  return typeof pool === 'object' && pool !== null ? pool : undefined;
}
