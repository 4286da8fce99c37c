// The test hook of jwt(), oidc() and introspection(): the `_internal` option (CONTRIBUTING.md, "The test hook").
import { jwt, type JwtOptions } from '../../src/auth/jwt.ts';
import type { AuthFn } from '../../src/auth/types.ts';

/** `jwt(options)` on a pinned clock, in seconds as JWT claims count them (the hook's `now` counts milliseconds). */
export function jwtAt(options: JwtOptions, nowSec: () => number): AuthFn {
  return jwt({ ...options, _internal: { ...options._internal, now: () => nowSec() * 1000 } });
}
