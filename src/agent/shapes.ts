// Shape tests of unknown values, one implementation each. Written out at each use the object
// test was 30 bytes of the edge bundle; a call is 6 (design §23's budgets).

/** Whether `value` is an object or an array, not `null` (a function is not). */
export const isObject = (value: unknown): value is Record<PropertyKey, unknown> =>
  typeof value === 'object' && value !== null;

/** Whether `value` is an object that is not an array (a JSON object, or any object of a class). */
export const isRecord = (value: unknown): value is Record<string, unknown> => isObject(value) && !isArray(value);

/** Whether `value` is a string with at least one character. */
export const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** Whether `value` is a string (the empty one too). */
export const isString = (value: unknown): value is string => typeof value === 'string';

/** Whether `value` is a function. */
export const isFunction = (value: unknown): value is (...args: never[]) => unknown => typeof value === 'function';

/** Whether `value` is `true` or `false`. */
export const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean';

/** `Array.isArray`, under the name the other tests share. */
export const isArray = Array.isArray;

/** Whether `value` is a text part (`{ type: 'text', text }`), as the AI SDK and the UI message stream write one. */
export const isTextPart = (value: unknown): value is { type: 'text'; text: string } =>
  isObject(value) && value.type === 'text' && isString(value.text);

/** Throws what `fail` makes of `<name> must be a non-empty string` unless `value` is one. */
export function nonEmptyString(
  value: unknown,
  name: string,
  fail: (message: string) => Error,
): asserts value is string {
  if (!isNonEmptyString(value)) throw fail(`${name} must be a non-empty string`);
}

/** `Number.isInteger`, under the name the other tests share. */
export const isInteger = Number.isInteger;

/** `Object.freeze`, named once: a minifier keeps a global's path at every call, not an import's. */
export const freeze = Object.freeze;
