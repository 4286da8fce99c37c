/**
 * A Workers entry behind `jwt({ jwksUrl })`, for tests/auth/key-set-workerd.node.test.ts. The key set
 * is served by the test's own server at the `JWKS_URL` binding (`/`) and `BROKEN_JWKS_URL`
 * (`/broken`, answers 500) and `SLOW_BROKEN_JWKS_URL` (`/slow-broken`, answers 503 after 300 ms). Both answer `{ principal }` or the auth response; `/runtime` tells
 * whether the key set sees a Workers runtime.
 * The entry is built on the first request, since the URL is a binding (creating it does no I/O).
 */
import { jwt, routeAuth, type AuthResult } from '../../../src/auth/index.ts';
import { isWorkersRuntime } from '../../../src/auth/attempt-gate.ts';

interface Env {
  JWKS_URL: string;
  BROKEN_JWKS_URL: string;
  SLOW_BROKEN_JWKS_URL: string;
  AUDIENCE: string;
}

let routes: Record<string, (request: Request) => Promise<AuthResult>> | undefined;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === '/runtime') return Response.json({ workers: isWorkersRuntime() });
    routes ??= {
      '/': routeAuth([jwt({ jwksUrl: env.JWKS_URL, audience: env.AUDIENCE })]),
      '/broken': routeAuth([jwt({ jwksUrl: env.BROKEN_JWKS_URL, audience: env.AUDIENCE })]),
      '/slow-broken': routeAuth([jwt({ jwksUrl: env.SLOW_BROKEN_JWKS_URL, audience: env.AUDIENCE })]),
    };
    const authenticate = routes[path];
    if (authenticate === undefined) return new Response(null, { status: 404 });
    const result = await authenticate(request);
    return result.ok ? Response.json({ principal: result.principal }) : result.response;
  },
};
