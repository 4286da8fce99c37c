// A tracer shaped like @opentelemetry/api's, in memory, for the runtimes the SDK test does not run
// on (Bun, Deno, workerd): what design §28 asks of a tracer and no more. The active span follows
// async calls through AsyncLocalStorage (workerd: the nodejs_als flag), as an SDK's context manager would.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TelemetrySpan, TelemetryTracer } from '../../src/agent/index.ts';

export interface MemorySpan {
  readonly name: string;
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  readonly events: { name: string; attributes?: Record<string, unknown> }[];
  readonly links: unknown[];
  readonly exceptions: string[];
  status: { code: number; message?: string };
  readonly parent: MemorySpan | undefined;
  readonly order: number;
  ended: boolean;
}

export interface MemoryTracer {
  readonly tracer: Required<Pick<TelemetryTracer, 'startActiveSpan'>>;
  /** The spans ended so far. */
  spans(): MemorySpan[];
  /** `name < parent` (or `< root`) of every span ended, in the order they started. */
  tree(): string[];
  reset(): void;
}

export function memoryTracer(): MemoryTracer {
  const active = new AsyncLocalStorage<MemorySpan>();
  let ended: MemorySpan[] = [];
  let started = 0;
  const tracer: MemoryTracer['tracer'] = {
    startActiveSpan(name, options, fn) {
      const record: MemorySpan = {
        name,
        kind: options.kind,
        attributes: { ...options.attributes },
        events: [],
        links: [...(options.links ?? [])],
        exceptions: [],
        status: { code: 0 },
        parent: active.getStore(),
        order: started++,
        ended: false,
      };
      const span: TelemetrySpan = {
        setAttribute(key, value) {
          record.attributes[key] = value;
        },
        setStatus(status) {
          record.status = { ...status };
        },
        recordException(error) {
          record.exceptions.push(`${error.name}: ${error.message}`);
        },
        addEvent(eventName, attributes) {
          record.events.push({ name: eventName, ...(attributes && { attributes: { ...attributes } }) });
        },
        end() {
          if (record.ended) throw new Error(`span ${name} ended twice`);
          record.ended = true;
          ended.push(record);
        },
      };
      return active.run(record, () => fn(span));
    },
  };
  return {
    tracer,
    spans: () => [...ended],
    tree: () =>
      [...ended].sort((a, b) => a.order - b.order).map((span) => `${span.name} < ${span.parent?.name ?? 'root'}`),
    reset() {
      ended = [];
    },
  };
}
