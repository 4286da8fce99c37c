// A Hono app on Workers with the agent's routes under /agent: the handler built from `c.env`, once per env object.
import { Hono } from 'hono';
import { agentHandler, apiToken, createAgent, echoModel, memoryStore } from 'agentward';
import { perEnv } from 'agentward/cloudflare';

interface Env {
  AGENT_API_TOKEN: string;
}

const agent = createAgent({
  name: 'support',
  model: echoModel(),
  store: memoryStore(), // one isolate's memory: durableObjectSessionStore(…) keeps sessions for every isolate
});

const handle = perEnv((env: Env) =>
  agentHandler(agent, {
    basePath: '/agent', // the mount path
    auth: [apiToken(env.AGENT_API_TOKEN)],
    limits: { requests: { limit: 60, windowSec: 60 } },
  }),
);

const app = new Hono<{ Bindings: Env }>();
app.get('/', (c) => c.text('Hello from Hono'));
app.all('/agent', (c) => handle(c.req.raw, c.env));
app.all('/agent/*', (c) => handle(c.req.raw, c.env));
export default app;
