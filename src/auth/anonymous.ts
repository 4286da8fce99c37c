// SPDX-License-Identifier: MIT
import { isRecord } from './jws/json.ts';
import { kindOf, throwConfigError } from './errors.ts';
import { makePrincipal } from './principal.ts';
import { builtInEntry } from './built-in.ts';
import type { AuthFn } from './types.ts';

const ANONYMOUS = /* @__PURE__ */ makePrincipal({ id: 'anonymous', type: 'user', authenticator: 'anonymous' });

/**
 * Accepts everyone as `{ id: 'anonymous', type: 'user', authenticator: 'anonymous' }`; put it last.
 * It takes no options: given any, it throws `AuthConfigError` (a JavaScript `anonymous({ id })`
 * is not silently ignored).
 * @example
 * routeAuth([jwt({ secret, audience }), anonymous()]);
 */
export function anonymous(options?: Readonly<Record<string, never>>): AuthFn {
  if (options !== undefined) {
    if (!isRecord(options)) throwConfigError('anonymous()', `options must be absent; got ${kindOf(options)}`);
    const [key] = Object.keys(options);
    if (key !== undefined)
      throwConfigError('anonymous()', `unknown option ${JSON.stringify(key.slice(0, 64))} (it takes none)`);
  }
  const entry = builtInEntry({ entry: 'anonymous', scopes: [] }, () => ANONYMOUS);
  entry.challenges = [];
  return entry;
}
