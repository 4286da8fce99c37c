// The demo agent of `npm start`: the built-in echo model, two tools (one waits for a human's
// approval), memory kept per caller, and a file store in ./.data (or AGENT_DATA_DIR), so
// sessions and paused approvals survive a restart.
//
// Try: {"message":"/tool time"}, {"message":"/tool refund {\"orderId\":\"A-1\",\"amount\":20}"}
// (then POST /agent/approvals/<id> {"approved":true}), {"message":"/tool remember {\"note\":\"likes tea\"}"}.
import { createAgent, echoModel } from 'agentward';
import type { Tool } from 'agentward';
import { fileStore } from 'agentward/node';

const time: Tool = {
  name: 'time',
  description: 'The current time, ISO 8601',
  parameters: { type: 'object', properties: {} },
  execute: () => new Date().toISOString(),
};

const refund: Tool<{ orderId: string; amount: number }> = {
  name: 'refund',
  description: 'Refunds an order; a human approves each refund first',
  parameters: {
    type: 'object',
    properties: { orderId: { type: 'string' }, amount: { type: 'number' } },
    required: ['orderId', 'amount'],
  },
  needsApproval: true,
  execute: ({ orderId, amount }) => ({ orderId, refunded: amount }),
};

export default createAgent({
  name: 'demo',
  model: echoModel(),
  // A dynamic agent: the run sees the verified principal, and a paused run keeps it.
  instructions: ({ principal }) =>
    principal === undefined
      ? 'You help a guest.'
      : `You help ${principal.id}, signed in with ${principal.authenticator}.`,
  tools: [time, refund],
  // Ids from different issuers (or authenticators) can collide: the namespace keys on all of them.
  memory: {
    scope: ({ principal }) =>
      principal === undefined
        ? 'guest'
        : JSON.stringify([principal.authenticator, principal.issuer ?? null, principal.id]),
  },
  store: fileStore(process.env.AGENT_DATA_DIR || '.data'),
});
