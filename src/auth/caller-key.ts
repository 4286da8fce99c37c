// SPDX-License-Identifier: MIT
// The caller key (design §32): who a principal is, made by one function and read by everything
// that asks "the same caller?": session ownership, limits, token-exchange sameness, the audit
// record and spans.
import type { Principal } from './types.ts';

/**
 * `[tenant, issuer, authenticator, id]`, absent parts as `''`: the same `id` from another issuer,
 * another entry or another tenant is another caller. `tenant`: `principal.tenant`, the tenant an
 * entry accepted (design §12), so two tenants' callers never meet, even for the same `sub`.
 */
export type CallerKey = readonly [tenant: string, issuer: string, authenticator: string, id: string];

/** The caller key of `principal`. */
export const callerKey = (principal: Principal): CallerKey => [
  principal.tenant ?? '',
  principal.issuer ?? '',
  principal.authenticator,
  principal.id,
];

/** Are `a` and `b` one caller? Part by part, never through a joined string. */
export const sameCaller = (a: CallerKey, b: CallerKey): boolean =>
  a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];
