// The route handler as a Cloudflare Workers `fetch` export. Secrets come from the Worker's
// environment (`wrangler secret put AGENT_API_TOKEN`, …); with none set, every agent route
// answers 401 (an empty auth list refuses everyone), and `/agent/health` stays open.
import { perEnv } from '../src/cloudflare/index.ts';
import { agentHandler, apiToken, basic, createAgent, echoModel, jwt, memoryStore } from '../src/index.ts';
import type { AuthFn } from '../src/index.ts';

/** Who signs the tokens `jwt()` accepts: their `iss` (a shared secret does not say who signed). */
const JWT_ISSUER = 'https://auth.example.com';

interface Env {
  AGENT_API_TOKEN?: string;
  AGENT_JWT_SECRET?: string;
  AGENT_JWT_AUDIENCE?: string;
  AGENT_BASIC_USER?: string;
  AGENT_BASIC_PASSWORD?: string;
}

function authList(env: Env): AuthFn[] {
  const entries: AuthFn[] = [];
  if (env.AGENT_JWT_SECRET)
    entries.push(
      jwt({ secret: env.AGENT_JWT_SECRET, issuer: JWT_ISSUER, audience: env.AGENT_JWT_AUDIENCE ?? 'agent' }),
    );
  if (env.AGENT_BASIC_USER && env.AGENT_BASIC_PASSWORD)
    entries.push(basic({ users: { [env.AGENT_BASIC_USER]: env.AGENT_BASIC_PASSWORD } }));
  if (env.AGENT_API_TOKEN) entries.push(apiToken(env.AGENT_API_TOKEN));
  return entries;
}

const agent = createAgent({
  name: 'demo',
  model: echoModel(),
  instructions: ({ principal }) => `You are talking to ${principal?.id ?? 'someone'}.`,
  store: memoryStore(),
});

// Workers hand the secrets to `fetch` as `env`, per request, never to module scope: perEnv() makes the
// handler from the `env` a request brings, once per `env` object (the same object while the isolate lives).
export default {
  fetch: perEnv((env: Env) => agentHandler(agent, { basePath: '/agent', auth: authList(env) })),
};
