/**
 * A Workers entry serving the route handler, for tests/http/workerd.node.test.ts. One agent,
 * mounted four times behind different auth lists (secrets from bindings):
 * - `/jwt`: `jwt({ secret })` (HS256), `/basic`: `basic()`, `/token`: `apiToken()`,
 * - `/all`: the three in one list, `/open`: no auth (Workers have no NODE_ENV: no warning).
 * The agent's model function replies with the principal it received and the instructions the
 * instructions function built from its own principal, so a response shows what reached the run.
 * Handlers are built on the first request: the secrets are bindings, and workerd forbids
 * random values and I/O at global scope.
 */
import { agentHandler } from '../../../src/http/index.ts';
import { apiToken, basic, jwt, type AuthFn } from '../../../src/auth/index.ts';
import { createAgent, memoryStore } from '../../../src/agent/index.ts';
import type { Model, Tool } from '../../../src/agent/types.ts';

interface Env {
  JWT_SECRET: string;
  BASIC_PASSWORD: string;
  API_TOKEN: string;
}

const deploy: Tool = {
  name: 'deploy',
  description: 'Deploys the app',
  parameters: { type: 'object' },
  needsApproval: true,
  execute: () => ({ deployed: true }),
};

const agent = createAgent({
  name: 'workerd-agent',
  model: ({ principal }): Model => ({
    async generate(request) {
      const last = request.messages.at(-1);
      if (last?.role === 'user' && last.content === 'deploy')
        return { toolCalls: [{ id: 'call_deploy', name: 'deploy', arguments: {} }] };
      return { text: JSON.stringify({ modelSaw: principal ?? null, instructions: request.instructions }) };
    },
  }),
  instructions: ({ principal }) => `caller ${principal?.authenticator ?? 'none'}:${principal?.id ?? 'none'}`,
  tools: [deploy],
  store: memoryStore(),
});

type Handler = (request: Request) => Promise<Response>;
let mounts: [string, Handler][] | undefined;

function mount(env: Env): [string, Handler][] {
  const entries: Record<string, AuthFn> = {
    jwt: jwt({ secret: env.JWT_SECRET, issuer: 'https://id.example', audience: 'agent' }),
    basic: basic({ users: { ada: env.BASIC_PASSWORD } }),
    token: apiToken(env.API_TOKEN),
  };
  return [
    ['/jwt', agentHandler(agent, { basePath: '/jwt', auth: [entries.jwt!] })],
    ['/basic', agentHandler(agent, { basePath: '/basic', auth: [entries.basic!] })],
    ['/token', agentHandler(agent, { basePath: '/token', auth: [entries.token!] })],
    ['/all', agentHandler(agent, { basePath: '/all', auth: [entries.jwt!, entries.basic!, entries.token!] })],
    ['/open', agentHandler(agent, { basePath: '/open' })],
  ];
}

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    if (mounts === undefined) {
      mounts = mount(env);
      console.log('handlers mounted');
    }
    const path = new URL(request.url).pathname;
    const found = mounts.find(([base]) => path === base || path.startsWith(`${base}/`));
    return found ? found[1](request) : Promise.resolve(Response.json({ error: 'Not Found' }, { status: 404 }));
  },
};
