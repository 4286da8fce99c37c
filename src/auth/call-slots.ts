// SPDX-License-Identifier: MIT
// A few calls at once, the others in line, first in, first out: introspection()'s calls to the
// authorization server (design §20). Garbage tokens slow valid ones down; they do not get them refused.

/** Gives back a slot taken with `take()`; calling it again does nothing. */
export type Release = () => void;

interface Waiter {
  /** When the wait ends without a slot (ms). */
  readonly until: number;
  readonly resolve: (release: Release | undefined) => void;
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * At most `size` slots held at once; a caller beyond waits for one in line, first in, first out,
 * at most `waitMs`, behind at most `maxWaiting - 1` others. A slot is held until released or for
 * `leaseMs` at most: on Workers a cancelled request never runs its `finally`, and its slot must
 * come back all the same (the holder's call is bounded by its own timeout, under `leaseMs`).
 * A waiter creates its own promise: the one that releases a slot only resolves it, so on Workers
 * no request waits on a promise or I/O that another request made.
 * @example
 * const slots = callSlots(16, 1_000, 6_000);
 * const release = await slots.take(5_000);
 * if (release === undefined) return null; // the line was full, or the wait ran out
 * try { return await call(); } finally { release(); }
 */
export function callSlots(size: number, maxWaiting: number, leaseMs: number, now: () => number = Date.now) {
  const held = new Set<{ readonly until: number }>();
  /** In line, oldest first (a `Set` keeps insertion order; a waiter whose time ran out leaves it). */
  const line = new Set<Waiter>();

  const grant = (): Release => {
    const lease = { until: now() + leaseMs };
    held.add(lease);
    return () => {
      if (held.delete(lease)) serve();
    };
  };
  /** Drops leases past their time, then hands the free slots to the oldest waiters. */
  const serve = () => {
    const time = now();
    for (const lease of held) if (lease.until <= time) held.delete(lease);
    for (const waiter of line) {
      if (held.size >= size) break;
      line.delete(waiter);
      clearTimeout(waiter.timer);
      // One whose timer could not fire (its request was cancelled) gets nothing, and takes nothing.
      waiter.resolve(waiter.until > time ? grant() : undefined);
    }
  };

  return {
    /** A slot, now or after a wait in line; `undefined` when the line is full or `waitMs` ran out. */
    take(waitMs: number): Promise<Release | undefined> {
      serve();
      if (held.size < size && line.size === 0) return Promise.resolve(grant());
      if (line.size >= maxWaiting) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        const waiter: Waiter = { until: now() + waitMs, resolve };
        waiter.timer = setTimeout(() => {
          if (line.delete(waiter)) resolve(undefined);
        }, waitMs);
        line.add(waiter);
      });
    },
  };
}
