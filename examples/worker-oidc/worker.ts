// worker.ts
import { agentHandler, createAgent, echoModel, oidc } from 'agentward';
import { durableObjectSessionStore, perEnv, type DurableObjectNamespaceLike } from 'agentward/cloudflare';

// The Durable Object class wrangler.toml binds.
export { SessionStoreObject as AgentSessions } from 'agentward/cloudflare';

interface Env {
  OIDC_ISSUER: string; // your provider's issuer: its discovery document is under it
  OIDC_AUDIENCE: string; // this API's identifier at the provider: the access tokens' `aud`
  AGENT_SESSIONS: DurableObjectNamespaceLike;
}

// Built from the first request's env, once per env object (the same while the isolate lives).
export default {
  fetch: perEnv((env: Env) =>
    agentHandler(
      createAgent({
        name: 'support',
        model: echoModel(), // your model: an AI SDK provider, openAICompatible({ … }) with a key from env
        instructions: ({ principal }) => `You help ${principal?.id ?? 'a customer'} with their orders.`,
        store: durableObjectSessionStore(env.AGENT_SESSIONS),
      }),
      {
        basePath: '/agent',
        // The provider's keys are fetched from its discovery document on the first token, then cached.
        auth: [oidc({ issuer: env.OIDC_ISSUER, audience: env.OIDC_AUDIENCE })],
      },
    ),
  ),
};
