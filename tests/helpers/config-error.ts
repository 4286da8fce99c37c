import assert from 'node:assert/strict';
import { AuthConfigError } from '../../src/auth/index.ts';

/** Messages the assertions below saw, for tests/repo/config-errors.test.ts to find in src/ (design §38). */
export const seenMessages = new Set<string>();

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
      seenMessages.add(error.message);
      assert.equal(error.code, 'AGENT_AUTH_CONFIG_INVALID', what);
      assert.ok(error.message.startsWith(`${helper}: `), `${what}: the message names ${helper}: ${error.message}`);
      for (const secret of secrets)
        assert.ok(!String(error).includes(secret), `${what}: the message never contains the secret`);
      return true;
    },
    what,
  );
}

/** A factory and two mistakes made creating it: the option at fault, and the call making the mistake. */
export interface FactoryMistakes {
  /** The factory as its messages name it, e.g. `'memoryStore()'`. */
  readonly factory: string;
  /** A key the factory does not take, and a call passing it. */
  readonly unknownKey: readonly [key: string, create: () => unknown];
  /** An option of the wrong type, and a call passing it. */
  readonly wrongType: readonly [option: string, create: () => unknown];
}

/**
 * The one configuration error rule (design §30): both mistakes throw (or reject with)
 * `AuthConfigError`, also a `TypeError`, code `AGENT_AUTH_CONFIG_INVALID`, with a message that
 * starts with the factory's name, names the option, and holds none of `secrets`.
 */
export async function assertFactoryRefuses(mistakes: FactoryMistakes, secrets: readonly string[] = []): Promise<void> {
  const { factory } = mistakes;
  const cases = [
    ['an unknown key', mistakes.unknownKey],
    ['a wrong type', mistakes.wrongType],
  ] as const;
  for (const [kind, [option, create]] of cases) {
    const what = `${factory} given ${kind} (${option})`;
    let error: unknown;
    try {
      // A factory that wrongly accepted the mistake may have made a server: close it, so the run never hangs.
      const made = (await create()) as { close?: unknown } | undefined;
      if (typeof made?.close === 'function') await (made.close as () => Promise<void>)();
    } catch (thrown) {
      error = thrown;
    }
    assert.ok(error !== undefined, `${what}: throws`);
    assert.ok(error instanceof AuthConfigError, `${what}: AuthConfigError, got ${String(error)}`);
    seenMessages.add(error.message);
    assert.ok(error instanceof TypeError, `${what}: a TypeError too`);
    assert.equal(error.name, 'AuthConfigError', what);
    assert.equal(error.code, 'AGENT_AUTH_CONFIG_INVALID', what);
    assert.ok(error.message.startsWith(factory), `${what}: the message names ${factory}: ${error.message}`);
    const named = kind === 'an unknown key' ? `unknown option ${JSON.stringify(option)}` : option;
    assert.ok(error.message.includes(named), `${what}: the message names ${named}: ${error.message}`);
    for (const secret of secrets)
      assert.ok(!error.message.includes(secret), `${what}: the message never shows a secret`);
  }
}
