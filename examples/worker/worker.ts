// worker.ts
import { agentHandler, apiToken, jwt, type AuthFn } from 'agentward';
import {
  durableObjectLimitStore,
  durableObjectReplayStore,
  perEnv,
  type DurableObjectNamespaceLike,
  type LimitNamespaceLike,
} from 'agentward/cloudflare';
import { supportAgent } from './agent.ts';

// The Durable Object classes wrangler.toml binds.
export {
  LimitObject as AgentLimits,
  ReplayObject as DpopReplay,
  SessionStoreObject as AgentSessions,
} from 'agentward/cloudflare';

interface Env {
  AGENT_API_TOKEN?: string;
  AGENT_JWT_SECRET?: string;
  AGENT_SESSIONS: DurableObjectNamespaceLike;
  AGENT_LIMITS: LimitNamespaceLike;
  DPOP_REPLAY: DurableObjectNamespaceLike;
}

// Built from the first request's env, once per env object (the same while the isolate lives).
export default {
  fetch: perEnv((env: Env) => {
    const auth: AuthFn[] = [];
    if (env.AGENT_JWT_SECRET)
      auth.push(
        jwt({
          secret: env.AGENT_JWT_SECRET,
          issuer: 'https://auth.example.com', // who signs your tokens: their `iss`
          audience: 'agent',
          dpopReplay: durableObjectReplayStore(env.DPOP_REPLAY),
        }),
      );
    if (env.AGENT_API_TOKEN) auth.push(apiToken(env.AGENT_API_TOKEN));
    return agentHandler(supportAgent(env.AGENT_SESSIONS), {
      basePath: '/agent',
      auth, // no secret set: the list is empty, and every agent route answers 401
      limits: {
        requests: { limit: 60, windowSec: 60 },
        failures: { limit: 10, windowSec: 60 },
        store: durableObjectLimitStore(env.AGENT_LIMITS),
        clientAddress: (request) => request.headers.get('cf-connecting-ip') ?? undefined,
      },
    });
  }),
};
