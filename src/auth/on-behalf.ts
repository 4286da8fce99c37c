// SPDX-License-Identifier: MIT
// What every call on the caller's behalf shares (design §27): the caller's own presented token as
// the subject (never another's, never an expired one), the request checked, and the token got for
// it kept until 30 s before it expires, keyed by the subject's SHA-256 so that no caller's token is
// kept. tokenExchange() and idJag() are built on it.
import { isScopeList, throwConfigError } from './errors.ts';
import { decodeBase64url, encodeBase64url } from './jws/base64url.ts';
import { parseJsonObject } from './jws/json.ts';
import { checkOptionNames, isNumberIn } from './options.ts';
import { presentedToken } from './presented-token.ts';
import { sha256 } from './sha256.ts';
import { TokenExchangeError, type ExchangedToken } from './token-endpoint.ts';
import type { Principal } from './types.ts';

/** A kept token is used no later than this before it expires. */
const MARGIN_MS = 30_000;

/** What a call asks for (RFC 8693 §2.1), as lists: `audience`, `resource` (RFC 8707) and `scope`. */
export interface OnBehalfRequest {
  readonly audience: string[];
  readonly resource: string[];
  readonly scope: string[];
}

/** Checks `cache`: `false` is 0 (none), `undefined` 1,000 entries, `{ maxEntries }` 1 to 100,000. */
export function readCache(helper: string, value: unknown): number {
  if (value === false) return 0;
  if (value !== undefined && (typeof value !== 'object' || value === null))
    throwConfigError(helper, 'cache must be false or { maxEntries? }');
  checkOptionNames(`${helper}: cache`, value ?? {}, ['maxEntries']);
  const { maxEntries = 1000 } = (value ?? {}) as { maxEntries?: unknown };
  if (!isNumberIn(maxEntries, 1, 100_000, true))
    throwConfigError(helper, 'cache.maxEntries must be an integer from 1 to 100000');
  return maxEntries;
}

const list = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** The request's `audience`, `resource` and `scope` as lists, checked; `keys` are those `helper` takes (an `AuthConfigError` names what is wrong). */
export function readRequest(helper: string, request: unknown, keys: readonly string[]): OnBehalfRequest {
  if (typeof request !== 'object' || request === null) throwConfigError(helper, 'the request must be an object');
  checkOptionNames(helper, request, keys);
  const { audience, resource, scope } = request as Record<string, unknown>;
  const audiences = list(audience);
  if (!audiences.every((value) => typeof value === 'string' && value !== ''))
    throwConfigError(helper, 'audience must be a non-empty string or a list of them');
  const resources = list(resource).map((value) => {
    const url = (typeof value === 'string' || value instanceof URL) && URL.canParse(value) ? new URL(value) : undefined;
    // RFC 8707 §2: an absolute URI without a fragment.
    if (url === undefined || url.hash !== '' || String(value).includes('#'))
      throwConfigError(helper, 'resource must be an absolute URI without a fragment, or a list of them');
    return url.href;
  });
  const scopes = typeof scope === 'string' ? scope.split(' ').filter(Boolean) : list(scope);
  if (scope !== undefined && !isScopeList(scopes))
    throwConfigError(helper, 'scope must be RFC 6749 scope tokens: a space-separated string or a list');
  return { audience: audiences as string[], resource: resources, scope: scopes as string[] };
}

/** The token `principal` presented on the request now running, still unexpired at `nowSec`; else `TokenExchangeError` `NO_SUBJECT_TOKEN` (with `leg`, for idJag()). */
export function subjectOf(principal: unknown, nowSec: number, leg?: 'idp'): string {
  const subject =
    typeof principal === 'object' && principal !== null ? presentedToken(principal as Principal) : undefined;
  if (subject === undefined || expired(subject, principal as Principal, nowSec))
    throw new TokenExchangeError('NO_SUBJECT_TOKEN', undefined, leg);
  return subject;
}

/** Whether the presented token has expired: a JWT's `exp` (verified when the request was accepted), else the claims' (an introspection answer's). */
function expired(token: string, principal: Principal, nowSec: number): boolean {
  const parts = token.split('.');
  const payload = parts.length === 3 ? decodeBase64url(parts[1]!) : null;
  let exp: unknown;
  try {
    exp = payload === null ? undefined : parseJsonObject(new TextDecoder().decode(payload))?.exp;
  } catch {
    // Not a JWT's payload: the claims say.
  }
  exp ??= principal.claims?.exp;
  return typeof exp === 'number' && exp <= nowSec;
}

/** Tokens got on a caller's behalf, least recently used first (a `Map` keeps insertion order), at most `maxEntries` (0: none kept). */
export interface KeptTokens {
  /** The key of (subject, request): the subject's SHA-256, never the token. */
  keyOf(subject: string, request: OnBehalfRequest): string;
  /** The token kept for `key`, if it is more than 30 s from expiry. */
  take(key: string): ExchangedToken | undefined;
  /** Keeps `token` for `key` when it has an expiry more than 30 s away. */
  keep(key: string, token: ExchangedToken): void;
}

export function keptTokens(maxEntries: number, now: () => number): KeptTokens {
  const kept = new Map<string, { token: ExchangedToken; until: number }>();
  return {
    keyOf: (subject, request) => `${encodeBase64url(sha256(subject))} ${JSON.stringify(request)}`,
    take(key) {
      const hit = kept.get(key);
      if (hit === undefined) return undefined;
      kept.delete(key);
      if (hit.until <= now()) return undefined;
      kept.set(key, hit);
      return hit.token;
    },
    keep(key, token) {
      if (maxEntries === 0 || token.expiresAt === undefined || token.expiresAt - MARGIN_MS <= now()) return;
      if (kept.size >= maxEntries) kept.delete(kept.keys().next().value as string);
      kept.set(key, { token, until: token.expiresAt - MARGIN_MS });
    },
  };
}
