// SPDX-License-Identifier: MIT
// Where used DPoP proofs are remembered (RFC 9449 §11.1, design §16, §20, §26): the store's shape and
// the default store in memory.
import { newDpopNonce } from './dpop-nonce.ts';

/**
 * Remembers proofs seen: `seen` is true when `key` was seen already (and has not expired at
 * `nowSec`), and records it otherwise, until `expiresAtSec`. `nowSec` is the clock reading the
 * entry judged the proof's `iat` by: a store that judges expiry by it too never lets a proof
 * the entry still accepts pass as unseen (design §20).
 */
export interface DpopReplayStore {
  seen(key: string, expiresAtSec: number, nowSec?: number): boolean | Promise<boolean>;
  /**
   * For DPoP server nonces (`dpop: { nonce: true }`, design §29): the value kept under `key`; the
   * first call for a key keeps a new one (`newDpopNonce()`) until `expiresAtSec`, and every later
   * call, from any instance sharing the store, gets that same value (`nowSec`: the entry's clock,
   * as for `seen`). Optional: a store without it
   * serves entries without nonces.
   */
  nonce?(key: string, expiresAtSec: number, nowSec?: number): string | Promise<string>;
}

/** Proofs the default replay store holds at once; when full it refuses new proofs (fails closed). */
export const DEFAULT_REPLAY_KEYS = 100_000;

let processStore: DpopReplayStore | undefined;

/**
 * The replay store of every entry without a `dpopReplay` of its own: one per process, so a proof
 * one entry accepted is refused by every other (two `jwt()` entries for two audiences included).
 */
export const defaultReplayStore = (): DpopReplayStore => (processStore ??= memoryReplayStore(DEFAULT_REPLAY_KEYS));

/**
 * The memory replay store: proof keys in memory until they expire, at most `limit` at once.
 * Full, it refuses every new proof and warns once (it fails closed): size it, or share a
 * database store, for the proofs a window of `dpopMaxAgeSec` brings.
 */
export function memoryReplayStore(limit: number): DpopReplayStore {
  const expiries = new Map<string, number>();
  // A few keys at once: an entry asks for two periods' nonces.
  const nonces = new Map<string, readonly [string, number]>();
  let warned = false;
  const store: DpopReplayStore = {
    nonce(key, expiresAtSec, now = Date.now() / 1000) {
      for (const [old, [, at]] of nonces) if (at <= now) nonces.delete(old);
      let kept = nonces.get(key);
      if (kept === undefined) nonces.set(key, (kept = [newDpopNonce(), expiresAtSec]));
      return kept[0];
    },
    seen(key, expiresAtSec, now = Date.now() / 1000) {
      // Keys arrive about in the order they expire: drop expired ones from the oldest on.
      for (const [old, at] of expiries) {
        if (at > now) break;
        expiries.delete(old);
      }
      const at = expiries.get(key);
      if (at !== undefined && at > now) return true;
      if (expiries.size >= limit) {
        if (!warned)
          console.warn(
            `agentward: the DPoP replay store holds ${limit} proofs; new proofs are refused until older ones expire (use dpopReplay to share a larger store)`,
          );
        warned = true;
        return true;
      }
      expiries.set(key, expiresAtSec);
      return false;
    },
  };
  return store;
}
