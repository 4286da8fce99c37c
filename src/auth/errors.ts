const AUTH_ERROR = Symbol.for('agentward.AuthError');

/**
 * Thrown by an auth entry to stop the list with 401 or 403; any other status throws `RangeError`.
 * @example
 * const onlyAdmins: AuthFn = (req) => { if (isBanned(req)) throw new AuthError(403); return null; };
 */
export class AuthError extends Error {
  readonly status: 401 | 403;
  readonly [AUTH_ERROR] = true;

  constructor(status: 401 | 403) {
    if (status !== 401 && status !== 403) throw new RangeError(`AuthError status must be 401 or 403 (got ${String(status)})`);
    super(status === 401 ? 'Unauthorized' : 'Forbidden');
    this.name = 'AuthError';
    this.status = status;
  }
}

/** Thrown when a helper is created with options that cannot work. The message names the helper and the option, never a secret. */
export class AuthConfigError extends Error {
  readonly code = 'AGENT_AUTH_CONFIG_INVALID' as const;

  constructor(message: string) {
    super(message);
    this.name = 'AuthConfigError';
  }
}

/** True for an `AuthError`, also one from another copy of this module (a bundle may hold two). */
export function isAuthError(error: unknown): error is AuthError {
  if (typeof error !== 'object' || error === null || (error as Record<symbol, unknown>)[AUTH_ERROR] !== true) return false;
  const status = (error as AuthError).status;
  return status === 401 || status === 403;
}
