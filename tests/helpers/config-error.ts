import assert from 'node:assert/strict';
import { AuthConfigError } from '../../src/auth/errors.ts';

/**
 * Asserts that `create` throws `AuthConfigError` with code `AGENT_AUTH_CONFIG_INVALID`, a
 * message naming `helper` (e.g. `'basic()'`), and none of `secrets` in its message.
 */
export function assertConfigError(
  create: () => unknown,
  helper: string,
  what: string,
  secrets: readonly string[] = [],
): void {
  assert.throws(
    create,
    (error: unknown) => {
      assert.ok(error instanceof AuthConfigError, `${what}: AuthConfigError`);
      assert.equal(error.code, 'AGENT_AUTH_CONFIG_INVALID', what);
      assert.ok(error.message.startsWith(`${helper}: `), `${what}: the message names ${helper}: ${error.message}`);
      for (const secret of secrets)
        assert.ok(!String(error).includes(secret), `${what}: the message never contains the secret`);
      return true;
    },
    what,
  );
}
