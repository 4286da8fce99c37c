/** An `Authorization` value over this many characters is skipped without parsing. */
export const MAX_AUTHORIZATION_LENGTH = 16 * 1024;

/** RFC 6750 `b64token`. */
export const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * The credentials after `scheme` (lower case) in the `Authorization` header, or `null`.
 * Scheme names are case-insensitive, followed by one or more spaces.
 */
export function readCredentials(request: Request, scheme: string): string | null {
  const value = request.headers.get('authorization');
  if (value === null || value.length > MAX_AUTHORIZATION_LENGTH) return null;
  const length = scheme.length;
  if (value.length <= length + 1 || value.charCodeAt(length) !== 32) return null;
  if (value.slice(0, length).toLowerCase() !== scheme) return null;
  let start = length + 1;
  while (value.charCodeAt(start) === 32) start++;
  return start < value.length ? value.slice(start) : null;
}

/** The bearer token of the request when it is a well-formed `b64token`, else `null`. */
export function readBearerToken(request: Request): string | null {
  const token = readCredentials(request, 'bearer');
  return token !== null && B64TOKEN.test(token) ? token : null;
}
