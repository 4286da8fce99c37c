// perEnv(): a Worker's handler made from the `env` its requests bring (design §25). Workers hand
// secrets and bindings to `fetch` as `env`, never to module scope; the object is the same for every
// request an isolate serves, so the handler is built once per `env` object and kept beside it.
// Web-standard globals only (no node: import), like src/agent.
import { AuthConfigError, kindOf } from '../auth/internal.ts';

/** A handler that takes the Worker's `env` with each request (a Workers `fetch`, or a Hono route's `c.env`). */
export type PerEnvHandler<Env extends object> = (request: Request, env: Env) => Promise<Response>;

/**
 * Builds the handler from a request's `env` the first time that `env` object is seen, and reuses
 * it for every request that brings the same object (a `WeakMap`: a dropped `env` takes its
 * handler with it). `build` runs once per `env`; a `build` that throws throws to that request,
 * and the next request tries again.
 * @example
 * export default { fetch: perEnv((env: Env) => agentHandler(agent, { auth: [apiToken(env.AGENT_API_TOKEN)] })) };
 * // Hono: app.all('/agent/*', (c) => handle(c.req.raw, c.env));
 */
export function perEnv<Env extends object>(
  build: (env: Env) => (request: Request) => Promise<Response>,
): PerEnvHandler<Env> {
  if (typeof build !== 'function')
    throw new AuthConfigError(`perEnv(): build must be a function of env that returns a handler; got ${kindOf(build)}`);
  const handlers = new WeakMap<Env, (request: Request) => Promise<Response>>();
  return (request, env) => {
    if (typeof env !== 'object' || env === null)
      throw new AuthConfigError(
        `perEnv(): the handler needs the Worker's env (an object) with each request; got ${kindOf(env)}`,
      );
    let handler = handlers.get(env);
    if (handler === undefined) {
      handler = build(env);
      if (typeof handler !== 'function')
        throw new AuthConfigError(
          `perEnv(): build must return a handler (a function of a Request); got ${kindOf(handler)}`,
        );
      handlers.set(env, handler);
    }
    return handler(request);
  };
}
