// The Durable Object classes a Worker exports for the stores of agentward/cloudflare, each a
// `DurableObject` of `cloudflare:workers` (what the Workers types and `wrangler types` expect of a
// class a namespace binds), its calls handed to the core that works on its storage. Only this
// entry imports `cloudflare:workers`: the root and Node entries never reach it.
import { DurableObject } from 'cloudflare:workers';
import { AuditLogObjectCore, type AuditStorageLike } from './durable-object-audit-log.ts';
import { LimitObjectCore, type LimitStorageLike } from './durable-object-limit-store.ts';
import { ReplayObjectCore, type ReplayStorageLike } from './durable-object-replay.ts';
import { SessionStoreObjectCore } from './durable-object-sessions.ts';
import type { DurableObjectStorageLike } from './durable-object-store.ts';

/**
 * The Durable Object class behind `durableObjectSessionStore()`: export it from the Worker under
 * the class name wrangler.toml binds. Its calls run one after another on its storage; a turn
 * waiting for a session's lock waits outside that line, woken when the lock is freed or its
 * lease ends.
 */
export class SessionStoreObject extends DurableObject<unknown> {
  readonly #core: SessionStoreObjectCore;

  constructor(ctx: { storage: DurableObjectStorageLike }, env: unknown) {
    super(ctx, env);
    this.#core = new SessionStoreObjectCore(ctx);
  }

  override fetch(request: Request): Promise<Response> {
    return this.#core.fetch(request);
  }
}

/**
 * The Durable Object class behind `durableObjectLimitStore()`: one object per key, its
 * operations one after another, so two calls never both see room for one.
 */
export class LimitObject extends DurableObject<unknown> {
  readonly #core: LimitObjectCore;

  constructor(ctx: { storage: LimitStorageLike }, env: unknown) {
    super(ctx, env);
    this.#core = new LimitObjectCore(ctx);
  }

  override fetch(request: Request): Promise<Response> {
    return this.#core.fetch(request);
  }

  /** Rings when a stored window ends: the core removes the windows that have ended. */
  override alarm(): Promise<void> {
    return this.#core.alarm();
  }
}

/**
 * The Durable Object class behind `durableObjectReplayStore()`: export it from the Worker under
 * the class name wrangler.toml binds. A proof's key is kept until it expires.
 */
export class ReplayObject extends DurableObject<unknown> {
  readonly #core: ReplayObjectCore;

  constructor(ctx: { storage: ReplayStorageLike }, env: unknown) {
    super(ctx, env);
    this.#core = new ReplayObjectCore(ctx);
  }

  override fetch(request: Request): Promise<Response> {
    return this.#core.fetch(request);
  }
}

/**
 * The Durable Object class behind `durableObjectAuditLog()`: export it from the Worker under the
 * class name wrangler.toml binds. One object keeps one chain; its appends run one after another.
 */
export class AuditLogObject extends DurableObject<unknown> {
  readonly #core: AuditLogObjectCore;

  constructor(ctx: { storage: AuditStorageLike }, env: unknown) {
    super(ctx, env);
    this.#core = new AuditLogObjectCore(ctx);
  }

  override fetch(request: Request): Promise<Response> {
    return this.#core.fetch(request);
  }
}
