// The runtime of the `cloudflare-worker` target, bundled into worker.js: web-standard globals
// only. It serves the declarative spec (agent.json), not agent.ts: no code of the directory
// runs on Workers, and there is no auth list there, only the AGENT_API_TOKEN binding.
import { createAgent } from '../agent/agent.ts';
import { checkSessionId } from '../agent/context.ts';
import { randomId } from '../agent/ids.ts';
import { echoModel } from '../agent/models/echo.ts';
import { openAICompatible } from '../agent/models/openai.ts';
import type { Agent, DecideOptions, Model, Principal, RunResult, SendOptions } from '../agent/types.ts';
import { apiToken, routeAuth, type AuthFn, type AuthResult } from '../auth/internal.ts';
import { parseDecisionBody, parseSendBody, readJsonObject } from '../http/body.ts';
import { webRouteRequest } from '../http/route-request.ts';
import { agentHandler } from '../http/handler.ts';
import { errorReply, errorResponse, failureResponse, HttpError, jsonResponse, toResponse } from '../http/responses.ts';
import { mcpGuard, mcpRoute, readMcpOptions } from '../http/mcp.ts';
import type { McpAgent } from '../http/mcp-tools.ts';
import { parseUiRequest } from '../http/ui-stream.ts';
import {
  callerKey,
  limiter,
  readLimits,
  tokenMeter,
  type Limiter,
  type Limits,
  type LimitWindow,
} from '../http/limits.ts';
import { durableObjectStore, type DurableObjectStorageLike } from './durable-object-store.ts';
import { durableObjectLimitStore, LimitObject, type LimitNamespaceLike } from './durable-object-limit-store.ts';

/** The names the generated wrangler.toml declares and worker.js reads. */
export const WORKER_BINDINGS = Object.freeze({
  /** Secret: the API token every route but health requires. */
  apiToken: 'AGENT_API_TOKEN',
  /** Secret: the API key of an `openai-compatible` model (sent as `Authorization: Bearer`). */
  modelApiKey: 'MODEL_API_KEY',
  /** Durable Object namespace: one object per session. */
  sessions: 'AGENT_SESSIONS',
  /** The Durable Object class worker.js exports. */
  sessionClass: 'AgentSession',
  /** Durable Object namespace of the limits (design §22): one object per counted key. */
  limits: 'AGENT_LIMITS',
  /** The Durable Object class of the limits. */
  limitsClass: 'AgentLimits',
});

/** The models agent.json may declare for this target (design §7). */
export type ModelSpec = { provider: 'echo' } | { provider: 'openai-compatible'; baseURL: string; model: string };

export interface SpecWorkerOptions {
  /** The content of agent.json, checked by the build: `name`, `instructions?`, `model?` (absent: echo). */
  spec: { name: string; instructions?: string; model?: ModelSpec };
  basePath: string;
  /** `"mcp": true` of agentward.json: `POST <base>/mcp` serves the agent as a remote MCP server (the tool `ask`). */
  mcp?: boolean;
  /**
   * `"limits"` of agentward.json (design §22), counted in the `AGENT_LIMITS` Durable Objects; the
   * client address is `CF-Connecting-IP`, which Cloudflare sets on every request it forwards.
   */
  limits?: { requests?: LimitWindow; concurrent?: number; tokens?: LimitWindow; failures?: LimitWindow };
}

interface DurableObjectStub {
  fetch(request: Request): Promise<Response>;
}
interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: unknown): DurableObjectStub;
}

export interface SpecWorkerEnv {
  AGENT_API_TOKEN?: unknown;
  MODEL_API_KEY?: unknown;
  AGENT_SESSIONS?: DurableObjectNamespaceLike;
  AGENT_LIMITS?: LimitNamespaceLike;
}

/** What worker.js exports: the module's `fetch` (default export) and the Durable Object class of a session. */
export interface SpecWorker {
  worker: { fetch(request: Request, env: SpecWorkerEnv): Promise<Response> };
  SessionObject: new (
    state: { storage: DurableObjectStorageLike },
    env: SpecWorkerEnv,
  ) => { fetch(request: Request): Promise<Response> };
  /** The Durable Object class of the limits (`AgentLimits`, bound as `AGENT_LIMITS`). */
  LimitObject: typeof LimitObject;
}

/**
 * The entry of a deployment with no credential configured: it accepts nobody, so an agent is
 * never served open by omission (a worker before its secret is set, a server without any auth).
 */
export const NO_AUTH_CONFIGURED: AuthFn = Object.assign(() => null, { challenges: [{ scheme: 'Bearer' }] });

/** How the worker hands the verified principal to a session's Durable Object, which only the worker can reach. */
const PRINCIPAL_HEADER = 'x-agentward-principal';

const forwardedPrincipal: AuthFn = (request) => {
  const text = request.headers.get(PRINCIPAL_HEADER);
  return text === null ? null : (JSON.parse(decodeURIComponent(text)) as Principal);
};

function modelOf(spec: SpecWorkerOptions['spec'], env: SpecWorkerEnv): Model {
  const declared = spec.model;
  if (declared === undefined || declared.provider === 'echo') return echoModel();
  const apiKey = typeof env?.MODEL_API_KEY === 'string' && env.MODEL_API_KEY !== '' ? env.MODEL_API_KEY : undefined;
  return openAICompatible({
    baseURL: declared.baseURL,
    model: declared.model,
    ...(apiKey !== undefined && { apiKey }),
  });
}

type Route = 'send' | 'chat' | 'session' | 'approvals' | 'decide' | 'ui' | 'spec' | 'health' | 'mcp';

/** The routes of agentHandler for a `'shared'` agent (design §5), plus `GET /spec`; `undefined` is a 404. One trailing `/` is ignored. */
function matchRoute(rest: string, mcp: boolean): { route: Route; methods: string; id?: string } | undefined {
  const [first, second, ...more] = rest.replace(/\/$/, '').split('/').slice(1);
  if (more.length > 0) return undefined;
  let id: string | undefined;
  if (second !== undefined) {
    try {
      id = decodeURIComponent(second);
    } catch {
      return undefined;
    }
    if (id === '') return undefined;
  }
  const one = (route: Route, methods: string) => (id === undefined ? { route, methods } : undefined);
  switch (first) {
    case undefined:
      return { route: 'send', methods: 'POST' };
    case 'health':
      return one('health', 'GET');
    case 'spec':
      return one('spec', 'GET');
    case 'ui':
      return one('ui', 'POST');
    case 'chat':
      return id === undefined ? { route: 'chat', methods: 'POST' } : { route: 'session', methods: 'GET', id };
    case 'approvals':
      return id === undefined ? { route: 'approvals', methods: 'GET' } : { route: 'decide', methods: 'POST', id };
    case 'mcp':
      return mcp ? one('mcp', 'POST') : undefined;
    default:
      return undefined;
  }
}

/**
 * A Workers module serving the agent agent.json declares, behind `Authorization: Bearer
 * <AGENT_API_TOKEN>` (no binding: every route but health answers 401), with the routes of
 * `agentHandler` (design §5): `GET <base>/health` (open), `POST <base>`, `POST <base>/chat`
 * (JSON, or server-sent events with `Accept: text/event-stream`), `GET <base>/chat/:id`,
 * `GET <base>/approvals?sessionId=`, `POST <base>/approvals/:id`, `POST <base>/ui` (`useChat`),
 * and `GET <base>/spec` (agent.json). The model is the declared one (`echo`, or
 * `openai-compatible` with the `MODEL_API_KEY` secret binding).
 *
 * Each session is one Durable Object (`SessionObject`, bound as `AGENT_SESSIONS`): the worker
 * checks auth and the request, then hands it with the verified principal to the session's
 * object, which runs `agentHandler` over `durableObjectStore`. A session is thus kept across
 * requests and restarts, and its turns run one after another in the one place it lives.
 * A send without `sessionId` gets a new random 128-bit id. A declarative agent has no tools,
 * so no run ever waits for an approval: deciding one answers 404 as for an unknown id.
 */
export function createSpecWorker({ spec, basePath, mcp = false, limits }: SpecWorkerOptions): SpecWorker {
  const mcpConfig = readMcpOptions('createSpecWorker()', mcp, spec.name, true);
  // Checked now; the store is the AGENT_LIMITS binding, known per request. Only Cloudflare sets CF-Connecting-IP here.
  const clientAddress = (request: Request) => request.headers.get('cf-connecting-ip') ?? undefined;
  const checked = readLimits('createSpecWorker()', limits && { ...limits, clientAddress }, true);
  let limited: { namespace: LimitNamespaceLike; limits: Limits; limiter: Limiter } | undefined;
  /** The limits on the binding of this request's env (made once per binding), or `undefined` without `limits`. */
  function limitsFor(env: SpecWorkerEnv) {
    if (checked === undefined) return undefined;
    const namespace = env?.AGENT_LIMITS;
    if (typeof namespace?.idFromName !== 'function')
      throw new Error(`the ${WORKER_BINDINGS.limits} Durable Object binding is missing (see wrangler.toml)`);
    if (limited?.namespace !== namespace) {
      const withStore = { ...checked, store: durableObjectLimitStore(namespace) };
      limited = { namespace, limits: withStore, limiter: limiter(withStore) };
    }
    return limited;
  }
  let current: { token: string | undefined; authenticate: (request: Request) => Promise<AuthResult> } | undefined;

  // The binding is only known per request; the list is built once per token value.
  function authenticatorFor(env: SpecWorkerEnv): (request: Request) => Promise<AuthResult> {
    const token =
      typeof env?.AGENT_API_TOKEN === 'string' && env.AGENT_API_TOKEN !== '' ? env.AGENT_API_TOKEN : undefined;
    if (current === undefined || current.token !== token) {
      current = { token, authenticate: routeAuth(token === undefined ? NO_AUTH_CONFIGURED : apiToken(token)) };
    }
    return current.authenticate;
  }

  /** Hands a request to the Durable Object of its session, with the principal and (re-serialized) the body already read. */
  function toSession(
    env: SpecWorkerEnv,
    request: Request,
    sessionId: string,
    principal: Principal,
    body?: Record<string, unknown>,
    url = request.url,
  ): Promise<Response> {
    const sessions = env?.AGENT_SESSIONS;
    if (typeof sessions?.idFromName !== 'function')
      throw new Error(`the ${WORKER_BINDINGS.sessions} Durable Object binding is missing (see wrangler.toml)`);
    const headers = new Headers(request.headers);
    for (const name of ['authorization', 'content-length', PRINCIPAL_HEADER]) headers.delete(name);
    // Encoded: a header value is Latin-1 only, and a principal's id or claims may be any text.
    headers.set(PRINCIPAL_HEADER, encodeURIComponent(JSON.stringify(principal)));
    const init: RequestInit = { method: request.method, headers, signal: request.signal };
    if (body !== undefined) init.body = JSON.stringify(body);
    return sessions.get(sessions.idFromName(checkSessionId(sessionId))).fetch(new Request(url, init));
  }

  /** The agent as the MCP route sees it: `ask` is a `POST <base>` handed to the session's object. A spec has no tools: nothing to decide. */
  function sessionAgent(env: SpecWorkerEnv, request: Request, principal: Principal): McpAgent {
    return {
      name: spec.name,
      awaitsApprovals: false,
      async send(message, options = {}) {
        const sessionId = options.sessionId ?? randomId();
        // The MCP request (a POST, its headers and its abort signal) goes on as POST <base> with the tool's message.
        const answer = await toSession(
          env,
          request,
          sessionId,
          principal,
          { message, sessionId },
          new URL(basePath || '/', request.url).href,
        );
        const body = (await answer.json()) as RunResult & { error?: string };
        if (!answer.ok)
          throw new HttpError(answer.status, typeof body.error === 'string' ? body.error : 'The agent failed');
        return body;
      },
      decide: () => Promise.reject(new HttpError(404, 'Approval not found')),
    };
  }

  async function route(
    request: Request,
    env: SpecWorkerEnv,
    principal: Principal,
    found: { route: Route; id?: string },
  ): Promise<Response> {
    switch (found.route) {
      case 'spec':
        return jsonResponse(spec);
      case 'send':
      case 'chat': {
        const body = await readJsonObject(webRouteRequest(request));
        const { sessionId = randomId() } = parseSendBody(body);
        return toSession(env, request, sessionId, principal, { ...body, sessionId });
      }
      case 'session':
        return toSession(env, request, found.id as string, principal);
      case 'approvals': {
        const sessionId = new URL(request.url).searchParams.get('sessionId');
        if (!sessionId) throw new HttpError(400, 'sessionId query parameter is required');
        return toSession(env, request, sessionId, principal);
      }
      case 'decide':
        // No approval of a declarative agent (it has no tools) ever waits: every id is unknown.
        parseDecisionBody(await readJsonObject(webRouteRequest(request)));
        return errorResponse(404, 'Approval not found');
      case 'ui': {
        const body = await readJsonObject(webRouteRequest(request));
        return toSession(env, request, parseUiRequest(body).sessionId, principal, body);
      }
      case 'health':
        return jsonResponse({ status: 'ok' });
      case 'mcp': {
        const view = webRouteRequest(request);
        const counted = limitsFor(env)?.limiter;
        return toResponse(
          await mcpRoute(
            sessionAgent(env, request, principal),
            mcpConfig!,
            view,
            principal,
            () => errorReply(403, 'Forbidden'),
            counted && ((call) => counted.run(counted.caller(view, principal), true, call)),
          ),
        );
      }
    }
  }

  /** A session's agent whose model turns pass its principal's `tokens` (design §25) when there are limits. */
  function countedAgent(agent: Agent, env: SpecWorkerEnv): Agent {
    const tokens = limitsFor(env)?.limits.tokens;
    if (tokens === undefined) return agent;
    const store = limitsFor(env)!.limits.store;
    const meter = (principal: Principal | undefined) => tokenMeter(store, tokens, callerKey(principal, undefined));
    return Object.freeze({
      ...agent,
      send: (message: string, options: SendOptions = {}) =>
        agent.send(message, { ...options, meter: meter(options.principal) }),
      decide: (approvalId: string, decision: DecideOptions) =>
        agent.decide(approvalId, { ...decision, meter: meter(decision.principal) }),
    });
  }

  /** One session's Durable Object: the agent over this object's storage, behind the principal the worker verified. */
  class SessionObject {
    readonly #storage: DurableObjectStorageLike;
    readonly #env: SpecWorkerEnv;
    #handler: ((request: Request) => Promise<Response>) | undefined;

    constructor(state: { storage: DurableObjectStorageLike }, env: SpecWorkerEnv) {
      this.#storage = state.storage;
      this.#env = env;
    }

    fetch(request: Request): Promise<Response> {
      // The worker counted the request and checked the budget; this object counts the tokens its turns spend.
      this.#handler ??= agentHandler(
        countedAgent(
          createAgent({
            name: spec.name,
            instructions: spec.instructions ?? '',
            model: modelOf(spec, this.#env),
            store: durableObjectStore(this.#storage),
          }),
          this.#env,
        ),
        { basePath, auth: forwardedPrincipal },
      );
      return this.#handler(request);
    }
  }

  const worker = {
    async fetch(request: Request, env: SpecWorkerEnv): Promise<Response> {
      const path = new URL(request.url).pathname;
      if (path !== basePath && !path.startsWith(`${basePath}/`)) return errorResponse(404, 'Not Found');
      const found = matchRoute(path.slice(basePath.length), mcpConfig !== undefined);
      try {
        const refused = found?.route === 'mcp' ? mcpGuard(mcpConfig!, webRouteRequest(request)) : undefined;
        if (refused !== undefined) return toResponse(refused);
        let principal: Principal | undefined;
        const counted = found?.route === 'health' ? undefined : limitsFor(env)?.limiter;
        const view = webRouteRequest(request);
        if (found?.route !== 'health') {
          const run = () => authenticatorFor(env)(request);
          const result = counted?.failures ? await counted.admit(view, run) : await run();
          if (!result.ok) return result.response;
          principal = result.principal;
        }
        if (found === undefined) return errorResponse(404, 'Not Found');
        if (request.method !== found.methods) return errorResponse(405, 'Method Not Allowed', { allow: found.methods });
        if (counted === undefined || found.route === 'mcp')
          return await route(request, env, principal as Principal, found);
        // A session object's answer has the immutable headers of a fetched response: copied, to carry the RateLimit fields.
        const serve = async () => {
          const answer = await route(request, env, principal as Principal, found);
          return new Response(answer.body, answer);
        };
        return toResponse(await counted.run(counted.caller(view, principal), TURNS.has(found.route), serve));
      } catch (error) {
        // An AGENT_API_TOKEN outside the b64token syntax lands here: apiToken() refuses it (500, logged without the token).
        return failureResponse(error);
      }
    },
  };
  return { worker, SessionObject, LimitObject };
}

/** The routes that run the model: `limits.tokens` refuses them once the window's total is spent. */
const TURNS = new Set<Route>(['send', 'chat', 'ui']);
