// SPDX-License-Identifier: MIT
// Scope hierarchies (design §29; MCP 2026-07-28: servers account for them): `scopeImplies`, read
// once into what each scope implies: the handler's, and the entries' that check scopes (jwt, oidc,
// introspection).
import { isRecord } from './jws/json.ts';
import { isScopeList, SCOPE_TOKEN, throwConfigError } from './errors.ts';

/** Each scope of `scopeImplies` with every scope a token holding it holds: itself and, transitively, what it implies. */
export type ScopeImplies = ReadonlyMap<string, readonly string[]>;

/**
 * Reads `scopeImplies` (`{ 'agent:admin': ['agent:chat', 'agent:approve'] }`): RFC 6749 scope
 * tokens as keys, each a non-empty list of them; a cycle (`a` implies `b` implies `a`) is an
 * `AuthConfigError` naming it. `undefined` without the option.
 */
export function readScopeImplies(helper: string, value: unknown): ScopeImplies | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value) || Object.keys(value).length === 0)
    throwConfigError(helper, "scopeImplies must be an object such as { 'agent:admin': ['agent:chat'] }");
  const implies = new Map<string, readonly string[]>();
  for (const [scope, implied] of Object.entries(value)) {
    if (!SCOPE_TOKEN.test(scope) || !isScopeList(implied))
      throwConfigError(
        helper,
        `scopeImplies[${JSON.stringify(scope.slice(0, 64))}] must be a non-empty list of RFC 6749 scope tokens, under a scope token`,
      );
    implies.set(scope, implied);
  }
  const closure = new Map<string, readonly string[]>();
  /** Every scope `scope` implies, itself first; `path` is the chain that led here, where a repeat is a cycle. */
  const visit = (scope: string, path: readonly string[]): readonly string[] => {
    if (path.includes(scope)) throwConfigError(helper, `scopeImplies has a cycle: ${[...path, scope].join(' → ')}`);
    let held = closure.get(scope);
    if (held === undefined) {
      const all = new Set([scope]);
      for (const next of implies.get(scope) ?? []) for (const name of visit(next, [...path, scope])) all.add(name);
      closure.set(scope, (held = Object.freeze([...all])));
    }
    return held;
  };
  for (const scope of implies.keys()) visit(scope, []);
  return closure;
}
