// A Next.js route module as the README shows it (app/agent/[[...path]]/route.ts): the route
// handler exported as the methods' functions, which Next.js calls with the Web Request.
import { agentHandler, apiToken, basic, createAgent, memoryStore } from '../../src/index.ts';
import type { Model } from '../../src/index.ts';

export const ROUTE_TOKEN = 'next-route-token-0123456789';
export const ROUTE_PASSWORD = 'next route password';

/** Replies `<authenticator>:<id> heard <message>`, so a test sees which principal reached the run. */
const whoModel: Model = {
  async generate({ instructions, messages }) {
    const last = messages.at(-1);
    return { text: `${instructions} heard ${last?.role === 'user' ? last.content : ''}` };
  },
};

const agent = createAgent({
  name: 'next',
  model: whoModel,
  store: memoryStore(),
  instructions: ({ principal }) => (principal ? `${principal.authenticator}:${principal.id}` : 'guest'),
});

const handler = agentHandler(agent, {
  basePath: '/agent',
  auth: [basic({ users: { ada: ROUTE_PASSWORD } }), apiToken(ROUTE_TOKEN)],
});

// Every method the routes use: a method the module does not export gets Next.js's own 405.
export const GET = handler;
export const POST = handler;
export const DELETE = handler;
