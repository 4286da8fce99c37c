export { agentHandler } from './handler.ts';
export type { AgentHandlerOptions } from './handler.ts';
export { MAX_BODY_BYTES } from './body.ts';
export type { McpOptions } from './mcp.ts';
export { memoryLimitStore, MEMORY_LIMIT_STORE_DEFAULTS } from './limit-store.ts';
export type { LimitStore, MemoryLimitStoreOptions, WindowCount } from './limit-store.ts';
export type { LimitsOptions, LimitWindow, TenantLimitsOptions } from './limits.ts';
export type { AuditCaller, AuditFunction, AuditOption, AuditRecord } from './audit.ts';
