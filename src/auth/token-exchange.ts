// SPDX-License-Identifier: MIT
// Calls on the caller's behalf, never with the caller's token (RFC 8693, design §27): the access
// token a principal presented on the request now running is exchanged at the authorization
// server for one of another audience. Read or skip this file as a unit.
import { throwConfigError } from './errors.ts';
import { clockOf, readInternalOptions, type InternalOptions } from './internal-options.ts';
import { checkOptionNames } from './options.ts';
import { keptTokens, readCache, readRequest, subjectOf } from './on-behalf.ts';
import { exchanged, keepPresentedTokens } from './presented-token.ts';
import { TOKEN_CLIENT_OPTIONS, tokenClient, type TokenClientOptions } from './token-client.ts';
import { TokenExchangeError, type ExchangedToken } from './token-endpoint.ts';
import type { Principal } from './types.ts';

export { TokenExchangeError, type ExchangedToken };

/** Options of `tokenExchange()`: the token endpoint (or the `issuer` to discover it), and the client's credentials, a secret or a private key. */
export interface TokenExchangeOptions extends TokenClientOptions {
  /** Exchanged tokens kept until 30 s before they expire, by caller token (its SHA-256) and request: default `{ maxEntries: 1000 }`; `false`: exchange every time. */
  cache?: false | { maxEntries?: number };
  /** @internal The test hook (a clock, a fetch): not part of the public API. See CONTRIBUTING.md. */
  _internal?: InternalOptions;
}

/** What to ask for (RFC 8693 §2.1): the service's `audience`, its `resource` URI (RFC 8707), the `scope` wanted. */
export interface ExchangeRequest {
  audience?: string | readonly string[];
  resource?: string | URL | readonly (string | URL)[];
  scope?: string | readonly string[];
}

/** Exchanges the token `principal` presented on the request now running. */
export type Exchange = (principal: Principal | undefined, request?: ExchangeRequest) => Promise<ExchangedToken>;

const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * RFC 8693 token exchange for calls on the caller's behalf (design §27). `exchange(principal,
 * { audience?, resource?, scope? })` sends the access token `principal` presented on the request
 * now running (tied to it by `routeAuth()` when `jwt()`, `oidc()` or `introspection()` accepted
 * it, and never stored in it) as `subject_token`, authenticated with `client_secret_basic` or
 * `private_key_jwt`, and resolves to the new token. A principal without one (an API token, Basic,
 * a channel, an in-process call, a run decided by another caller, an expired token) gets
 * `TokenExchangeError` `NO_SUBJECT_TOKEN`. Answers are kept until 30 s before they expire.
 * @example
 * const exchange = tokenExchange({ issuer: 'https://id.example.com', clientId: 'agent', clientSecret: env.AGENT_CLIENT_SECRET });
 * const tools = ({ principal }) => ({ crm: crmTool(() => exchange(principal, { audience: 'https://crm.example.com' })) });
 */
export function tokenExchange(options: TokenExchangeOptions): Exchange {
  const helper = 'tokenExchange()';
  if (typeof options !== 'object' || options === null)
    throwConfigError(helper, 'options { tokenEndpoint or issuer, clientId, clientSecret or privateKey } are required');
  checkOptionNames(helper, options, [...TOKEN_CLIENT_OPTIONS, 'cache', '_internal']);
  const internal = readInternalOptions(helper, options._internal);
  const maxEntries = readCache(helper, options.cache);
  const post = tokenClient(helper, options, internal);
  const now = clockOf(internal);
  const kept = keptTokens(maxEntries, now);
  keepPresentedTokens();

  return async function exchange(principal, request = {}) {
    const params = readRequest('exchange()', request, ['audience', 'resource', 'scope']);
    const subject = subjectOf(principal, now() / 1000);
    const key = kept.keyOf(subject, params);
    const hit = kept.take(key);
    if (hit !== undefined) return hit;
    const form = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: subject,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
    });
    for (const audience of params.audience) form.append('audience', audience);
    for (const resource of params.resource) form.append('resource', resource);
    if (params.scope.length > 0) form.set('scope', params.scope.join(' '));
    const token = await post(form);
    kept.keep(key, token);
    // The request's audit log hears what was asked for (never a token): design §34.
    await exchanged(principal, { audience: params.audience, resource: params.resource, scope: params.scope });
    return token;
  };
}
