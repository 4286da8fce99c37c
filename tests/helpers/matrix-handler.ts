/**
 * The handler of the pipeline matrix (tests/http/pipeline-matrix.node.test.ts), made the same way
 * in Node and in workerd (tests/helpers/workerd/matrix-worker.ts): an `'owned'` agent with a tool
 * that waits for approval, behind `jwt()`, with a scope for every group and the MCP route.
 * Portable: no Node import.
 */
import { agentHandler } from '../../src/http/index.ts';
import { jwt } from '../../src/auth/index.ts';
import { createAgent, echoModel, memoryStore, tool } from '../../src/agent/index.ts';

export const MATRIX_SECRET = 'a-matrix-jwt-secret-that-is-at-least-32-bytes-long';

/** One scope per group, none shared: a token lacking one group's scope has every other. */
export const MATRIX_SCOPES = {
  send: ['agent:chat'],
  read: ['agent:read'],
  approve: ['agent:approve'],
  sessions: ['agent:sessions'],
  mcp: ['agent:mcp'],
};

export function matrixHandler(secret: string): (request: Request) => Promise<Response> {
  const agent = createAgent({
    name: 'matrix',
    model: echoModel(),
    sessions: 'owned',
    store: memoryStore(),
    tools: [
      tool({
        name: 'deploy',
        description: 'Deploys the app',
        parameters: { type: 'object' },
        needsApproval: true,
        execute: async () => 'deployed',
      }),
    ],
  });
  return agentHandler(agent, {
    basePath: '/agent',
    auth: jwt({ secret, audience: 'agent' }),
    scopes: MATRIX_SCOPES,
    mcp: true,
  });
}
