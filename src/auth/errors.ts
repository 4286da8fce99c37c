// SPDX-License-Identifier: MIT

const AUTH_ERROR = Symbol.for('agentward.AuthError');

/** RFC 6749 §3.3 `scope-token`. */
export const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** A non-empty list of RFC 6749 scope tokens: what every `scopes` option and `AuthError`'s `scope` take. */
export const isScopeList = (value: unknown): value is readonly string[] =>
  Array.isArray(value) &&
  value.length > 0 &&
  value.every((scope) => typeof scope === 'string' && SCOPE_TOKEN.test(scope));

/**
 * Thrown by an auth entry to stop the list with 401 or 403; any other status throws `AuthConfigError`.
 * A 403 with `scope` is the OAuth step-up answer (RFC 6750 §3.1, design §15): `WWW-Authenticate:
 * Bearer error="insufficient_scope", scope="<scope>", resource_metadata="<URL>"`, which tells an
 * MCP client which scopes to ask for.
 * @example
 * const onlyAdmins: AuthFn = (req) => { if (isBanned(req)) throw new AuthError(403); return null; };
 * const writers = (claims) => { if (!canWrite(claims)) throw new AuthError(403, { scope: ['mcp:write'] }); return null; };
 */
export class AuthError extends Error {
  readonly status: 401 | 403;
  /** `AGENT_AUTH_UNAUTHORIZED` with 401, `AGENT_AUTH_FORBIDDEN` with 403. */
  readonly code: 'AGENT_AUTH_UNAUTHORIZED' | 'AGENT_AUTH_FORBIDDEN';
  /** The scopes a 403 asks the client to obtain (`insufficient_scope`). */
  readonly scope?: readonly string[];

  constructor(status: 401 | 403, options?: { scope?: readonly string[] }) {
    if (status !== 401 && status !== 403)
      throw new AuthConfigError(
        `new AuthError(): status must be 401 or 403; got ${typeof status === 'number' ? status : kindOf(status)}`,
      );
    const scope = options?.scope;
    if (scope !== undefined) {
      if (status !== 403)
        throw new AuthConfigError('new AuthError(): scope is the answer of a 403 (insufficient_scope); got status 401');
      if (!isScopeList(scope))
        throw new AuthConfigError(
          `new AuthError(): scope must be a non-empty list of RFC 6749 scope tokens; got ${kindOf(scope)}`,
        );
    }
    super(status === 401 ? 'Unauthorized' : 'Forbidden');
    // Set here rather than declared as a field: a class with a computed field stays in every bundle, used or not.
    (this as { [AUTH_ERROR]?: true })[AUTH_ERROR] = true;
    this.name = 'AuthError';
    this.status = status;
    this.code = status === 401 ? 'AGENT_AUTH_UNAUTHORIZED' : 'AGENT_AUTH_FORBIDDEN';
    if (scope !== undefined) this.scope = Object.freeze([...scope]);
  }
}

/**
 * What a value is, for a message that must not show it (it may be a secret): `undefined`, `null`,
 * `an empty string`, `a string`, `a number`, `an object`, `an array`… A missing value says so
 * (`got undefined`), which points at an unset environment variable.
 */
export function kindOf(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (value === '') return 'an empty string';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * Thrown when a helper, or any factory of agentward, is created with options that cannot work: an
 * unknown key, a wrong type, a bad or missing value (design §30). The message names the factory and
 * the option, never a secret. A `TypeError`, so `instanceof TypeError` checks keep working.
 */
export class AuthConfigError extends TypeError {
  readonly code = 'AGENT_AUTH_CONFIG_INVALID' as const;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuthConfigError';
  }
}

/** The codes of `AuthUpstreamError`. */
export type AuthUpstreamErrorCode = 'AGENT_AUTH_UPSTREAM_INVALID' | 'AGENT_AUTH_UPSTREAM_UNAVAILABLE';

/**
 * What a helper could not use from a server or store it was configured with: an OpenID provider's
 * discovery document, a key set, an introspection endpoint, or the DPoP replay store's nonce.
 * `code` is `AGENT_AUTH_UPSTREAM_INVALID` (it answered, but not something usable: a status other
 * than 2xx, a body too large or not JSON, an issuer other than the configured one, a nonce that is
 * not base64url) or `AGENT_AUTH_UPSTREAM_UNAVAILABLE` (no answer in time). The helper catches it:
 * the request skips (or fails closed) and the message goes into the warning that names the URL,
 * never a token or a body.
 */
export class AuthUpstreamError extends Error {
  readonly code: AuthUpstreamErrorCode;

  constructor(code: AuthUpstreamErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuthUpstreamError';
    this.code = code;
  }
}

/** Throws the `AuthConfigError` `<helper>: <message>`: what a helper was given cannot work. */
export function throwConfigError(helper: string, message: string): never {
  throw new AuthConfigError(`${helper}: ${message}`);
}

/** True for an `AuthError`, also one from another copy of this module (a bundle may hold two). */
export function isAuthError(error: unknown): error is AuthError {
  if (typeof error !== 'object' || error === null || (error as Record<symbol, unknown>)[AUTH_ERROR] !== true)
    return false;
  const status = (error as AuthError).status;
  return status === 401 || status === 403;
}
