// SPDX-License-Identifier: MIT
// The built-in entries (design §32): what each one grants, as data, and the call `routeAuth()`
// makes of it with a typed view of the request and the request's context, in place of a
// `Request` and a symbol-keyed second form.
import type { ReportRefusal } from './refusals.ts';
import type { AuthFn, EntryGrant, RequestView } from './types.ts';

/** What `routeAuth()` tells a built-in entry of the request it judges. */
export interface EntryContext {
  /** Hears why a token was refused (only with an `onRefused` listener: without one nothing is allocated). */
  readonly report?: ReportRefusal;
  /**
   * The caller decides the entry's scopes itself (the route handler's `authorize()`, once it knows
   * the operation): a token without them is accepted here, and the grant says what they were.
   */
  readonly deferScopes?: boolean;
}

/** A built-in entry's call: the view of the request, its context; the same answers as an `AuthFn`. */
export type EntryCall = (request: RequestView, context: EntryContext) => unknown;

interface BuiltIn {
  readonly grant: EntryGrant;
  readonly call: EntryCall;
  /** It may offer a DPoP nonce (`dpop: { nonce: true }`): `routeAuth()` then hands it a view that keeps it. */
  readonly offersNonces: boolean;
}

/** The context of a plain call: nothing reported, scopes checked by the entry. */
const PLAIN: EntryContext = Object.freeze({});

/**
 * The built-in entries, each with its grant and call: an entry the user wrote is not here, so it is
 * handed a real `Request` and grants no scope. Entries are configuration, not request data: this
 * table holds nothing of any request.
 */
const builtIns = new WeakMap<object, BuiltIn>();

/** A built-in entry: an `AuthFn` (its plain call) that `routeAuth()` calls through `call`. */
export function builtInEntry(grant: EntryGrant, call: EntryCall, offersNonces = false): AuthFn {
  const entry = ((request: Request) => call(request, PLAIN)) as AuthFn;
  builtIns.set(entry, Object.freeze({ grant: Object.freeze(grant), call, offersNonces }));
  return entry;
}

/**
 * The view a list with DPoP nonces hands its built-in entries (RFC 9449 §8): the request's method,
 * URL and headers, and where the nonce an entry offers is kept for the answer, a refusal's too.
 */
export interface NonceView extends RequestView {
  offered: string | undefined;
  offerNonce(nonce: string): void;
}
export function nonceView(request: RequestView): NonceView {
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    offered: undefined,
    offerNonce(nonce) {
      this.offered = nonce;
    },
  };
}

/** The built-in form of `entry`, or `undefined` for an entry of the user's. */
export const builtInOf = (entry: object): BuiltIn | undefined => builtIns.get(entry);

/** The grant of an entry the user wrote (and of a boolean function): its name, and no scope. */
export const CUSTOM_GRANT: EntryGrant = Object.freeze({
  entry: 'custom',
  scopes: Object.freeze([]) as readonly string[],
});
