// The runtime of the `cloudflare-worker` target, bundled into worker.js: web-standard globals
// only. It is `agentHandler` over the agent agent.json declares, the AGENT_API_TOKEN entry and
// the Durable Object stores (design §25): no router, order of checks or counting of its own, so
// it answers every request as `agentHandler` with the same options. No code of the directory runs
// on Workers, and there is no auth list there, only the AGENT_API_TOKEN binding.
import { createAgent } from '../agent/agent.ts';
import { echoModel } from '../agent/models/echo.ts';
import { openAICompatible } from '../agent/models/openai.ts';
import type { Model } from '../agent/types.ts';
import { apiToken, AuthConfigError, type AuthFn, kindOf } from '../auth/internal.ts';
import { agentHandler, type AgentHandlerOptions } from '../http/handler.ts';
import { readLimits, type LimitWindow } from '../http/limits.ts';
import { readMcpOptions } from '../http/mcp.ts';
import { failureResponse } from '../http/responses.ts';
import { durableObjectLimitStore, LimitObjectCore, type LimitNamespaceLike } from './durable-object-limit-store.ts';
import {
  durableObjectSessionStore,
  SessionStoreObjectCore,
  type DurableObjectNamespaceLike,
} from './durable-object-sessions.ts';

/** The names the generated wrangler.toml declares and worker.js reads. */
export const WORKER_BINDINGS = Object.freeze({
  /** Secret: the API token every route but health requires. */
  apiToken: 'AGENT_API_TOKEN',
  /** Secret: the API key of an `openai-compatible` model (sent as `Authorization: Bearer`). */
  modelApiKey: 'MODEL_API_KEY',
  /** Durable Object namespace of the agent's store: sessions, checkpoints, memory. */
  sessions: 'AGENT_SESSIONS',
  /** The Durable Object class worker.js exports for it. */
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

export interface SpecWorkerEnv {
  AGENT_API_TOKEN?: unknown;
  MODEL_API_KEY?: unknown;
  AGENT_SESSIONS?: DurableObjectNamespaceLike;
  AGENT_LIMITS?: LimitNamespaceLike;
}

/** What worker.js exports: the module's `fetch` (default export) and the Durable Object classes of its stores. */
export interface SpecWorker {
  worker: { fetch(request: Request, env: SpecWorkerEnv): Promise<Response> };
  /** The agent's store (`AgentSession`, bound as `AGENT_SESSIONS`). */
  SessionObject: typeof SessionStoreObjectCore;
  /** The limits (`AgentLimits`, bound as `AGENT_LIMITS`). */
  LimitObject: typeof LimitObjectCore;
}

/**
 * The entry of a deployment with no credential configured: it accepts nobody, so an agent is
 * never served open by omission (a worker before its secret is set, a server without any auth).
 */
export const NO_AUTH_CONFIGURED: AuthFn = Object.assign(() => null, { challenges: [{ scheme: 'Bearer' }] });

/** The client address of a request Cloudflare forwarded: only Cloudflare sets `CF-Connecting-IP` on a Worker's request. */
const cfConnectingIp = (request: Request) => request.headers.get('cf-connecting-ip') ?? undefined;

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

/** A Durable Object binding of `env`, or the error that names it as wrangler.toml declares it. */
function binding<T>(env: SpecWorkerEnv, name: 'AGENT_SESSIONS' | 'AGENT_LIMITS'): T {
  const namespace = env?.[name];
  if (typeof namespace?.idFromName !== 'function')
    throw new AuthConfigError(
      `createSpecWorker(): the ${name} Durable Object binding is missing (see wrangler.toml); got ${kindOf(namespace)}`,
    );
  return namespace as T;
}

/**
 * A Workers module serving the agent agent.json declares: `agentHandler` over that agent (the
 * declared model, `echo` or `openai-compatible` with the `MODEL_API_KEY` secret binding), behind
 * `Authorization: Bearer <AGENT_API_TOKEN>` (no binding: every route but health answers 401), with
 * its routes, checks and limits (design §5, §22, §25). The agent's store is one Durable Object
 * (`SessionObject`, bound as `AGENT_SESSIONS`), so sessions are kept across requests, isolates and
 * restarts, and the turns of a session run one after another wherever they come from; limits count
 * in the `AGENT_LIMITS` objects, by `CF-Connecting-IP` where they count addresses. A send without
 * `sessionId` gets a new random 128-bit id. A declarative agent has no tools, so no run waits for
 * an approval.
 */
export function createSpecWorker({ spec, basePath, mcp = false, limits }: SpecWorkerOptions): SpecWorker {
  const helper = 'createSpecWorker()';
  // Checked now, as the handler will: the bindings are only known per request.
  readMcpOptions(helper, mcp, spec.name, true);
  readLimits(helper, limits && { ...limits, clientAddress: cfConnectingIp }, true);
  // The handler of each env (Workers hand the bindings to fetch, the same object while the isolate lives).
  const handlers = new WeakMap<SpecWorkerEnv, (request: Request) => Promise<Response>>();

  function handlerFor(env: SpecWorkerEnv): (request: Request) => Promise<Response> {
    const made = handlers.get(env);
    if (made !== undefined) return made;
    const token =
      typeof env?.AGENT_API_TOKEN === 'string' && env.AGENT_API_TOKEN !== '' ? env.AGENT_API_TOKEN : undefined;
    const agent = createAgent({
      name: spec.name,
      instructions: spec.instructions ?? '',
      model: modelOf(spec, env),
      store: durableObjectSessionStore(binding(env, 'AGENT_SESSIONS')),
    });
    const options: AgentHandlerOptions = {
      basePath,
      // An AGENT_API_TOKEN that apiToken() refuses throws here: 500, logged without the token.
      auth: token === undefined ? NO_AUTH_CONFIGURED : apiToken(token),
      ...(mcp && { mcp: true }),
      ...(limits && {
        limits: {
          ...limits,
          store: durableObjectLimitStore(binding(env, 'AGENT_LIMITS')),
          clientAddress: cfConnectingIp,
        },
      }),
    };
    const handler = agentHandler(agent, options);
    handlers.set(env, handler);
    return handler;
  }

  const worker = {
    fetch(request: Request, env: SpecWorkerEnv): Promise<Response> {
      let handler: (request: Request) => Promise<Response>;
      try {
        handler = handlerFor(env);
      } catch (error) {
        return Promise.resolve(failureResponse(error));
      }
      return handler(request);
    },
  };
  return { worker, SessionObject: SessionStoreObjectCore, LimitObject: LimitObjectCore };
}
