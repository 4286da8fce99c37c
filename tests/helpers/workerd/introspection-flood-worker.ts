/**
 * A Workers entry for tests/auth/introspection.node.test.ts's flood inside workerd: one
 * `introspection()` entry per isolate (made on the first request: nothing runs at start-up),
 * called by many requests at once, each its own request context. The endpoint is the
 * `INTROSPECTION_ENDPOINT` binding; each request answers the status its bearer token got.
 */
import { introspection, routeAuth } from '../../../src/auth/index.ts';
import type { Authenticate } from '../../../src/auth/route-auth.ts';

let authenticate: Authenticate | undefined;

export default {
  async fetch(request: Request, env: { INTROSPECTION_ENDPOINT: string }): Promise<Response> {
    authenticate ??= routeAuth(
      introspection({
        endpoint: env.INTROSPECTION_ENDPOINT,
        clientId: 'rs',
        clientSecret: 'rs-secret',
        audience: 'https://agent.example/opaque',
        cache: false,
      }),
    );
    const result = await authenticate(request);
    return new Response(null, { status: result.ok ? 200 : result.response.status });
  },
};
