// SPDX-License-Identifier: MIT
import { makePrincipal } from './principal.ts';
import type { AuthFn } from './types.ts';

const ANONYMOUS = /* @__PURE__ */ makePrincipal({ id: 'anonymous', type: 'user', authenticator: 'anonymous' });

/**
 * Accepts everyone as `{ id: 'anonymous', type: 'user', authenticator: 'anonymous' }`; put it last.
 * @example
 * routeAuth([jwt({ secret, audience }), anonymous()]);
 */
export function anonymous(): AuthFn {
  const entry: AuthFn = () => ANONYMOUS;
  entry.challenges = [];
  return entry;
}
