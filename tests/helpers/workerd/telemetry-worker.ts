/**
 * A Workers entry serving the route handler with `telemetry` (design §28), for
 * tests/http/telemetry-workerd.node.test.ts: a structural in-memory tracer whose active span
 * follows async calls through AsyncLocalStorage (the `nodejs_als` flag). `GET /__spans` answers
 * the spans ended so far and forgets them. Built on the first request: the token is a binding.
 */
import { agentHandler } from '../../../src/http/index.ts';
import { apiToken } from '../../../src/auth/index.ts';
import { createAgent, echoModel, memoryStore } from '../../../src/agent/index.ts';
import type { Tool } from '../../../src/agent/types.ts';
import { memoryTracer } from '../memory-tracer.ts';

interface Env {
  API_TOKEN: string;
}

const deploy: Tool = {
  name: 'deploy',
  description: 'Deploys the app',
  parameters: { type: 'object' },
  needsApproval: true,
  execute: () => ({ deployed: true }),
};

let built: { handler: (request: Request) => Promise<Response>; memory: ReturnType<typeof memoryTracer> } | undefined;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    if (built === undefined) {
      const memory = memoryTracer();
      const telemetry = { tracer: memory.tracer };
      const agent = createAgent({ name: 'edge', model: echoModel(), tools: [deploy], store: memoryStore(), telemetry });
      built = { memory, handler: agentHandler(agent, { auth: apiToken(env.API_TOKEN), mcp: true, telemetry }) };
    }
    const { memory, handler } = built;
    if (new URL(request.url).pathname === '/__spans') {
      const spans = memory.spans().map(({ parent: _, ...span }) => span);
      const tree = memory.tree();
      memory.reset();
      return Response.json({ tree, spans });
    }
    return handler(request);
  },
};
