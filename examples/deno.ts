// The route handler in `Deno.serve`: `deno run --allow-net --allow-env examples/deno.ts`. The
// auth list is read from the environment; with nothing set, every agent route answers 401 and
// `/agent/health` stays open.
import { agentHandler, apiToken, basic, createAgent, echoModel, jwt, memoryStore } from '../src/index.ts';
import type { AuthFn } from '../src/index.ts';

// The few Deno globals used here, declared so `tsc` checks this file without Deno's types.
declare const Deno: {
  env: { get(name: string): string | undefined };
  serve(
    options: { port: number; hostname: string; onListen(address: { hostname: string; port: number }): void },
    handler: (request: Request) => Promise<Response>,
  ): unknown;
};

const env = (name: string) => Deno.env.get(name);
const auth: AuthFn[] = [];
const jwtSecret = env('AGENT_JWT_SECRET');
const basicUser = env('AGENT_BASIC_USER');
const basicPassword = env('AGENT_BASIC_PASSWORD');
const token = env('AGENT_API_TOKEN');
if (jwtSecret) auth.push(jwt({ secret: jwtSecret, audience: env('AGENT_JWT_AUDIENCE') ?? 'agent' }));
if (basicUser && basicPassword) auth.push(basic({ users: { [basicUser]: basicPassword } }));
if (token) auth.push(apiToken(token));

const agent = createAgent({
  name: 'demo',
  model: echoModel(),
  instructions: ({ principal }) => `You are talking to ${principal?.id ?? 'someone'}.`,
  store: memoryStore(),
});

Deno.serve(
  {
    port: Number(env('PORT') ?? 3000),
    hostname: env('HOST') ?? '127.0.0.1',
    onListen: ({ hostname, port }) => console.log(`agent listening on http://${hostname}:${port}/agent`),
  },
  agentHandler(agent, { basePath: '/agent', auth }),
);
