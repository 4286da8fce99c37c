// The route handler as a Cloudflare Workers `fetch` export. Secrets come from the Worker's
// environment (`wrangler secret put AGENT_API_TOKEN`, …); with none set, every agent route
// answers 401 (an empty auth list refuses everyone), and `/agent/health` stays open.
import { agentHandler, apiToken, basic, createAgent, echoModel, jwt, memoryStore } from '../src/index.ts';
import type { AuthFn } from '../src/index.ts';

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
    entries.push(jwt({ secret: env.AGENT_JWT_SECRET, audience: env.AGENT_JWT_AUDIENCE ?? 'agent' }));
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

// Workers hand the secrets to `fetch` as `env`, per request, never to module scope: the handler is
// made from the `env` a request brings, once per `env` object (the same object while the isolate lives).
const handlers = new WeakMap<Env, (request: Request) => Promise<Response>>();

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    let handler = handlers.get(env);
    if (handler === undefined)
      handlers.set(env, (handler = agentHandler(agent, { basePath: '/agent', auth: authList(env) })));
    return handler(request);
  },
};
