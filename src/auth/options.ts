// SPDX-License-Identifier: MIT
import { AuthConfigError } from './errors.ts';

/**
 * Option objects are closed (design §14): a key outside `known` throws, naming the key and the
 * known key it most resembles. TypeScript warns its users of a typo; a JavaScript user's `atuh`
 * must not quietly leave a route open. The key's value is never shown: it may be a secret.
 * They are plain too (design §20): an object whose prototype is neither `Object.prototype` nor
 * `null` throws, since an inherited key would slip past this check and still be read.
 * `fail` builds the helper's own error (default `AuthConfigError`).
 * @example
 * checkOptionNames('jwt()', options, ['secret', 'audience']); // jwt(): unknown option "audiance" (did you mean "audience"?)
 */
export function checkOptionNames(
  helper: string,
  options: object,
  known: readonly string[],
  fail: (message: string) => Error = (message) => new AuthConfigError(message),
): void {
  const prototype = Object.getPrototypeOf(options);
  if (prototype !== Object.prototype && prototype !== null) {
    throw fail(
      `${helper}: options must be a plain object, not one with a prototype (its keys would be read unchecked)`,
    );
  }
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = closest(key, known);
    const shown = JSON.stringify(key.length > 64 ? `${key.slice(0, 64)}…` : key);
    if (near === undefined) throw fail(`${helper}: unknown option ${shown} (known: ${known.join(', ')})`);
    throw fail(`${helper}: unknown option ${shown} (did you mean "${near}"?) (known: ${known.join(', ')})`);
  }
}

/** Whether `value` is a finite number (an integer when `whole`) from `min` to `max`: every numeric option's check. */
export const isNumberIn = (value: unknown, min: number, max: number, whole = false): value is number =>
  typeof value === 'number' &&
  (whole ? Number.isInteger(value) : Number.isFinite(value)) &&
  value >= min &&
  value <= max;

/** The known name closest to `name` by edit distance (case-insensitive, a swap of neighbours counts one), when close enough to be a typo. */
export function closest(name: string, known: readonly string[]): string | undefined {
  const typed = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(typed, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // About one edit in three: `atuh` → `auth`, `prot` → `port`, `clockTolerence` → `clockToleranceSec`.
  return bestDistance <= Math.max(1, Math.ceil(typed.length / 3)) ? best : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
function editDistance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Infinity;
  // d[i][j]: the distance from the first i characters of `a` to the first j of `b`.
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i]!;
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(d[i - 1]![j]! + 1, row[j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      // Two neighbours swapped (an index before the start reads undefined, which no character equals).
      if (a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
