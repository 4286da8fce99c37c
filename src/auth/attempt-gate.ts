// SPDX-License-Identifier: MIT
// When a key-set fetch, an OIDC discovery or an introspection endpoint's discovery may start (design §3).
import type { InternalOptions } from './internal-options.ts';

/** The least time between two attempts while they fail (or, for a key set, for an unknown `kid`). */
export const KEY_SET_RETRY_MS = 30_000;

/** True inside Cloudflare Workers, where a request must not wait on I/O begun by another request. */
export function isWorkersRuntime(): boolean {
  return typeof navigator !== 'undefined' && navigator.userAgent === 'Cloudflare-Workers';
}

/**
 * How key-set fetches and OIDC discovery start (design §3). Concurrent requests share the
 * attempt in flight, except on Workers (or `perRequestFetch`): there a request may not wait on I/O that
 * another request began, so it starts its own, unless the last attempt failed. Otherwise a new
 * attempt starts at most once per 30 s, and `next()` answers `undefined` in between: those
 * requests skip. So while attempts fail, one starts per 30 s on every runtime.
 */
export function attemptGate(
  internals: InternalOptions,
  attempt: () => Promise<boolean>,
): {
  /** The attempt to wait for at `time`; `own`: on Workers, this request starts its own while another is in flight. */
  next(time: number, own?: boolean): Promise<unknown> | undefined;
} {
  const perRequest = internals.perRequestFetch ?? isWorkersRuntime();
  let pending: Promise<unknown> | undefined;
  let inFlight = 0;
  let failing = false;
  let attemptedAt = -Infinity;
  return {
    next(time, own = true) {
      if (pending !== undefined) return pending;
      const overlap = own && perRequest && !failing && inFlight > 0;
      if (!overlap && time - attemptedAt < KEY_SET_RETRY_MS) return undefined;
      attemptedAt = time;
      inFlight++;
      const run = attempt()
        .then((succeeded) => {
          failing = !succeeded;
        })
        .finally(() => {
          inFlight--;
          if (pending === run) pending = undefined;
        });
      if (!perRequest) pending = run;
      return run;
    },
  };
}
