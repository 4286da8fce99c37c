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

/**
 * A token held for a principal: by each request that presented it, and each run under way with it
 * (`holders`); the paused runs' principals a decision of the same caller gave it (`carried`) lose it
 * with it. Released by the last holder, nothing keeps it (design §32: the request's lifetime).
 */
interface Held {
  readonly token: string;
  holders: number;
  carried?: Principal[];
  /** Hears each exchange of the token (never the token): the request's audit log (design §34). */
  onExchange?: ExchangeListener;
}

/** What an exchange made on a caller's behalf is told: what was asked for, never a token. */
export type ExchangeListener = (exchanged: {
  readonly audience: readonly string[];
  readonly resource: readonly string[];
  readonly scope: readonly string[];
}) => Promise<void> | void;
const presented = /* @__PURE__ */ new WeakMap<Principal, Held>();

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
  if (held?.token === token) {
    held.holders++;
    return principal;
  }
  const own = held === undefined ? principal : (completePrincipal({ ...principal }) as Principal);
  presented.set(own, { token, holders: 1 });
  return own;
}

/** The access token `principal` presented on a request still being answered, if a token-verifying entry accepted it. */
export const presentedToken = (principal: Principal): string | undefined => presented.get(principal)?.token;

/**
 * Holds the token `principal` carries while a run goes on (a streamed answer's run outlives the
 * answer's start); the function returned lets it go. Nothing to hold: a function that does nothing.
 */
export function holdPresentedToken(principal: Principal | undefined): () => void {
  const held = principal === undefined ? undefined : presented.get(principal);
  if (held === undefined) return letGo;
  held.holders++;
  return () => releasePresentedToken(principal!);
}
const letGo = () => undefined;

/**
 * Lets go of one hold (the route handler's, once its answer is made): the last one forgets the
 * token, and the paused runs' principals it was carried to forget it too, so a tool that kept a
 * principal cannot exchange its caller's token after the request (design §32).
 */
export function releasePresentedToken(principal: Principal): void {
  const held = presented.get(principal);
  if (held === undefined || --held.holders > 0) return;
  presented.delete(principal);
  for (const to of held.carried ?? []) presented.delete(to);
}

/**
 * Ties `to` (a paused run's principal, rebuilt from its checkpoint) to the token `from` (the
 * principal deciding it) presented, when both are the same caller (one caller key). Another
 * caller's decision gives the run no token.
 */
export function carryPresentedToken(from: Principal | undefined, to: Principal | undefined): void {
  const held = from === undefined ? undefined : presented.get(from);
  if (held === undefined || to === undefined || !sameCaller(callerKey(from!), callerKey(to))) return;
  presented.set(to, { token: held.token, holders: 1, ...(held.onExchange && { onExchange: held.onExchange }) });
  (held.carried ??= []).push(to);
}

/**
 * Has `listener` hear each exchange of the token `principal` presented on this request (the route
 * handler's audit log, design §34): an exchange made inside a request joins that request's log.
 */
export function watchExchanges(principal: Principal, listener: ExchangeListener): void {
  const held = presented.get(principal);
  if (held !== undefined) held.onExchange = listener;
}

/** Tells the request's listener of an exchange made (what its rejection says fails the exchange). */
export async function exchanged(
  principal: Principal | undefined,
  asked: Parameters<ExchangeListener>[0],
): Promise<void> {
  const held = principal === undefined ? undefined : presented.get(principal);
  await held?.onExchange?.(asked);
}
