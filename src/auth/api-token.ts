// SPDX-License-Identifier: MIT
import { B64TOKEN, readCredentials } from './authorization.ts';
import { builtInEntry, type EntryContext } from './built-in.ts';
import { constantTimeEqual } from './constant-time.ts';
import { sha256 } from './sha256.ts';
import { notASecret } from './weak-secrets.ts';
import { kindOf, throwConfigError } from './errors.ts';
import { checkOptionNames } from './options.ts';
import { makePrincipal } from './principal.ts';
import type { AuthFn, RequestView } from './types.ts';

/** The fewest characters an API token may have (design §26). */
export const MIN_TOKEN_LENGTH = 16;

/**
 * Accepts `Authorization: Bearer <token>` when the token equals `token`, compared in constant time.
 * The token needs at least 16 characters and must not spell a JavaScript value (`undefined`,
 * `null`, `NaN`, `true`, `false`, `[object Object]`: what an unset variable turns into).
 * @example
 * const entry = apiToken(env.AGENT_API_TOKEN, { id: 'ci-bot' });
 */
export function apiToken(token: string, options: { id?: string } = {}): AuthFn {
  const helper = 'apiToken()';
  if (typeof token !== 'string' || !B64TOKEN.test(token)) {
    throwConfigError(
      helper,
      `token must be a non-empty RFC 6750 b64token (letters, digits, -._~+/ and trailing =); got ${kindOf(token)}`,
    );
  }
  const weak = notASecret(token, MIN_TOKEN_LENGTH);
  if (weak !== undefined) throwConfigError(helper, `token ${weak}`);
  if (typeof options !== 'object' || options === null) throwConfigError(helper, 'options must be { id? }');
  checkOptionNames(helper, options, ['id']);
  const { id = 'api-token' } = options;
  if (typeof id !== 'string' || id === '') throwConfigError(helper, 'id must be a non-empty string');
  return apiTokenDigestEntry(sha256(token), id);
}

/** Where an `apiToken()` entry keeps its `id`, so a list can refuse two tokens of one principal (design §20). */
export const API_TOKEN_ID: unique symbol = Symbol.for('agentward.apiTokenId') as never;

/**
 * `apiToken()` for a server that knows only the SHA-256 digest of the token (a build output).
 * `listed: false` leaves the id unmarked: the node server's `AGENT_API_TOKEN` entry, which the
 * specification appends whatever ids the list holds.
 */
export function apiTokenDigestEntry(expected: Uint8Array, id: string, listed = true): AuthFn {
  const principal = makePrincipal({ id, type: 'service', authenticator: 'api-token' });
  // Synchronous: no thread-pool job, no promise (see sha256() for what that saves).
  const check = (request: RequestView, { report }: EntryContext) => {
    const presented = readCredentials(request, 'bearer');
    if (presented === null) return null;
    // Not the configured token: a mismatch (design §31), no signature was involved.
    const refused = !B64TOKEN.test(presented)
      ? 'malformed'
      : constantTimeEqual(expected, sha256(presented))
        ? undefined
        : 'mismatch';
    if (refused === undefined) return principal;
    report?.('apiToken', refused);
    return null;
  };
  const entry = builtInEntry({ entry: 'apiToken', scopes: [] }, check);
  if (listed) Object.defineProperty(entry, API_TOKEN_ID, { value: id });
  entry.challenges = [{ scheme: 'Bearer' }];
  return entry;
}
