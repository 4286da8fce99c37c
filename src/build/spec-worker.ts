// The runtime of the `cloudflare-worker` target, bundled into worker.js: web-standard globals
// only. It serves the declarative spec (agent.json), not agent.ts: no code of the directory
// runs on Workers, and there is no auth list there, only the AGENT_API_TOKEN binding.
import { apiToken } from '../auth/api-token.ts';
import { routeAuth } from '../auth/route-auth.ts';
import type { AuthFn, AuthResult } from '../auth/types.ts';
import { parseSendBody, readJsonObject } from '../http/body.ts';
import { errorResponse, failureResponse, jsonResponse } from '../http/responses.ts';

export interface SpecWorkerOptions {
  /** The content of agent.json. */
  spec: { name: string; instructions?: string; [field: string]: unknown };
  basePath: string;
}

export interface SpecWorkerEnv {
  AGENT_API_TOKEN?: unknown;
}

/** Paths under the base and their methods. */
const ROUTES: ReadonlyMap<string, readonly string[]> = new Map([['', ['GET', 'POST']], ['/spec', ['GET']], ['/chat', ['POST']]]);

/**
 * The entry of a deployment with no credential configured: it accepts nobody, so an agent is
 * never served open by omission (a worker before its secret is set, a server without any auth).
 */
export const NO_AUTH_CONFIGURED: AuthFn = Object.assign(() => null, { challenges: [{ scheme: 'Bearer' }] });

/**
 * A Workers module serving an agent's spec, behind `Authorization: Bearer <AGENT_API_TOKEN>`:
 * - `GET <base>/health`: `{"status":"ok"}`, open;
 * - `GET <base>` and `GET <base>/spec`: the spec (agent.json);
 * - `POST <base>` and `POST <base>/chat` with `{ message, sessionId? }`: a run result from the
 *   built-in echo (the reply is the message; a spec has no code to run), nothing stored.
 * Auth runs before routing, so an unknown path under `<base>` answers 401 before 404.
 */
export function createSpecWorker({ spec, basePath }: SpecWorkerOptions): { fetch(request: Request, env: SpecWorkerEnv): Promise<Response> } {
  let current: { token: string | undefined; authenticate: (request: Request) => Promise<AuthResult> } | undefined;

  // The binding is only known per request; the list is built once per token value.
  function authenticatorFor(env: SpecWorkerEnv): (request: Request) => Promise<AuthResult> {
    const token = typeof env?.AGENT_API_TOKEN === 'string' && env.AGENT_API_TOKEN !== '' ? env.AGENT_API_TOKEN : undefined;
    if (current === undefined || current.token !== token) {
      current = { token, authenticate: routeAuth(token === undefined ? NO_AUTH_CONFIGURED : apiToken(token)) };
    }
    return current.authenticate;
  }

  async function route(request: Request, rest: string): Promise<Response> {
    const allow = ROUTES.get(rest);
    if (allow === undefined) return errorResponse(404, 'Not Found');
    if (!allow.includes(request.method)) return errorResponse(405, 'Method Not Allowed', { allow: allow.join(', ') });
    if (request.method === 'GET') return jsonResponse(spec);
    const { message, sessionId = crypto.randomUUID() } = parseSendBody(await readJsonObject(request));
    const messages = [{ role: 'user', content: message }, { role: 'assistant', content: message }];
    return jsonResponse({ sessionId, status: 'completed', text: message, messages, approvals: [] });
  }

  return {
    async fetch(request, env) {
      const path = new URL(request.url).pathname;
      if (path === `${basePath}/health`) {
        return request.method === 'GET' ? jsonResponse({ status: 'ok' }) : errorResponse(405, 'Method Not Allowed', { allow: 'GET' });
      }
      if (path !== basePath && !path.startsWith(`${basePath}/`)) return errorResponse(404, 'Not Found');
      try {
        const result = await authenticatorFor(env)(request);
        if (!result.ok) return result.response;
        return await route(request, path.slice(basePath.length));
      } catch (error) {
        // An AGENT_API_TOKEN outside the b64token syntax lands here: apiToken() refuses it (500, logged without the token).
        return failureResponse(error);
      }
    },
  };
}
