// The real OpenTelemetry SDK in memory (design §28's tests on Node): a tracer provider whose spans
// go to an InMemorySpanExporter, with the AsyncLocalStorage context manager, so that spans started
// inside an active span nest under it as they do in an instrumented application.
import { context, trace, type Span, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  type Sampler,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

let contextManager: AsyncLocalStorageContextManager | undefined;

/** An in-memory SDK tracer: `spans()` are the ended spans, in the order they ended; `sampler`: the SDK's, default always on. */
export function sdkTracer(sampler?: Sampler): { tracer: Tracer; spans(): ReadableSpan[]; reset(): void } {
  if (contextManager === undefined) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    ...(sampler !== undefined && { sampler }),
  });
  return {
    tracer: provider.getTracer('agentward-test'),
    spans: () => exporter.getFinishedSpans() as ReadableSpan[],
    reset: () => exporter.reset(),
  };
}

/** The span named `name` (the first one), or an assertion-friendly error. */
export function spanNamed(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.find((span) => span.name === name);
  if (found === undefined) throw new Error(`no span named "${name}" among ${spans.map((s) => s.name).join(', ')}`);
  return found;
}

/** The name of a span's parent among `spans`, `null` for a root, `'(elsewhere)'` for a parent not among them. */
export function parentName(spans: readonly ReadableSpan[], span: ReadableSpan): string | null {
  const parent = span.parentSpanContext;
  if (parent === undefined) return null;
  return spans.find((s) => s.spanContext().spanId === parent.spanId)?.name ?? '(elsewhere)';
}

/** The tree of `spans` as `child < parent` lines, in the order they started. */
export function spanTree(spans: readonly ReadableSpan[]): string[] {
  const depth = (span: ReadableSpan): number => {
    const parent = spans.find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId);
    return parent === undefined ? 0 : 1 + depth(parent);
  };
  // Start times tie within a clock tick: a parent goes before its children, siblings stay in the order they ended.
  return [...spans]
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1] || depth(a) - depth(b))
    .map((span) => `${span.name} < ${parentName(spans, span) ?? 'root'}`);
}

/** Runs `body` inside an active span `name` (an HTTP instrumentation's server span, say). */
export function withActiveSpan<T>(tracer: Tracer, name: string, body: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, async (span) => {
    try {
      return await body(span);
    } finally {
      span.end();
    }
  });
}

export { trace };
