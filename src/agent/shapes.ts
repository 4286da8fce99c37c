// Shape tests of unknown values that do more than one built-in does, one implementation each.
// A single `typeof` test or a built-in is written out where it is used (design §38).

/** Whether `value` is an object that is not an array (a JSON object, or any object of a class). */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether `value` is a string with at least one character. */
export const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** Whether `value` is a text part (`{ type: 'text', text }`), as the AI SDK and the UI message stream write one. */
export const isTextPart = (value: unknown): value is { type: 'text'; text: string } =>
  isRecord(value) && value.type === 'text' && typeof value.text === 'string';

/** Throws what `fail` makes of `<name> must be a non-empty string` unless `value` is one. */
export function nonEmptyString(
  value: unknown,
  name: string,
  fail: (message: string) => Error,
): asserts value is string {
  if (!isNonEmptyString(value)) throw fail(`${name} must be a non-empty string`);
}
