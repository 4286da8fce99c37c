// SPDX-License-Identifier: MIT
import { isRecord } from './jws/json.ts';
import { readCredentials } from './authorization.ts';
import { builtInEntry } from './built-in.ts';
import { decodeBase64 } from './jws/base64url.ts';
import { checkQuotable } from './challenges.ts';
import { constantTimeEqual } from './constant-time.ts';
import { sha256 } from './sha256.ts';
import { notASecret } from './weak-secrets.ts';
import { kindOf, throwConfigError } from './errors.ts';
import { checkOptionNames } from './options.ts';
import { makePrincipal } from './principal.ts';
import type { AuthFn, Principal, RequestView } from './types.ts';

/** Checks a user name and password itself; it must compare in constant time. */
export type BasicVerifier = (user: string, password: string) => boolean | Promise<boolean>;

export interface BasicOptions {
  /** User name to password (plain object or `Map`), or a verifier function. */
  users: Readonly<Record<string, string>> | ReadonlyMap<string, string> | BasicVerifier;
  /** Realm of the `WWW-Authenticate` challenge; default `"agent"`. */
  realm?: string;
}

const utf8 = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: true });

/** RFC 7617 user-id and password, NFC-normalized, or `null` for anything malformed. */
function readBasicCredentials(request: RequestView): [user: string, password: string] | null {
  const encoded = readCredentials(request, 'basic');
  // Judged only for a request that carries Basic credentials: a list's other entries pay nothing.
  const bytes = encoded === null || crossSiteWrite(request) ? null : decodeBase64(encoded);
  if (bytes === null) return null;
  let decoded: string;
  try {
    decoded = utf8.decode(bytes);
  } catch {
    return null;
  }
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  return [decoded.slice(0, colon).normalize('NFC'), decoded.slice(colon + 1).normalize('NFC')];
}

/**
 * A browser's request from another site with a method that can change something. Browsers send the
 * Basic credentials they cached after their own login dialog with any request to the origin, so a
 * page elsewhere could make one post with them (CSRF): such a request skips. `Sec-Fetch-Site` says
 * where it came from; a browser without it is judged by `Origin` against the request's host (its URL's,
 * or the `Host` header's), and, when the request's URL is `https`, by the `Origin`'s scheme too.
 * Programs (curl, services) send neither and are never affected.
 */
function crossSiteWrite(request: RequestView): boolean {
  const { method, headers } = request;
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return false;
  const site = headers.get('sec-fetch-site');
  if (site !== null) return site !== 'same-origin' && site !== 'none';
  const origin = headers.get('origin');
  if (origin === null) return false;
  // `Origin: null` (an opaque origin, a sandboxed frame) is no site of this server's.
  const from = URL.canParse(origin) ? new URL(origin) : null;
  const own = new URL(request.url);
  // Over https, a page served over http is another site, whatever its host (design §20).
  if (from === null || (own.protocol === 'https:' && from.protocol !== 'https:')) return true;
  return from.host !== own.host && from.host !== headers.get('host')?.toLowerCase();
}

/** The fewest characters a configured password may have: NIST SP 800-63B's minimum (design §26). */
const MIN_PASSWORD_LENGTH = 8;

function configuredUsers(users: unknown): [string, string][] {
  const pairs = users instanceof Map ? [...users.entries()] : Object.entries(users as Record<string, unknown>);
  if (pairs.length === 0) throwConfigError('basic()', 'users must name at least one user');
  const seen = new Set<string>();
  return pairs.map(([user, password]) => {
    if (typeof user !== 'string' || user.length === 0)
      throwConfigError('basic()', 'every user name must be a non-empty string');
    if (user.includes(':')) throwConfigError('basic()', 'a user name must not contain ":" (RFC 7617)');
    if (typeof password !== 'string')
      throwConfigError('basic()', `the password of a user must be a string; got ${kindOf(password)}`);
    const name = user.normalize('NFC');
    if (seen.has(name)) throwConfigError('basic()', 'two user names are the same after NFC normalization');
    seen.add(name);
    const normalized = password.normalize('NFC');
    const weak = notASecret(normalized, MIN_PASSWORD_LENGTH);
    if (weak !== undefined) throwConfigError('basic()', `the password of ${JSON.stringify(name.slice(0, 64))} ${weak}`);
    return [name, normalized];
  });
}

/**
 * Accepts HTTP Basic credentials (RFC 7617). Names and passwords are NFC-normalized and every
 * configured user is compared on every request, so an unknown user costs what a wrong password costs.
 * A configured password needs at least 8 characters and must not spell a JavaScript value (`undefined`…).
 * A browser's cross-site POST (or other unsafe method) skips, whatever its credentials. Use only over HTTPS.
 * @example
 * const entry = basic({ users: { ada: env.ADA_PASSWORD }, realm: 'agent' });
 */
export function basic(options: BasicOptions): AuthFn {
  if (typeof options !== 'object' || options === null)
    throwConfigError('basic()', 'options { users, realm? } are required');
  checkOptionNames('basic()', options, ['users', 'realm']);
  const { users, realm = 'agent' } = options;
  checkQuotable('basic()', 'realm', realm);
  let check: (request: RequestView) => unknown;

  if (typeof users === 'function') {
    check = async (request) => {
      const credentials = readBasicCredentials(request);
      if (credentials === null) return null;
      return (await users(credentials[0], credentials[1])) === true
        ? makePrincipal({ id: credentials[0], type: 'user', authenticator: 'basic' })
        : null;
    };
  } else {
    if (!isRecord(users)) {
      throwConfigError(
        'basic()',
        `users must be a map of user name to password, or a function (user, password) => boolean; got ${kindOf(users)}`,
      );
    }
    const pairs = configuredUsers(users);
    const principals: Principal[] = pairs.map(([id]) => makePrincipal({ id, type: 'user', authenticator: 'basic' }));
    // Each user is one 16-word row: SHA-256 of the name, then of the password.
    const row = (name: string, password: string) => {
      const words = new Int32Array(16);
      words.set(new Int32Array(sha256(name).buffer), 0);
      words.set(new Int32Array(sha256(password).buffer), 8);
      return words;
    };
    const rows = pairs.map(([name, password]) => row(name, password));

    // Synchronous, as apiToken(): no thread-pool job per request.
    check = (request) => {
      const credentials = readBasicCredentials(request);
      if (credentials === null) return null;
      const presented = row(credentials[0], credentials[1]);
      let match = 0;
      for (let i = 0; i < rows.length; i++) match |= Number(constantTimeEqual(rows[i]!, presented)) * (i + 1);
      return match === 0 ? null : principals[match - 1]!;
    };
  }
  const entry = builtInEntry({ entry: 'basic', scopes: [] }, check);
  entry.challenges = [{ scheme: 'Basic', realm }];
  return entry;
}
