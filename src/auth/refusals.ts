// SPDX-License-Identifier: MIT
import type { ClaimsRefusal } from './jws/claims.ts';
import type { JwsRefusal } from './jws/verify.ts';

// In order of how far a token got: of several entries that refused one token, the furthest is reported (ties: the first).
const PROGRESS = [
  'malformed',
  'dpop-required',
  'introspection-unavailable',
  'inactive',
  'token-type',
  'alg-not-allowed',
  'type',
  'key-set-unavailable',
  'no-key',
  'mismatch',
  'signature',
  'expired',
  'not-yet-valid',
  'issued-in-future',
  'issuer',
  'audience',
  'tenant',
  'dpop-binding',
  'dpop-proof',
  'dpop-nonce',
  'dpop-replay',
  'scope',
  'no-subject',
] as const;

/** Characters of `kid` and `iss` an `onRefused` listener hears at most. */
export const MAX_REPORTED = 256;

/** Why an entry refused a bearer token (design §12): for the operator, never sent to the client. */
export type RefusalReason = (typeof PROGRESS)[number];

/** Why the route's decision refused a caller no token could help (design §33): the run's starter deciding it. */
export type DecisionReason = 'self-approval';

/** Every reason the JWS core gives is one of these: a reason added there and not here fails the type check. */
export type JwsReasonsCovered = Covered<JwsRefusal | ClaimsRefusal>;
type Covered<T extends RefusalReason> = T;

/** What `onRefused` hears: the entry (`jwt`, `oidc`, `apiToken`), the reason, and the token's `kid`/`iss` when readable. Never the token. */
export interface Refusal {
  /** The refusing entry; absent on a refusal of the route's own decision (`self-approval`, design §33). */
  readonly entry?: string;
  readonly reason: RefusalReason | DecisionReason;
  readonly kid?: string;
  readonly iss?: string;
}

export type RefusalListener = (refusal: Refusal) => void;

/** How an entry tells `routeAuth` why it refused a token. */
export type ReportRefusal = (entry: string, reason: RefusalReason, kid?: string, iss?: string) => void;

/** The refusals of one request: entries `report` them, and `tell()` gives the listener the furthest, once, when the request is refused. */
export interface RequestRefusals {
  readonly report: ReportRefusal;
  /**
   * Tells the listener, if an entry refused a token, and returns what it told (the refused result
   * carries it: the route handler's span names the reason, design §28); what the listener throws
   * is logged, never the answer.
   */
  tell(): Refusal | undefined;
}

const failed = (error: unknown) => console.error('agentward: onRefused failed', error);

export function requestRefusals(listener: RefusalListener): RequestRefusals {
  let best: Refusal | undefined;
  return {
    report(entry, reason, kid, iss) {
      if (best !== undefined && PROGRESS.indexOf(reason) <= PROGRESS.indexOf(best.reason as RefusalReason)) return;
      const refusal: { -readonly [K in keyof Refusal]: Refusal[K] } = { entry, reason };
      // Both come from an unverified token: bounded, so a forged one cannot flood the operator's log.
      if (kid !== undefined) refusal.kid = kid.slice(0, MAX_REPORTED);
      if (iss !== undefined) refusal.iss = iss.slice(0, MAX_REPORTED);
      best = Object.freeze(refusal);
    },
    tell() {
      if (best !== undefined)
        try {
          const result = listener(best) as unknown;
          if (result instanceof Promise) result.catch(failed);
        } catch (error) {
          failed(error);
        }
      return best;
    },
  };
}
