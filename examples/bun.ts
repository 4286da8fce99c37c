// The route handler in `Bun.serve`: `bun examples/bun.ts`. The auth list is read from the
// environment; with nothing set, every agent route answers 401 and `/agent/health` stays open.
import { agentHandler, apiToken, basic, createAgent, echoModel, jwt, memoryStore } from '../src/index.ts';
import type { AuthFn } from '../src/index.ts';

// The few Bun globals used here, declared so `tsc` checks this file without Bun's types.
declare const Bun: {
  env: Record<string, string | undefined>;
  serve(options: { port: number; hostname: string; fetch: (request: Request) => Promise<Response> }): { url: URL };
};

const env = Bun.env;
const auth: AuthFn[] = [];
if (env.AGENT_JWT_SECRET) auth.push(jwt({ secret: env.AGENT_JWT_SECRET, audience: env.AGENT_JWT_AUDIENCE ?? 'agent' }));
if (env.AGENT_BASIC_USER && env.AGENT_BASIC_PASSWORD)
  auth.push(basic({ users: { [env.AGENT_BASIC_USER]: env.AGENT_BASIC_PASSWORD } }));
if (env.AGENT_API_TOKEN) auth.push(apiToken(env.AGENT_API_TOKEN));

const agent = createAgent({
  name: 'demo',
  model: echoModel(),
  instructions: ({ principal }) => `You are talking to ${principal?.id ?? 'someone'}.`,
  store: memoryStore(),
});

const server = Bun.serve({
  port: Number(env.PORT ?? 3000),
  hostname: env.HOST ?? '127.0.0.1',
  fetch: agentHandler(agent, { basePath: '/agent', auth }),
});
console.log(`agent listening on ${new URL('/agent', server.url)}`);
