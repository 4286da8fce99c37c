// agentward/cloudflare: what a Worker needs to keep an agent's state where every isolate finds it
// (design §25): the agent's store, the limits, the DPoP replay store and the audit log (design §34),
// each over a Durable Object namespace, with the Durable Object class to export for it; the store on
// one object's storage; and perEnv(), the handler built once per `env` a request brings.
// The classes extend `DurableObject` of `cloudflare:workers`, so this entry loads in workerd only.
export { durableObjectSessionStore, SESSION_LOCK_SEC } from './durable-object-sessions.ts';
export type { DurableObjectNamespaceLike, DurableObjectSessionStoreOptions } from './durable-object-sessions.ts';
export { durableObjectLimitStore } from './durable-object-limit-store.ts';
export type { LimitNamespaceLike, LimitStorageLike } from './durable-object-limit-store.ts';
export { durableObjectReplayStore } from './durable-object-replay.ts';
export type { ReplayStorageLike } from './durable-object-replay.ts';
export { durableObjectStore, CHUNK_UNITS } from './durable-object-store.ts';
export type { DurableObjectStorageLike } from './durable-object-store.ts';
export { durableObjectAuditLog } from './durable-object-audit-log.ts';
export type { AuditStorageLike, DurableObjectAuditLogOptions } from './durable-object-audit-log.ts';
export { AuditLogObject, LimitObject, ReplayObject, SessionStoreObject } from './objects.ts';
export { perEnv } from './per-env.ts';
export type { PerEnvHandler } from './per-env.ts';
