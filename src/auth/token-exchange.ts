// SPDX-License-Identifier: MIT
// Calls on the caller's behalf, never with the caller's token (RFC 8693, design §27): the access
// token a principal presented on the request now running is exchanged at the authorization
// server for one of another audience. Read or skip this file as a unit.
import { basicCredentials, clientAssertion, type ClientPrivateKey } from './client-auth.ts';
import { isScopeList, kindOf, throwConfigError } from './errors.ts';
import { discoveredEndpoint, staticEndpoint } from './introspection-endpoint.ts';
import { decodeBase64url, encodeBase64url } from './jws/base64url.ts';
import { parseJsonObject, isObject, isString } from './jws/json.ts';
import { clockOf, readInternalOptions, type InternalOptions } from './internal-options.ts';
import { readHttpsUrl } from './key-set.ts';
import { checkOptionNames, isNumberIn } from './options.ts';
import { keepPresentedTokens, presentedToken } from './presented-token.ts';
import { sha256 } from './sha256.ts';
import { exchanged, post, TokenExchangeError, type ExchangedToken } from './token-endpoint.ts';
import type { Principal } from './types.ts';

export { TokenExchangeError, type ExchangedToken };

/** Options of `tokenExchange()`: the token endpoint (or the `issuer` to discover it), and the client's credentials, a secret or a private key. */
export interface TokenExchangeOptions {
  /** The token endpoint: `https:` (`http:` on loopback only). */
  tokenEndpoint?: string | URL;
  /** The authorization server: alone, its metadata names the token endpoint (RFC 8414, else OpenID discovery). It is also the client assertion's audience. */
  issuer?: string;
  /** This agent's client at the authorization server. */
  clientId: string;
  /** `client_secret_basic`. Give this or `privateKey`. */
  clientSecret?: string;
  /** `private_key_jwt` (RFC 7523): a private `CryptoKey`, a private JWK, or a PKCS#8 PEM (which needs `algorithm`). */
  privateKey?: ClientPrivateKey;
  /** The client assertion's `alg`; default what the key implies (RS256, PS256, ES256/384/512, EdDSA). */
  algorithm?: string;
  /** The client assertion's `kid`. */
  keyId?: string;
  /** Exchanged tokens kept until 30 s before they expire, by caller token (its SHA-256) and request: default `{ maxEntries: 1000 }`; `false`: exchange every time. */
  cache?: false | { maxEntries?: number };
  /** How long a call may take; default 5,000 ms. */
  timeoutMs?: number;
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

const OPTION_NAMES = [
  'tokenEndpoint',
  'issuer',
  'clientId',
  'clientSecret',
  'privateKey',
  'algorithm',
  'keyId',
  'cache',
  'timeoutMs',
  '_internal',
];
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** A kept token is used no later than this before it expires. */
const MARGIN_MS = 30_000;

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
  if (!isObject(options))
    throwConfigError(helper, 'options { tokenEndpoint or issuer, clientId, clientSecret or privateKey } are required');
  checkOptionNames(helper, options, OPTION_NAMES);
  const { clientId, clientSecret, privateKey, issuer, timeoutMs = 5_000 } = options;
  if (!isString(clientId) || clientId === '')
    throwConfigError(helper, `clientId must be a non-empty string; got ${kindOf(clientId)}`);
  if ((clientSecret === undefined) === (privateKey === undefined))
    throwConfigError(helper, 'give exactly one of clientSecret (client_secret_basic) and privateKey (private_key_jwt)');
  if (clientSecret !== undefined && (!isString(clientSecret) || clientSecret === ''))
    throwConfigError(helper, `clientSecret must be a non-empty string; got ${kindOf(clientSecret)}`);
  if (clientSecret !== undefined && (options.algorithm !== undefined || options.keyId !== undefined))
    throwConfigError(helper, 'algorithm and keyId go with privateKey, not clientSecret');
  if (!isNumberIn(timeoutMs, 1, 60_000, true))
    throwConfigError(helper, 'timeoutMs must be a whole number of milliseconds from 1 to 60000');
  if (options.tokenEndpoint === undefined && issuer === undefined)
    throwConfigError(helper, 'give tokenEndpoint, or issuer to discover it');
  if (issuer !== undefined && (!isString(issuer) || issuer === ''))
    throwConfigError(helper, 'issuer must be a non-empty string');
  const maxEntries = readCache(helper, options.cache);
  const internals: InternalOptions = { ...readInternalOptions(helper, options._internal), timeoutMs };
  const issuerHref = issuer === undefined ? undefined : readHttpsUrl(helper, 'issuer', issuer);
  const staticUrl =
    options.tokenEndpoint === undefined ? undefined : readHttpsUrl(helper, 'tokenEndpoint', options.tokenEndpoint);
  const endpointOf =
    staticUrl !== undefined
      ? staticEndpoint(staticUrl)
      : discoveredEndpoint(issuer as string, issuerHref as string, internals, {
          field: 'token_endpoint',
          helper,
          meanwhile: 'exchanges fail with UNAVAILABLE',
        });
  const assertion =
    privateKey === undefined
      ? undefined
      : clientAssertion(helper, clientId, privateKey, options.algorithm, options.keyId);
  const basic = clientSecret === undefined ? undefined : basicCredentials(clientId, clientSecret);
  const now = clockOf(internals);
  const kept = new Map<string, { token: ExchangedToken; until: number }>();
  keepPresentedTokens();

  async function call(endpoint: string, body: URLSearchParams): Promise<ExchangedToken> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'content-type': 'application/x-www-form-urlencoded',
    };
    if (basic !== undefined) headers.authorization = basic;
    else {
      let signed: string;
      try {
        // RFC 7523 §3: the audience identifies the authorization server: its issuer, else its token endpoint.
        signed = await (assertion as NonNullable<typeof assertion>)(issuer ?? endpoint, now() / 1000);
      } catch {
        throw new TokenExchangeError('INVALID_CLIENT_KEY');
      }
      body.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      body.set('client_assertion', signed);
    }
    return exchanged(await post(endpoint, { method: 'POST', headers, body: body.toString() }, internals), now());
  }

  return async function exchange(principal, request = {}) {
    const params = readRequest(request);
    const subject = isObject(principal) ? presentedToken(principal as Principal) : undefined;
    if (subject === undefined || expired(subject, principal as Principal, now() / 1000))
      throw new TokenExchangeError('NO_SUBJECT_TOKEN');
    // Keyed by the token's SHA-256: the cache keeps no caller's token.
    const key = `${encodeBase64url(sha256(subject))} ${JSON.stringify(params)}`;
    const hit = kept.get(key);
    if (hit !== undefined) {
      kept.delete(key);
      if (hit.until > now()) {
        kept.set(key, hit);
        return hit.token;
      }
    }
    const endpoint = await endpointOf(now() / 1000);
    if (endpoint === undefined) throw new TokenExchangeError('UNAVAILABLE');
    const body = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: subject,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
    });
    for (const audience of params.audience) body.append('audience', audience);
    for (const resource of params.resource) body.append('resource', resource);
    if (params.scope.length > 0) body.set('scope', params.scope.join(' '));
    const token = await call(endpoint, body);
    if (maxEntries > 0 && token.expiresAt !== undefined && token.expiresAt - MARGIN_MS > now()) {
      if (kept.size >= maxEntries) kept.delete(kept.keys().next().value as string);
      kept.set(key, { token, until: token.expiresAt - MARGIN_MS });
    }
    return token;
  };
}

function readCache(helper: string, value: unknown): number {
  if (value === false) return 0;
  if (value !== undefined && !isObject(value)) throwConfigError(helper, 'cache must be false or { maxEntries? }');
  checkOptionNames(`${helper}: cache`, value ?? {}, ['maxEntries']);
  const { maxEntries = 1000 } = (value ?? {}) as { maxEntries?: unknown };
  if (!isNumberIn(maxEntries, 1, 100_000, true))
    throwConfigError(helper, 'cache.maxEntries must be an integer from 1 to 100000');
  return maxEntries;
}

const list = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** The request's `audience`, `resource` and `scope` as lists, checked (an `AuthConfigError` names what is wrong). */
function readRequest(request: unknown): { audience: string[]; resource: string[]; scope: string[] } {
  const helper = 'exchange()';
  if (!isObject(request)) throwConfigError(helper, 'the request must be an object');
  checkOptionNames(helper, request, ['audience', 'resource', 'scope']);
  const { audience, resource, scope } = request as ExchangeRequest;
  const audiences = list(audience);
  if (!audiences.every((value) => isString(value) && value !== ''))
    throwConfigError(helper, 'audience must be a non-empty string or a list of them');
  const resources = list(resource).map((value) => {
    const url = (isString(value) || value instanceof URL) && URL.canParse(value) ? new URL(value) : undefined;
    // RFC 8707 §2: an absolute URI without a fragment.
    if (url === undefined || url.hash !== '' || String(value).includes('#'))
      throwConfigError(helper, 'resource must be an absolute URI without a fragment, or a list of them');
    return url.href;
  });
  const scopes = isString(scope) ? scope.split(' ').filter(Boolean) : list(scope);
  if (scope !== undefined && !isScopeList(scopes))
    throwConfigError(helper, 'scope must be RFC 6749 scope tokens: a space-separated string or a list');
  return { audience: audiences as string[], resource: resources, scope: scopes as string[] };
}

/** Whether the presented token has expired: a JWT's `exp` (verified when the request was accepted), else the claims' (an introspection answer's). */
function expired(token: string, principal: Principal, nowSec: number): boolean {
  const parts = token.split('.');
  const payload = parts.length === 3 ? decodeBase64url(parts[1]!) : null;
  let exp: unknown;
  try {
    exp = payload === null ? undefined : parseJsonObject(new TextDecoder().decode(payload))?.exp;
  } catch {
    // Not a JWT's payload: the claims say.
  }
  exp ??= principal.claims?.exp;
  return typeof exp === 'number' && exp <= nowSec;
}
