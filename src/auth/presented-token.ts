// SPDX-License-Identifier: MIT
// The access token a principal presented on the request now running (design §27): kept beside
// the principal object, never in it, so that tokenExchange() can exchange it while nothing else
// (a transcript, a checkpoint, a log line, a tool's arguments) ever holds it.
import { credentialsStart } from './authorization.ts';
import { completePrincipal } from './principal.ts';
import { callerKey, sameCaller } from './caller-key.ts';
import type { Principal } from './types.ts';

/** The entries that verify the Bearer or DPoP access token they accept: `jwt()`, `oidc()`, `introspection()`. */
const tokenEntries = /* @__PURE__ */ new WeakSet<object>();
export function verifiesAccessToken<T extends object>(entry: T): T {
  tokenEntries.add(entry);
  return entry;
}

type PresentedBy = (entry: object, principal: Principal, authorization: string | null) => Principal;
/**
 * What `routeAuth()` asks once an entry accepted a request. Empty until a `tokenExchange()` is
 * created: a process that exchanges no token ties no token to anyone, and the auth bundles of
 * one that never imports it stay without this code (design §23).
 */
export const keeping: { presentedBy?: PresentedBy } = {};

const presented = /* @__PURE__ */ new WeakMap<Principal, string>();

/** From now on, `routeAuth()` ties each access token a token-verifying entry accepted to the principal it gave. */
export function keepPresentedTokens(): void {
  keeping.presentedBy ??= presentedBy;
}

/**
 * The principal `routeAuth()` hands out for a request `entry` accepted, tied to the access token
 * the request presented when `entry` verified it (never an API token, a password or what a custom
 * entry read). A principal object already tied to another token (a mapper that hands out one
 * object for several callers) is copied, so that no request ever reaches another's token.
 */
function presentedBy(entry: object, principal: Principal, authorization: string | null): Principal {
  if (!tokenEntries.has(entry) || authorization === null) return principal;
  const bearer = credentialsStart(authorization, 'bearer');
  const start = bearer < 0 ? credentialsStart(authorization, 'dpop') : bearer;
  if (start < 0) return principal;
  const token = authorization.slice(start);
  const held = presented.get(principal);
  const own = held === undefined || held === token ? principal : (completePrincipal({ ...principal }) as Principal);
  presented.set(own, token);
  return own;
}

/** The access token `principal` presented on the request now running, if a token-verifying entry accepted it. */
export const presentedToken = (principal: Principal): string | undefined => presented.get(principal);

/**
 * Ties `to` (a paused run's principal, rebuilt from its checkpoint) to the token `from` (the
 * principal deciding it) presented, when both are the same caller (one caller key). Another
 * caller's decision gives the run no token.
 */
export function carryPresentedToken(from: Principal | undefined, to: Principal | undefined): void {
  const token = from === undefined ? undefined : presented.get(from);
  if (token !== undefined && to !== undefined && sameCaller(callerKey(from!), callerKey(to))) presented.set(to, token);
}
