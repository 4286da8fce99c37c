// The part of the `cloudflare:workers` module that src/cloudflare/objects.ts uses, for this
// repository's own type check (lib dom, types node). Not shipped: a Worker's project has the real
// declarations (@cloudflare/workers-types or `wrangler types`), which the emitted .d.ts resolve
// against, and the Workers runtime the module itself.
declare module 'cloudflare:workers' {
  export abstract class DurableObject<Env = unknown> {
    protected ctx: unknown;
    protected env: Env;
    constructor(ctx: unknown, env: Env);
    fetch?(request: Request): Response | Promise<Response>;
    alarm?(alarmInfo?: unknown): void | Promise<void>;
  }
}
