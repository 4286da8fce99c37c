import type { RefusalReason } from '../refusals.ts';

/** What the claims of a verified JWT must satisfy. */
export interface ClaimsPolicy {
  /** `iss` must equal one of these exactly; `undefined`: any issuer. */
  readonly issuers: readonly string[] | undefined;
  /** `aud` must contain one of these; `undefined` only with `allowAnyAudience: true`. */
  readonly audiences: readonly string[] | undefined;
  /** Skew allowed for `exp`, `nbf` and `iat`, in seconds. */
  readonly clockToleranceSec: number;
}

const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/**
 * RFC 7519 §4.1 checks at `now` (seconds): `exp` required, `nbf` and `iat` when present, all
 * finite numbers, with the tolerance; `iss` a string, exact; `aud` a string or a list of strings.
 * `null` when they pass, else why not (a time claim that is not a finite number is `malformed`).
 */
export function checkClaims(claims: Readonly<Record<string, unknown>>, policy: ClaimsPolicy, now: number): RefusalReason | null {
  const { exp, nbf, iat, iss, aud } = claims;
  const tolerance = policy.clockToleranceSec;
  if (!isTime(exp) || (nbf !== undefined && !isTime(nbf)) || (iat !== undefined && !isTime(iat))) return 'malformed';
  if (now - tolerance >= exp) return 'expired';
  if (nbf !== undefined && nbf > now + tolerance) return 'not-yet-valid';
  if (iat !== undefined && iat > now + tolerance) return 'issued-in-future';
  if (iss !== undefined && typeof iss !== 'string') return 'issuer';
  if (policy.issuers !== undefined && !policy.issuers.includes(iss as string)) return 'issuer';
  if (aud !== undefined && typeof aud !== 'string' && !(Array.isArray(aud) && aud.every((item) => typeof item === 'string'))) return 'audience';
  if (policy.audiences === undefined) return null;
  if (typeof aud === 'string') return policy.audiences.includes(aud) ? null : 'audience';
  return Array.isArray(aud) && aud.some((item) => policy.audiences!.includes(item as string)) ? null : 'audience';
}

/** True when every one of `required` is granted by `scope` (space separated, RFC 9068) or `scp` (a list, or space separated). */
export function hasScopes(claims: Readonly<Record<string, unknown>>, required: readonly string[]): boolean {
  const { scope, scp } = claims;
  const granted = new Set<unknown>(Array.isArray(scp) ? scp : typeof scp === 'string' ? scp.split(' ') : []);
  if (typeof scope === 'string') for (const name of scope.split(' ')) granted.add(name);
  return required.every((scope) => granted.has(scope));
}
