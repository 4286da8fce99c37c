// SPDX-License-Identifier: MIT
import type { Refusal } from './refusals.ts';
import type { ScopeImplies } from './scope-implies.ts';
/** Who the caller is, as verified by an auth entry. Frozen (claims deeply) when it leaves the auth layer. */
export interface Principal {
  readonly id: string;
  readonly type: 'user' | 'service';
  /** `'jwt'`, `'oidc'`, `'basic'`, `'api-token'`, `'anonymous'`, `'custom'`, `'slack'`, `'discord'`, or a custom entry's own name. */
  readonly authenticator: string;
  /** JWT `iss`: the same `id` from another issuer is another caller. */
  readonly issuer?: string;
  /**
   * The tenant the entry accepted (design §12: an issuer template's `tid`, or `tenantClaim`), one
   * path segment of letters, digits, `-`, `_`, `.`; the first part of the caller key.
   */
  readonly tenant?: string;
  /** Verified claims. Never the raw token, never a password. */
  readonly claims?: Readonly<Record<string, unknown>>;
}

/**
 * A challenge that a 401 advertises in `WWW-Authenticate`: `<scheme> realm="…", <name>="<value>"…`.
 * `params` are further auth-params (RFC 9110 tokens as names, quoted values), in insertion order,
 * e.g. `{ resource_metadata: '<URL>', scope: 'agent:invoke' }` (RFC 9728 §5.1, RFC 6750 §3).
 */
export interface Challenge {
  readonly scheme: string;
  readonly realm?: string;
  readonly params?: Readonly<Record<string, string>>;
}

/** What a custom entry may return before the layer validates and completes it. */
export type PrincipalInput = Omit<Principal, 'authenticator'> & { readonly authenticator?: string };

/**
 * One auth entry: a function of the request that returns a principal (accept), `null` or
 * `undefined` (skip), or throws `AuthError(401 | 403)` (stop). Any other throw is a bug (500).
 * `challenges` absent means `[{ scheme: 'Bearer' }]`; an explicit `[]` advertises nothing.
 */
export interface AuthFn {
  (request: Request): PrincipalInput | null | undefined | Promise<PrincipalInput | null | undefined>;
  challenges?: readonly Challenge[];
}

/** A function that answers `true` (accept as the anonymous custom principal) or `false` (401). */
export type BooleanAuth = (request: Request) => boolean | Promise<boolean>;

/** Every form the `auth` option takes: a list, one entry, a token string, or a boolean function. */
export type AuthOption = AuthFn | readonly AuthFn[] | string | BooleanAuth;

/**
 * What a built-in entry reads of a request (design §32): its method, URL and headers. A Web
 * `Request` is one; the route handler hands the entries its own view, and builds no `Request`.
 */
export interface RequestView {
  readonly method: string;
  readonly url: string;
  readonly headers: { get(name: string): string | null };
}

/**
 * What the accepting entry grants, as data (design §32): its helper's name (`jwt`, `oidc`,
 * `introspection`, `apiToken`, `basic`, `anonymous`, `custom`), the scopes it requires and its
 * `scopeImplies`, which applies wherever those scopes are checked.
 */
export interface EntryGrant {
  readonly entry: string;
  readonly scopes: readonly string[];
  readonly scopeImplies?: ScopeImplies;
}

export type AuthResult =
  | {
      readonly ok: true;
      readonly principal: Principal;
      /** What the accepting entry grants: its name, scopes and `scopeImplies` (design §32). */
      readonly grant: EntryGrant;
      /** The DPoP nonce (RFC 9449 §8) the entry offered: the answer carries it as `DPoP-Nonce`. */
      readonly dpopNonce?: string;
    }
  | {
      readonly ok: false;
      readonly response: Response;
      /** What `onRefused` was told of this request (with a listener only): never the credential. */
      readonly refusal?: Refusal;
      /** A 401 the client answers by itself, no credential refused (DPoP's `use_dpop_nonce`, RFC 9449 §9). */
      readonly step?: boolean;
    };
