// SPDX-License-Identifier: MIT
// Enterprise-managed authorization (the Identity Assertion JWT Authorization Grant, ID-JAG;
// MCP's enterprise-managed authorization extension; design §27): a call on the caller's behalf
// to a service whose authorization server trusts the company's IdP. Two legs: the caller's own
// presented token is exchanged at the IdP for an ID-JAG (RFC 8693), then the ID-JAG for an access
// token at the service's authorization server (RFC 7523). Read or skip this file as a unit.
import { kindOf, throwConfigError } from './errors.ts';
import { clockOf, readInternalOptions, type InternalOptions } from './internal-options.ts';
import { checkOptionNames } from './options.ts';
import { keptTokens, readCache, readRequest, subjectOf } from './on-behalf.ts';
import { exchanged, keepPresentedTokens } from './presented-token.ts';
import { TOKEN_CLIENT_OPTIONS, tokenClient, type TokenClient, type TokenClientOptions } from './token-client.ts';
import { TokenExchangeError, type ExchangedToken } from './token-endpoint.ts';
import type { Principal } from './types.ts';

/** The enterprise IdP, where the caller's token is exchanged for an ID-JAG, and this agent's client there. */
export interface IdJagIdpOptions extends TokenClientOptions {
  /** What the caller presented: default `urn:ietf:params:oauth:token-type:access_token`; another (e.g. `…:id_token`) for an IdP that asks for one. */
  subjectTokenType?: string;
}

/** The resource's authorization server, which takes the ID-JAG (RFC 7523), and this agent's client there. */
export interface IdJagAuthorizationServerOptions extends TokenClientOptions {
  /** Required: the ID-JAG's audience; without `tokenEndpoint`, its metadata names the token endpoint. */
  issuer: string;
}

/** Options of `idJag()`. */
export interface IdJagOptions {
  idp: IdJagIdpOptions;
  authorizationServer: IdJagAuthorizationServerOptions;
  /** Access tokens kept until 30 s before they expire, by caller token (its SHA-256) and request: default `{ maxEntries: 1000 }`; `false`: both legs every time. */
  cache?: false | { maxEntries?: number };
  /** @internal The test hook (a clock, a fetch): not part of the public API. See CONTRIBUTING.md. */
  _internal?: InternalOptions;
}

/** What to ask for: the service's `resource` URI (RFC 8707) and the `scope` wanted; the audience is the authorization server. */
export interface IdJagRequest {
  resource?: string | URL | readonly (string | URL)[];
  scope?: string | readonly string[];
}

/** Gets an access token of the service's authorization server for the caller whose token `principal` presented on the request now running. */
export type IdJagExchange = (principal: Principal | undefined, request?: IdJagRequest) => Promise<ExchangedToken>;

const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const ID_JAG_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';
const HELPER = 'idJag()';

/**
 * Enterprise-managed authorization (design §27): `exchange(principal, { resource?, scope? })`
 * exchanges the token `principal` presented on the request now running at the IdP for an ID-JAG
 * (RFC 8693: `requested_token_type` `urn:ietf:params:oauth:token-type:id-jag`, `audience` the
 * authorization server's issuer), then presents the ID-JAG to the authorization server (RFC 7523
 * `jwt-bearer` grant), and resolves to the access token it issued. Each leg authenticates with
 * its own client (`client_secret_basic` or `private_key_jwt`). Failures are `TokenExchangeError`
 * with `leg` `'idp'` or `'authorization-server'`; a principal without a presented token gets
 * `NO_SUBJECT_TOKEN`. Access tokens are kept until 30 s before they expire.
 * @example
 * const exchange = idJag({
 *   idp: { issuer: 'https://login.example.com', clientId: 'agent', clientSecret: env.IDP_CLIENT_SECRET },
 *   authorizationServer: { issuer: 'https://auth.crm.example.com', clientId: 'agent-at-crm', clientSecret: env.CRM_CLIENT_SECRET },
 * });
 * const tools = ({ principal }) => ({ crm: crmTool(() => exchange(principal, { scope: 'crm:read' })) });
 */
export function idJag(options: IdJagOptions): IdJagExchange {
  if (typeof options !== 'object' || options === null)
    throwConfigError(HELPER, 'options { idp, authorizationServer } are required');
  checkOptionNames(HELPER, options, ['idp', 'authorizationServer', 'cache', '_internal']);
  const internal = readInternalOptions(HELPER, options._internal);
  const maxEntries = readCache(HELPER, options.cache);
  const { idp, authorizationServer } = options;
  const atIdp = `${HELPER}: idp`;
  const atServer = `${HELPER}: authorizationServer`;
  if (typeof idp !== 'object' || idp === null)
    throwConfigError(atIdp, `must be the IdP's options { issuer or tokenEndpoint, clientId, … }; got ${kindOf(idp)}`);
  if (typeof authorizationServer !== 'object' || authorizationServer === null)
    throwConfigError(
      atServer,
      `must be the authorization server's options { issuer, clientId, … }; got ${kindOf(authorizationServer)}`,
    );
  checkOptionNames(atIdp, idp, [...TOKEN_CLIENT_OPTIONS, 'subjectTokenType']);
  checkOptionNames(atServer, authorizationServer, TOKEN_CLIENT_OPTIONS);
  const { subjectTokenType = ACCESS_TOKEN_TYPE, ...idpClient } = idp;
  if (typeof subjectTokenType !== 'string' || !/^[a-z][a-z0-9+.-]*:\S+$/i.test(subjectTokenType))
    throwConfigError(atIdp, 'subjectTokenType must be a token type URI (urn:ietf:params:oauth:token-type:…)');
  // The ID-JAG's audience: the authorization server's issuer, always named (design §27).
  if (typeof authorizationServer.issuer !== 'string' || authorizationServer.issuer === '')
    throwConfigError(
      atServer,
      `issuer is required (it is the ID-JAG's audience); got ${kindOf(authorizationServer.issuer)}`,
    );
  const audience = authorizationServer.issuer;
  const toIdp = tokenClient(atIdp, idpClient, internal);
  const toServer = tokenClient(atServer, authorizationServer, internal);
  const now = clockOf(internal);
  const kept = keptTokens(maxEntries, now);
  keepPresentedTokens();

  return async function exchange(principal, request = {}) {
    const params = readRequest('exchange()', request, ['resource', 'scope']);
    const subject = subjectOf(principal, now() / 1000, 'idp');
    const key = kept.keyOf(subject, params);
    const hit = kept.take(key);
    if (hit !== undefined) return hit;
    // Leg 1, RFC 8693 at the IdP: the caller's own token for an ID-JAG whose audience is the authorization server.
    const form = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      requested_token_type: ID_JAG_TYPE,
      audience,
      subject_token: subject,
      subject_token_type: subjectTokenType,
    });
    for (const resource of params.resource) form.append('resource', resource);
    if (params.scope.length > 0) form.set('scope', params.scope.join(' '));
    const assertion = await leg('idp', toIdp, form);
    if (assertion.issuedTokenType !== ID_JAG_TYPE) throw new TokenExchangeError('INVALID_RESPONSE', 200, 'idp');
    // Leg 2, RFC 7523 §2.1 at the authorization server: the ID-JAG as the authorization grant.
    const grant = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: assertion.accessToken,
    });
    const token = await leg('authorization-server', toServer, grant, ACCESS_TOKEN_TYPE);
    kept.keep(key, token);
    // The request's audit log hears what was asked for (never a token): design §34.
    await exchanged(principal, { audience: [audience], resource: params.resource, scope: params.scope });
    return token;
  };
}

/** One leg's call; its failure names the leg (and still no token, no body). */
async function leg(
  name: 'idp' | 'authorization-server',
  post: TokenClient,
  form: URLSearchParams,
  impliedType?: string,
): Promise<ExchangedToken> {
  try {
    return await post(form, impliedType);
  } catch (error) {
    if (error instanceof TokenExchangeError) throw new TokenExchangeError(error.code, error.status, name);
    throw error;
  }
}
