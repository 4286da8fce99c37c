// SPDX-License-Identifier: MIT
// This agent as an OAuth client at an authorization server's token endpoint (design §27): the
// client's options checked at creation, the endpoint (configured, or named by the issuer's
// metadata), client authentication on every call (client_secret_basic or private_key_jwt), and
// the answer read. tokenExchange() and both legs of idJag() post through it.
import { basicCredentials, clientAssertion, type ClientPrivateKey } from './client-auth.ts';
import { kindOf, throwConfigError } from './errors.ts';
import { discoveredEndpoint, staticEndpoint } from './introspection-endpoint.ts';
import { clockOf, type InternalOptions } from './internal-options.ts';
import { readHttpsUrl } from './key-set.ts';
import { isNumberIn } from './options.ts';
import { exchanged, post, TokenExchangeError, type ExchangedToken } from './token-endpoint.ts';

/** The authorization server's token endpoint (or its `issuer`), and this client's credentials there. */
export interface TokenClientOptions {
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
  /** How long a call may take; default 5,000 ms. */
  timeoutMs?: number;
}

/** The names of `TokenClientOptions`, for each helper's closed option list. */
export const TOKEN_CLIENT_OPTIONS = [
  'tokenEndpoint',
  'issuer',
  'clientId',
  'clientSecret',
  'privateKey',
  'algorithm',
  'keyId',
  'timeoutMs',
] as const;

/**
 * POSTs a grant's form to the token endpoint, authenticated as the client, and resolves to the
 * issued token. `impliedType` is the token type of an answer that names none (an RFC 6749 answer
 * to any grant but token exchange names none: an access token).
 */
export type TokenClient = (form: URLSearchParams, impliedType?: string) => Promise<ExchangedToken>;

/**
 * Checks a client's options (`helper` names the helper in each `AuthConfigError`, never a
 * secret); the names were checked by the caller, whose list may hold more. `internal` is the
 * helper's test hook (a clock, a fetch).
 */
export function tokenClient(helper: string, options: TokenClientOptions, internal: InternalOptions): TokenClient {
  const { clientId, clientSecret, privateKey, issuer, timeoutMs = 5_000 } = options;
  if (typeof clientId !== 'string' || clientId === '')
    throwConfigError(helper, `clientId must be a non-empty string; got ${kindOf(clientId)}`);
  if ((clientSecret === undefined) === (privateKey === undefined))
    throwConfigError(helper, 'give exactly one of clientSecret (client_secret_basic) and privateKey (private_key_jwt)');
  if (clientSecret !== undefined && (typeof clientSecret !== 'string' || clientSecret === ''))
    throwConfigError(helper, `clientSecret must be a non-empty string; got ${kindOf(clientSecret)}`);
  if (clientSecret !== undefined && (options.algorithm !== undefined || options.keyId !== undefined))
    throwConfigError(helper, 'algorithm and keyId go with privateKey, not clientSecret');
  if (!isNumberIn(timeoutMs, 1, 60_000, true))
    throwConfigError(helper, 'timeoutMs must be a whole number of milliseconds from 1 to 60000');
  if (options.tokenEndpoint === undefined && issuer === undefined)
    throwConfigError(helper, 'give tokenEndpoint, or issuer to discover it');
  if (issuer !== undefined && (typeof issuer !== 'string' || issuer === ''))
    throwConfigError(helper, 'issuer must be a non-empty string');
  const internals: InternalOptions = { ...internal, timeoutMs };
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

  return async (form, impliedType) => {
    const endpoint = await endpointOf(now() / 1000);
    if (endpoint === undefined) throw new TokenExchangeError('UNAVAILABLE');
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
      form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      form.set('client_assertion', signed);
    }
    const answer = await post(endpoint, { method: 'POST', headers, body: form.toString() }, internals);
    return exchanged(answer, now(), impliedType);
  };
}
