export { postgresStore, POSTGRES_STORE_DEFAULTS } from './store.ts';
export type { PgPool, PgPoolClient, PostgresStore, PostgresStoreOptions } from './store.ts';
export { StoreError } from './errors.ts';
export { SCHEMA_VERSION } from './schema.ts';
export { postgresReplayStore } from './replay.ts';
export type { PostgresReplayStore, PostgresReplayStoreOptions } from './replay.ts';
export { postgresLimitStore } from './limit-store.ts';
export type { PostgresLimitStore, PostgresLimitStoreOptions } from './limit-store.ts';
