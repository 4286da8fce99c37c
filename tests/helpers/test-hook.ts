// The test hook of jwt(), oidc(), introspection(), tokenExchange() and memoryLimitStore(): the `_internal` option (CONTRIBUTING.md, "The test hook").
import { jwt, type JwtOptions } from '../../src/auth/jwt.ts';
import type { AuthFn } from '../../src/auth/types.ts';
import { memoryLimitStore } from '../../src/http/limit-store.ts';
import type { LimitStore } from '../../src/http/limit-store.ts';

/** `jwt(options)` on a pinned clock, in seconds as JWT claims count them (the hook's `now` counts milliseconds). */
export function jwtAt(options: JwtOptions, nowSec: () => number): AuthFn {
  return jwt({ ...options, _internal: { ...options._internal, now: () => nowSec() * 1000 } });
}

/** `memoryLimitStore({ maxKeys })` on a pinned clock, in seconds as windows count them. */
export function limitStoreAt(maxKeys: number, nowSec: () => number): LimitStore {
  return memoryLimitStore({ maxKeys, _internal: { now: () => nowSec() * 1000 } });
}
