/**
 * What the PostgreSQL store throws besides the driver's own errors; callers branch on `code`:
 * `STORE_UNAVAILABLE` (the database cannot be reached, the connection was lost, or no pooled
 * connection became free in time: the route handler answers 503 `{"error":"Service
 * Unavailable"}`; the next call tries again) and `STORE_SCHEMA` (the schema is missing, or
 * newer than this agentward: run `migrate()`, or upgrade agentward). The driver's error, if
 * any, is the `cause`; messages never hold a value that was stored or queried.
 */
export class StoreError extends Error {
  readonly code: 'STORE_UNAVAILABLE' | 'STORE_SCHEMA';

  constructor(code: StoreError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreError';
    this.code = code;
  }
}

/**
 * SQLSTATE classes that say the database, not the statement, failed: 08 connection exception,
 * 53 insufficient resources (too many connections), 57 operator intervention (shutdown,
 * restart), 58 system error.
 */
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57', '58']);

/** A server's error report (node-postgres `DatabaseError`): it carries a severity and a SQLSTATE. */
export function sqlState(error: unknown): string | undefined {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return typeof severity === 'string' && typeof code === 'string' ? code : undefined;
}

/**
 * The error to throw for what the driver threw: a lost or refused connection (no SQLSTATE: a
 * socket error, "Connection terminated", a driver timeout) or a server that is going away
 * becomes `STORE_UNAVAILABLE`; any other server error (a bug, a constraint) is thrown as it is.
 */
export function storeFailure(error: unknown): unknown {
  if (error instanceof StoreError) return error;
  const state = sqlState(error);
  if (state !== undefined && !UNAVAILABLE_CLASSES.has(state.slice(0, 2))) return error;
  if (state === undefined && (error instanceof TypeError || error instanceof RangeError)) return error;
  return new StoreError('STORE_UNAVAILABLE', 'the database is unavailable', { cause: error });
}
