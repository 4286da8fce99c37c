// SPDX-License-Identifier: MIT

/** Why the claims of a verified token were refused. */
export type ClaimsRefusal = 'malformed' | 'expired' | 'not-yet-valid' | 'issued-in-future' | 'issuer' | 'audience';

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
 * RFC 7519 §4.1 checks at `now` (seconds): `exp` required (unless `expRequired` is false), `nbf` and `iat` when present, all
 * finite numbers, with the tolerance; `iss` a string, exact; `aud` a string or a list of strings.
 * `null` when they pass, else why not (a time claim that is not a finite number is `malformed`).
 */
export function checkClaims(
  claims: Readonly<Record<string, unknown>>,
  policy: ClaimsPolicy,
  now: number,
  expRequired = true,
): ClaimsRefusal | null {
  const { exp, nbf, iat, iss, aud } = claims;
  const tolerance = policy.clockToleranceSec;
  // An introspection answer may leave exp out (RFC 7662 §2.2): the server said the token is active.
  if ((exp !== undefined || expRequired) && !isTime(exp)) return 'malformed';
  if ((nbf !== undefined && !isTime(nbf)) || (iat !== undefined && !isTime(iat))) return 'malformed';
  if (exp !== undefined && now - tolerance >= (exp as number)) return 'expired';
  if (nbf !== undefined && nbf > now + tolerance) return 'not-yet-valid';
  if (iat !== undefined && iat > now + tolerance) return 'issued-in-future';
  if (iss !== undefined && typeof iss !== 'string') return 'issuer';
  if (policy.issuers !== undefined && !policy.issuers.includes(iss as string)) return 'issuer';
  if (
    aud !== undefined &&
    typeof aud !== 'string' &&
    !(Array.isArray(aud) && aud.every((item) => typeof item === 'string'))
  )
    return 'audience';
  if (policy.audiences === undefined) return null;
  if (typeof aud === 'string') return audienceMatches(policy.audiences, aud) ? null : 'audience';
  return Array.isArray(aud) && aud.some((item) => audienceMatches(policy.audiences!, item as string))
    ? null
    : 'audience';
}

/** `audiences` are normalized (`normalizeAudience`) at creation; a token's URL audience is normalized only when the exact one fails. */
function audienceMatches(audiences: readonly string[], aud: string): boolean {
  return audiences.includes(aud) || (URL_AUDIENCE.test(aud) && audiences.includes(normalizeAudience(aud)));
}

const URL_AUDIENCE = /^https?:\/\//i;
const URL_PARTS = /^(https?):\/\/([^/?#]*)([\s\S]*)$/i;

/**
 * An audience as compared (design §15): an absolute `http(s)` URL after RFC 3986 §6.2.2–6.2.3
 * normalization (scheme and host lower case, the default port dropped, an empty path is `/`),
 * its path, query and user info exactly as written; any other audience as it is.
 * @example
 * normalizeAudience('https://MCP.example.com:443/mcp'); // 'https://mcp.example.com/mcp'
 */
export function normalizeAudience(value: string): string {
  const parts = URL_PARTS.exec(value);
  if (parts === null) return value;
  const scheme = parts[1]!.toLowerCase();
  const authority = parts[2]!;
  const at = authority.lastIndexOf('@');
  const userinfo = authority.slice(0, at + 1);
  const hostPort = authority.slice(at + 1);
  // A port follows the last ":" outside an IPv6 literal's brackets.
  const colon = hostPort.lastIndexOf(':');
  const hasPort = colon >= 0 && colon > hostPort.lastIndexOf(']');
  const host = (hasPort ? hostPort.slice(0, colon) : hostPort).toLowerCase();
  const port = hasPort ? hostPort.slice(colon + 1) : '';
  const defaultPort = port === '' || (scheme === 'https' && port === '443') || (scheme === 'http' && port === '80');
  const rest = parts[3]!;
  return `${scheme}://${userinfo}${host}${defaultPort ? '' : `:${port}`}${rest === '' || rest[0] === '?' || rest[0] === '#' ? `/${rest}` : rest}`;
}

/**
 * True when every one of `required` is granted by `scope` (space separated, RFC 9068) or `scp` (a
 * list, or space separated); with `implies` (each scope with every scope it implies, itself
 * included), a scope granted grants what it implies.
 */
export function hasScopes(
  claims: Readonly<Record<string, unknown>>,
  required: readonly string[],
  implies?: ReadonlyMap<string, readonly string[]>,
): boolean {
  const { scope, scp } = claims;
  const granted = new Set<unknown>(Array.isArray(scp) ? scp : typeof scp === 'string' ? scp.split(' ') : []);
  if (typeof scope === 'string') for (const name of scope.split(' ')) granted.add(name);
  // The closure is transitive already: one pass over it, in any order, grants all a held scope implies.
  if (implies) for (const [held, all] of implies) if (granted.has(held)) for (const name of all) granted.add(name);
  return required.every((scope) => granted.has(scope));
}
