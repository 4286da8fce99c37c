// SPDX-License-Identifier: MIT
// `_internal`, the one test hook of src/auth (design §30, CONTRIBUTING.md "The test hook").
import { checkOptionNames } from './options.ts';

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/**
 * `_internal`, the test hook of `jwt()`, `oidc()` and `introspection()` (CONTRIBUTING.md, "The test
 * hook"): not part of the public API. A clock in milliseconds (default `Date.now`, read per call),
 * a `fetch`, the key-set and discovery timeout (default 5,000 ms), the Workers mode forced (default: detected).
 */
export interface InternalOptions {
  readonly now?: () => number;
  readonly fetch?: FetchLike;
  readonly timeoutMs?: number;
  readonly perRequestFetch?: boolean;
}

/** Checks `_internal`: a plain object, closed like every option object. */
export function readInternalOptions(helper: string, value: unknown): InternalOptions {
  const internal = (value ?? {}) as InternalOptions;
  checkOptionNames(`${helper}: _internal`, internal, ['now', 'fetch', 'timeoutMs', 'perRequestFetch']);
  return internal;
}

/** The clock of `internal`, in milliseconds: `Date.now` looked up per call, so a test may fake the global clock. */
export const clockOf = (internal: InternalOptions): (() => number) => internal.now ?? (() => Date.now());
