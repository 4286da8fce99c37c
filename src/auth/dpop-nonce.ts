// SPDX-License-Identifier: MIT
// DPoP server nonces (RFC 9449 §8, §9; design §29), for entries with `dpop: { nonce: true }`: the
// nonce of each rotation period comes from the replay store, so every instance sharing it offers
// and accepts the same ones; a proof carries the current one or the previous period's.
import { encodeBase64url } from './jws/base64url.ts';
import type { DpopReplayStore } from './dpop-replay.ts';
import { AuthUpstreamError, kindOf } from './errors.ts';

/** A fresh nonce: 128 random bits, base64url (RFC 9449 §8's `NQCHAR`s). What a store keeps under a new key. */
export const newDpopNonce = (): string => encodeBase64url(crypto.getRandomValues(new Uint8Array(16)));

/** The nonces a proof may carry at `nowSec`: the current period's first, then the previous one's. */
export type DpopNonces = (nowSec: number) => Promise<readonly string[]>;

/**
 * The nonces of an entry, asked of `store` once per period and process: a period's nonce is made
 * by the first instance that asks and kept by the store past the period after it.
 */
export function dpopNonces(store: DpopReplayStore, rotateSec: number): DpopNonces {
  const kept = new Map<number, Promise<string>>();
  const of = (period: number, nowSec: number) => {
    let nonce = kept.get(period);
    if (nonce === undefined) {
      if (kept.size > 2) kept.delete(kept.keys().next().value as number);
      nonce = (async () => {
        const value = await (store.nonce as NonNullable<DpopReplayStore['nonce']>)(
          `${rotateSec} ${period}`,
          (period + 3) * rotateSec,
          nowSec,
        );
        // It goes into a header: the store's own value must be a nonce, never anything else.
        if (typeof value !== 'string' || !/^[\w-]{22,256}$/.test(value))
          throw new AuthUpstreamError(
            'AGENT_AUTH_UPSTREAM_INVALID',
            `the DPoP replay store's nonce() must give 22 to 256 base64url characters; got ${kindOf(value)}`,
          );
        return value;
      })();
      // A failed call is asked again by the next request.
      nonce.catch(() => kept.get(period) === nonce && kept.delete(period));
      kept.set(period, nonce);
    }
    return nonce;
  };
  return (nowSec) => {
    const period = Math.floor(nowSec / rotateSec);
    return Promise.all([of(period, nowSec), of(period - 1, nowSec)]);
  };
}
