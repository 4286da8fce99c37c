// SPDX-License-Identifier: MIT
import type { RequestView } from './types.ts';
/** An `Authorization` value over this many characters is skipped without parsing. */
export const MAX_AUTHORIZATION_LENGTH = 16_384; // 16 KiB

/** RFC 6750 `b64token`. */
export const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * Where the credentials after `scheme` (lower case) begin in an `Authorization` value, or -1.
 * Scheme names are case-insensitive, followed by one or more spaces.
 */
export function credentialsStart(value: string, scheme: string): number {
  if (value.length > MAX_AUTHORIZATION_LENGTH) return -1;
  const length = scheme.length;
  if (value.length <= length + 1 || value.charCodeAt(length) !== 32) return -1;
  for (let i = 0; i < length; i++) {
    // ASCII case folding: scheme names are tokens, so only A-Z have another case.
    if ((value.charCodeAt(i) | 0x20) !== scheme.charCodeAt(i)) return -1;
  }
  let start = length + 1;
  while (value.charCodeAt(start) === 32) start++;
  return start < value.length ? start : -1;
}

/** The credentials after `scheme` (lower case) in the `Authorization` header, or `null`. */
export function readCredentials(request: RequestView, scheme: string): string | null {
  const value = request.headers.get('authorization');
  const start = value === null ? -1 : credentialsStart(value, scheme);
  return start < 0 ? null : (value as string).slice(start);
}

/** The bearer token of the request when it is a well-formed `b64token`, else `null`. */
export function readBearerToken(request: RequestView): string | null {
  const token = readCredentials(request, 'bearer');
  return token !== null && B64TOKEN.test(token) ? token : null;
}
