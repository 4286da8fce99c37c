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
 */
export function checkClaims(claims: Readonly<Record<string, unknown>>, policy: ClaimsPolicy, now: number): boolean {
  const { exp, nbf, iat, iss, aud } = claims;
  const tolerance = policy.clockToleranceSec;
  if (!isTime(exp) || now - tolerance >= exp) return false;
  if (nbf !== undefined && (!isTime(nbf) || nbf > now + tolerance)) return false;
  if (iat !== undefined && (!isTime(iat) || iat > now + tolerance)) return false;
  if (iss !== undefined && typeof iss !== 'string') return false;
  if (policy.issuers !== undefined && !policy.issuers.includes(iss as string)) return false;
  if (aud !== undefined && typeof aud !== 'string' && !(Array.isArray(aud) && aud.every((item) => typeof item === 'string'))) return false;
  if (policy.audiences === undefined) return true;
  if (typeof aud === 'string') return policy.audiences.includes(aud);
  return Array.isArray(aud) && aud.some((item) => policy.audiences!.includes(item as string));
}
