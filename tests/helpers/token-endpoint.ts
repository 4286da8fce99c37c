// A token endpoint for tests/auth/token-exchange.test.ts and tests/http/token-exchange-principal.test.ts, behind a fetch the helper is given through
// the test hook _internal: every request is kept (its URL, headers and form), and `answer` says what
// the endpoint (or a discovery document) answers. Tokens are tied to principals by routeAuth with
// a clock pinned at NOW (tests/helpers/jwt.ts).
import {
  routeAuth,
  tokenExchange,
  type AuthFn,
  type Principal,
  type TokenExchangeOptions,
} from '../../src/auth/index.ts';
import { jwtAt } from './test-hook.ts';
import { AUDIENCE, ISSUER, NOW, SECRET, claims, hmacSigner, signToken } from './jwt.ts';

export const TOKEN_ENDPOINT = 'https://id.example.com/oauth/token';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
export const EXCHANGED = 'exchanged-token-for-the-crm-0123456789';

export interface Seen {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly form: URLSearchParams;
  readonly init: RequestInit;
}

/** The endpoint's usual answer: a token for another audience, with `overrides` merged over it. */
export const issued = (overrides: Record<string, unknown> = {}, status = 200) =>
  Response.json(
    {
      access_token: EXCHANGED,
      token_type: 'Bearer',
      issued_token_type: ACCESS_TOKEN_TYPE,
      expires_in: 600,
      scope: 'crm:read',
      ...overrides,
    },
    { status },
  );

/** A fetch that records each request and answers with `answer` (default: `issued()`). */
export function fakeEndpoint(answer: (seen: Seen) => Response | Promise<Response> = () => issued()) {
  const seen: Seen[] = [];
  const fetch = async (url: string, init: RequestInit): Promise<Response> => {
    const request: Seen = {
      url,
      method: init.method ?? 'GET',
      headers: new Headers(init.headers),
      form: new URLSearchParams(typeof init.body === 'string' ? init.body : ''),
      init,
    };
    seen.push(request);
    return answer(request);
  };
  /** Only the token endpoint's requests (not discovery's). */
  const exchanges = () => seen.filter((request) => request.method === 'POST');
  return { seen, exchanges, fetch };
}

/** `tokenExchange()` talking to `fetch`, its clock at NOW (milliseconds). */
export const exchangeWith = (
  fetch: (url: string, init: RequestInit) => Promise<Response>,
  options: Partial<TokenExchangeOptions> = {},
  now = () => NOW * 1000,
) =>
  tokenExchange({
    tokenEndpoint: TOKEN_ENDPOINT,
    clientId: 'agent',
    clientSecret: 'agent-client-secret',
    ...options,
    _internal: { fetch, now },
  } as TokenExchangeOptions);

/** The jwt() entry of the tests: HS256 tokens of ISSUER for AUDIENCE, at NOW. */
export const jwtEntry = (options: Record<string, unknown> = {}): AuthFn =>
  jwtAt({ secret: SECRET, issuer: ISSUER, audience: AUDIENCE, ...options }, () => NOW);

const sign = await hmacSigner(SECRET);
/** A token of `sub` (a fresh `jti` each time: two tokens of one caller differ). */
export const accessToken = (extra: Record<string, unknown> = {}) =>
  signToken({ alg: 'HS256', typ: 'at+jwt' }, claims({ jti: crypto.randomUUID(), ...extra }), sign);

/** The principal `entries` gives for `Authorization: <scheme> <credentials>`, as a route sees it. */
export async function principalOf(entries: AuthFn | AuthFn[], authorization: string): Promise<Principal> {
  const result = await routeAuth(entries)(
    new Request('https://agent.example.com/agent', { headers: { authorization } }),
  );
  if (!result.ok) throw new Error(`refused: ${result.response.status}`);
  return result.principal;
}
