export { createAgent } from './agent.ts';
export { AgentError } from './errors.ts';
export type { AgentErrorCode } from './errors.ts';
export { echoModel } from './models/echo.ts';
export { memoryStore, MEMORY_STORE_DEFAULTS } from './store.ts';
export type { MemoryStoreOptions } from './store.ts';
export type * from './types.ts';
export { openAICompatible } from './models/openai.ts';
export type { OpenAICompatibleOptions } from './models/openai.ts';
