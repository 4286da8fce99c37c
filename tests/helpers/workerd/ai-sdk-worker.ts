/**
 * A Workers entry serving the route handler with AI SDK models, for
 * tests/agent/models/ai-sdk-workerd.node.test.ts: `@ai-sdk/openai`'s chat model at `/openai` and
 * `@ai-sdk/anthropic`'s at `/anthropic`, both behind apiToken(), their baseURLs the test's local
 * servers (bindings). A `deploy` tool (zod parameters) needs approval. Built on the first
 * request: the URLs are bindings.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';
import { agentHandler, createAgent, tool } from '../../../src/index.ts';
import { apiToken } from '../../../src/auth/index.ts';

interface Env {
  OPENAI_URL: string;
  ANTHROPIC_URL: string;
  API_TOKEN: string;
}

const deploy = tool({
  name: 'deploy',
  description: 'Deploys a service',
  parameters: z.object({ service: z.string() }),
  needsApproval: true,
  execute: ({ service }) => `deployed ${service}`,
});

type Handler = (request: Request) => Promise<Response>;
let handlers: Record<string, Handler> | undefined;

function mount(env: Env): Record<string, Handler> {
  const auth = [apiToken(env.API_TOKEN)];
  const settings = { temperature: 0.25, maxOutputTokens: 321 };
  const openai = createOpenAI({ baseURL: env.OPENAI_URL, apiKey: 'sk-test-provider-key-0123456789' });
  const anthropic = createAnthropic({ baseURL: env.ANTHROPIC_URL, apiKey: 'sk-test-provider-key-0123456789' });
  return {
    openai: agentHandler(
      createAgent({
        name: 'openai',
        model: openai.chat('gpt-4o-mini'),
        instructions: 'Be brief.',
        tools: [deploy],
        settings,
      }),
      { basePath: '/openai', auth },
    ),
    anthropic: agentHandler(
      createAgent({ name: 'anthropic', model: () => anthropic('claude-sonnet-4-5'), tools: [deploy], settings }),
      { basePath: '/anthropic', auth },
    ),
  };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    handlers ??= mount(env);
    const handler = handlers[new URL(request.url).pathname.split('/')[1] ?? ''];
    return handler === undefined ? new Response(null, { status: 404 }) : handler(request);
  },
};
