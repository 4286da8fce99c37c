// SPDX-License-Identifier: MIT
import { isRecord } from './jws/json.ts';
import { isTenantId } from './tenants.ts';
import type { Principal } from './types.ts';

/** Returns the object it is given, so that a subclass constructor can stamp its private field onto it. */
class Stamp {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the subclass's private field is stamped onto the returned object (the point of this class).
    return target;
  }
}

/**
 * Marks the principals this module built: already checked and frozen, so they pass through as
 * they are. The mark is a private field, stamped onto the plain object before it is frozen:
 * only `Issued` can add it, nothing can remove it, a Proxy or a copy does not carry it, and
 * reflection does not see it. (A WeakSet did the same at four times the cost per principal.)
 */
class Issued extends Stamp {
  #issued = true;
  static stamp<T extends object>(target: T): T {
    new Issued(target);
    return target;
  }
  static has(value: object): boolean {
    return #issued in value;
  }
}

/** Freezes `value` and everything reachable from it through own enumerable members; cycles are fine. */
export function deepFreeze<T>(value: T, seen = new WeakSet<object>()): T {
  if (typeof value === 'object' && value !== null && !seen.has(value)) {
    seen.add(value);
    Object.freeze(value);
    // Recurse even when `value` was already frozen: a shallow freeze leaves its members mutable.
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key], seen);
  }
  return value;
}

/**
 * Checks what an entry returned and builds the frozen principal that leaves the layer, or
 * `null` when it is not a valid principal (a bug in the entry). A missing `authenticator`
 * becomes `'custom'`; members outside the principal shape are dropped. Each field is read
 * once, so a getter cannot answer differently after the check.
 */
export function completePrincipal(value: unknown): Principal | null {
  if (typeof value !== 'object' || value === null) return null;
  if (Issued.has(value)) return value as Principal;
  try {
    const { id, type, authenticator = 'custom', issuer, tenant, claims } = value as Record<string, unknown>;
    if (typeof id !== 'string' || id === '') return null;
    if (type !== 'user' && type !== 'service') return null;
    if (typeof authenticator !== 'string' || authenticator === '') return null;
    if (issuer !== undefined && typeof issuer !== 'string') return null;
    if (tenant !== undefined && !isTenantId(tenant)) return null;
    if (claims !== undefined && !isRecord(claims)) return null;
    const principal: { -readonly [K in keyof Principal]: Principal[K] } = { id, type, authenticator };
    if (issuer !== undefined) principal.issuer = issuer;
    if (tenant !== undefined) principal.tenant = tenant;
    if (claims !== undefined) principal.claims = deepFreeze(claims as Record<string, unknown>);
    Object.freeze(Issued.stamp(principal));
    return principal;
  } catch {
    // A throwing getter or claims that cannot be frozen (a typed array): not a valid principal.
    return null;
  }
}

/** Builds a frozen principal for the built-in helpers: `completePrincipal()` of fields known to be valid. */
export const makePrincipal = completePrincipal as (fields: Principal) => Principal;

/**
 * The default principal of a verified JWT, built without a second walk over the claims:
 * `parseJsonObject` returns them deeply frozen already. `id` is the non-empty `sub`.
 */
export function principalOfClaims(
  id: string,
  type: 'user' | 'service',
  authenticator: string,
  issuer: string | undefined,
  claims: Readonly<Record<string, unknown>>,
  tenant?: string,
): Principal {
  const principal: Principal =
    tenant !== undefined
      ? { id, type, authenticator, ...(issuer !== undefined && { issuer }), tenant, claims }
      : issuer === undefined
        ? { id, type, authenticator, claims }
        : { id, type, authenticator, issuer, claims };
  Object.freeze(Issued.stamp(principal));
  return principal;
}
