/**
 * A Workers entry that puts the auth layer in front of two routes, for tests/auth/workerd.node.test.ts:
 * - `/strict`: basic, apiToken (token from the `API_TOKEN` binding) and custom entries;
 * - `/open`: the same list ending with anonymous().
 * An accepted request answers `{ principal, frozen }`; a refused one answers the auth response.
 * Entries are built on the first request: creating them does no I/O, but the token is a binding.
 */
import {
  AuthError,
  anonymous,
  apiToken,
  basic,
  routeAuth,
  type AuthFn,
  type AuthResult,
} from '../../../src/auth/index.ts';

interface Env {
  API_TOKEN: string;
}

const banned: AuthFn = (request) => {
  if (request.headers.has('x-banned')) throw new AuthError(403);
  return null;
};
const buggy: AuthFn = (request) => {
  if (request.headers.has('x-bug')) throw new Error('database secret hunter2 leaked');
  return null;
};
const partner: AuthFn = async (request) => {
  const name = request.headers.get('x-partner');
  return name === null ? null : { id: name, type: 'service', claims: { tier: { level: 'gold' } } };
};
partner.challenges = [{ scheme: 'Partner', realm: 'partners "eu"' }];

let routes:
  | { strict: (request: Request) => Promise<AuthResult>; open: (request: Request) => Promise<AuthResult> }
  | undefined;

function buildRoutes(env: Env) {
  const list = [
    banned,
    buggy,
    basic({ users: { ada: 'lovelace', '\u00e9lodie': 'caf\u00e9-cr\u00e8me' }, realm: 'agent' }),
    apiToken(env.API_TOKEN, { id: 'ci-bot' }),
    partner,
  ];
  return { strict: routeAuth(list), open: routeAuth([...list, anonymous()]) };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    routes ??= buildRoutes(env);
    const path = new URL(request.url).pathname;
    const authenticate = path === '/open' ? routes.open : routes.strict;
    const result = await authenticate(request);
    if (!result.ok) return result.response;
    const { principal } = result;
    const claims = principal.claims as { tier?: object } | undefined;
    const frozen =
      Object.isFrozen(principal) && (claims === undefined || (Object.isFrozen(claims) && Object.isFrozen(claims.tier)));
    return Response.json({ principal, frozen });
  },
};
