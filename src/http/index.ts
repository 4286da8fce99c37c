export { agentHandler } from './handler.ts';
export type { AgentHandlerOptions } from './handler.ts';
export { MAX_BODY_BYTES } from './body.ts';
export type { McpOptions } from './mcp.ts';
