import type { Principal } from './types.ts';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * Checks what an entry returned and builds the frozen principal that leaves the layer, or
 * `null` when it is not a valid principal (a bug in the entry). A missing `authenticator`
 * becomes `'custom'`; members outside the principal shape are dropped.
 */
export function completePrincipal(value: unknown): Principal | null {
  if (typeof value !== 'object' || value === null) return null;
  const { id, type, authenticator = 'custom', issuer, claims } = value as Record<string, unknown>;
  if (typeof id !== 'string' || id.length === 0) return null;
  if (type !== 'user' && type !== 'service') return null;
  if (typeof authenticator !== 'string' || authenticator.length === 0) return null;
  if (issuer !== undefined && typeof issuer !== 'string') return null;
  if (claims !== undefined && (typeof claims !== 'object' || claims === null || Array.isArray(claims))) return null;
  if (Object.isFrozen(value) && (value as Record<string, unknown>).authenticator === authenticator && isExact(value)) {
    return value as Principal;
  }
  const principal: { -readonly [K in keyof Principal]: Principal[K] } = { id, type, authenticator };
  if (issuer !== undefined) principal.issuer = issuer;
  if (claims !== undefined) principal.claims = deepFreeze(claims as Record<string, unknown>);
  return Object.freeze(principal);
}

const KNOWN = new Set(['id', 'type', 'authenticator', 'issuer', 'claims']);

function isExact(value: object): boolean {
  for (const key of Object.keys(value)) if (!KNOWN.has(key)) return false;
  const claims = (value as Principal).claims;
  return claims === undefined || Object.isFrozen(claims);
}

/** Builds a frozen principal for the built-in helpers. */
export function makePrincipal(fields: Principal): Principal {
  return completePrincipal(fields) as Principal;
}
