// SPDX-License-Identifier: MIT
// Values that cannot be secrets (design §26): the words an unset or mistyped variable turns into
// (an unset variable in a template literal is the text "undefined"), and values too short to
// withstand guessing.

const SPELLED_VALUES = /^(?:undefined|null|nan|true|false|\[object object\])$/i;

/**
 * Why `value` cannot be a secret of at least `min` characters, said without showing it (it may be
 * one), or `undefined` when it can: `apiToken()` tokens and `AGENT_API_TOKEN` (16), `basic()`
 * passwords (8, NIST SP 800-63B's minimum).
 * @example
 * notASecret('undefined', 16); // 'is what an unset or mistyped variable turns into, not a secret'
 */
export function notASecret(value: string, min: number): string | undefined {
  if (SPELLED_VALUES.test(value)) return 'is what an unset or mistyped variable turns into, not a secret';
  const length = [...value].length;
  return length < min ? `must be at least ${min} characters (got ${length})` : undefined;
}
