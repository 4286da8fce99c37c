// agent.ts
import { createAgent, echoModel, tool } from 'agentward';
import { durableObjectSessionStore, type DurableObjectNamespaceLike } from 'agentward/cloudflare';

export function supportAgent(sessions: DurableObjectNamespaceLike) {
  return createAgent({
    name: 'support',
    model: echoModel(), // your model: an AI SDK provider, openAICompatible({ … }) with a key from env
    instructions: 'You help customers with their orders.',
    store: durableObjectSessionStore(sessions),
    tools: [
      tool({
        name: 'refund',
        description: 'Refunds an order',
        parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
        needsApproval: true,
        execute: async ({ orderId }) => `refunded ${orderId}`,
      }),
    ],
  });
}
