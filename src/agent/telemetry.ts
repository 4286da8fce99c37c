// OpenTelemetry spans of a run (design §28), in the GenAI conventions, made through any tracer
// shaped like `@opentelemetry/api`'s `Tracer`: nothing here imports OpenTelemetry. Without the
// `telemetry` option nothing of this module runs, and nothing is allocated for it.
import { checkOptionNames, kindOf } from '../auth/internal.ts';
import { AgentError, configError } from './errors.ts';
import type { DecidedBy, Message, Model, ModelRequest, RunResult, ToolCall, Usage } from './types.ts';

/** An attribute's value, as OpenTelemetry takes it. */
export type SpanAttributeValue = string | number | boolean | string[];
export type SpanAttributes = Record<string, SpanAttributeValue>;

/** What the agent calls on a span: the part of `@opentelemetry/api`'s `Span` it uses. */
export interface TelemetrySpan {
  /** `false`: the span records nothing (no SDK, or sampled out); the run's spans under it are not made. */
  isRecording?(): boolean;
  setAttribute(key: string, value: SpanAttributeValue): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException?(exception: Error): unknown;
  addEvent?(name: string, attributes?: SpanAttributes): unknown;
  end(): void;
}

/** The options of a span, as `@opentelemetry/api` takes them: `kind` 0 INTERNAL, 1 SERVER, 2 CLIENT. */
export interface TelemetrySpanOptions {
  kind: number;
  attributes: SpanAttributes;
  links?: { context: { traceId: string; spanId: string; traceFlags: number; isRemote: boolean } }[];
}

/**
 * Anything shaped like `@opentelemetry/api`'s `Tracer`: `startActiveSpan` (the agent's spans nest
 * under the span active when it is called, and its own spans nest under it), or else `startSpan`.
 */
export interface TelemetryTracer {
  startActiveSpan?<T>(name: string, options: TelemetrySpanOptions, fn: (span: TelemetrySpan) => T): T;
  startSpan?(name: string, options: TelemetrySpanOptions): TelemetrySpan;
}

/** The `telemetry` option of `createAgent`, `agentHandler` and `serve` (design §28). */
export interface TelemetryOptions {
  tracer: TelemetryTracer;
  /** Message contents, instructions, tool arguments and results as span attributes; default `false`. */
  recordContent?: boolean;
  /** The principal as `enduser.id` (and its issuer) on the handler's span; default `true`. */
  recordPrincipal?: boolean;
}

/** The option, checked. */
export interface Telemetry {
  readonly tracer: TelemetryTracer;
  readonly recordContent: boolean;
  readonly recordPrincipal: boolean;
}

/** Span kinds as `@opentelemetry/api` numbers them. */
export const INTERNAL = 0;
export const SERVER = 1;
const CLIENT = 2;
const STATUS_ERROR = 2;
// Names used in both files: one string each in a minified bundle.
export const OPERATION = 'gen_ai.operation.name';
export const TOOL_NAME = 'gen_ai.tool.name';

/** `telemetry` checked at creation (`helper` names the factory), or `undefined` when absent. */
export function readTelemetry(value: unknown, helper: string): Telemetry | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null)
    throw configError(
      `${helper}: telemetry must be { tracer, recordContent?, recordPrincipal? }; got ${kindOf(value)}`,
    );
  checkOptionNames(`${helper}: telemetry`, value, ['tracer', 'recordContent', 'recordPrincipal']);
  const { tracer, recordContent = false, recordPrincipal = true } = value as unknown as TelemetryOptions;
  if (typeof (tracer?.startActiveSpan ?? tracer?.startSpan) !== 'function')
    throw configError(
      `${helper}: telemetry.tracer must be an OpenTelemetry Tracer (startActiveSpan or startSpan); got ${kindOf(tracer)}`,
    );
  if (typeof recordContent !== 'boolean')
    throw configError(`${helper}: telemetry.recordContent must be true or false; got ${kindOf(recordContent)}`);
  if (typeof recordPrincipal !== 'boolean')
    throw configError(`${helper}: telemetry.recordPrincipal must be true or false; got ${kindOf(recordPrincipal)}`);
  return Object.freeze({ tracer, recordContent, recordPrincipal });
}

/**
 * Marks `span` failed: status ERROR and `error.type`, by default the agent's error code
 * (`MODEL_ERROR`, `SESSION_FULL`…), a store's `STORE_UNAVAILABLE`, else `_OTHER` (the conventions'
 * fallback: an abort, another's error). The message and exception only of the agent's own errors
 * (another's may hold internals).
 */
export function spanFailed(span: TelemetrySpan, error: unknown, type?: string): void {
  const code = (error as { code?: unknown } | null)?.code;
  span.setAttribute(
    'error.type',
    type ?? (error instanceof AgentError || code === 'STORE_UNAVAILABLE' ? (code as string) : '_OTHER'),
  );
  if (error instanceof AgentError) {
    span.setStatus({ code: STATUS_ERROR, message: error.message });
    span.recordException?.(error);
  } else span.setStatus({ code: STATUS_ERROR });
}

/**
 * `fn` called with a new span: active while `fn` runs when the tracer has `startActiveSpan`, so
 * that spans started inside nest under it. Whoever called it ends the span.
 */
export const startSpan = <T>(
  tracer: TelemetryTracer,
  name: string,
  options: TelemetrySpanOptions,
  fn: (span: TelemetrySpan) => T,
): T =>
  tracer.startActiveSpan
    ? tracer.startActiveSpan(name, options, fn)
    : fn((tracer.startSpan as NonNullable<TelemetryTracer['startSpan']>)(name, options));

/**
 * `body`'s result in a new span (`startSpan`) that ends when it settles (ERROR when it throws),
 * once `after` has put what the result says on the span: one async frame more. The run and its
 * model turns end their spans in frames of their own instead (they are on every send's path).
 */
export function inSpan<T extends object>(
  tracer: TelemetryTracer,
  name: string,
  options: TelemetrySpanOptions,
  body: (span: TelemetrySpan) => T | Promise<T>,
  after?: (span: TelemetrySpan, result: T) => void,
): Promise<T> {
  return startSpan(tracer, name, options, async (span) => {
    let result: T;
    try {
      result = await body(span);
    } catch (error) {
      endSpan(span, after, undefined, error);
      throw error;
    }
    endSpan(span, after, result);
    return result;
  });
}

/**
 * Ends `span`: once `after` has put what `result` says on it, or (`result` undefined) failed with
 * `error`. Results are objects, so `undefined` always means a failure.
 */
export function endSpan<R extends object>(
  span: TelemetrySpan,
  after: ((span: TelemetrySpan, result: R) => void) | undefined,
  result: R | undefined,
  error?: unknown,
): void {
  try {
    if (result === undefined) spanFailed(span, error);
    else after?.(span, result);
  } finally {
    span.end();
  }
}

/** The usage of a run or a turn on its span. */
function setUsage(span: TelemetrySpan, usage: Usage | undefined): void {
  if (usage === undefined) return;
  span.setAttribute('gen_ai.usage.input_tokens', usage.inputTokens);
  span.setAttribute('gen_ai.usage.output_tokens', usage.outputTokens);
}

/** The conventions' message form (`gen_ai.input.messages`): role and parts. */
const conventionMessages = (messages: readonly Message[]): string =>
  JSON.stringify(
    messages.map((message) => ({
      role: message.role,
      parts:
        message.role === 'tool'
          ? [{ type: 'tool_call_response', id: message.toolCallId, response: message.content }]
          : [
              ...(message.content === '' ? [] : [{ type: 'text', content: message.content }]),
              ...((message.role === 'assistant' && message.toolCalls) || []).map(({ id, name, arguments: args }) => ({
                type: 'tool_call',
                id,
                name,
                arguments: args,
              })),
            ],
    })),
  );

/** The settings a chat span records, by their `gen_ai.request.*` names. */
const REQUEST_SETTINGS: Record<string, string> = {
  temperature: 'temperature',
  maxOutputTokens: 'max_tokens',
  topP: 'top_p',
  stopSequences: 'stop_sequences',
};

const STOP = ['stop'];
const TOOL_CALLS = ['tool_calls'];

/** What a model turn answers, as far as its span reads it. */
type TurnResult = { text: string; toolCalls: ToolCall[]; usage?: Usage };
/** What a tool call is answered with, as far as its span reads it. */
type ToolAnswer = { message: Message; event: { type: string } };

/** A model's `gen_ai.provider.name` (a provider's `openai.chat` is `openai`) and `gen_ai.request.model`, where it says them. */
function modelAttributes({ provider, modelId }: Model): SpanAttributes {
  const attributes: SpanAttributes = {};
  const name = provider?.split('.')[0];
  if (name !== undefined) attributes['gen_ai.provider.name'] = name;
  if (modelId !== undefined) attributes['gen_ai.request.model'] = modelId;
  return attributes;
}

/**
 * The spans of one run: its `invoke_agent` span, each model turn and each tool call. The run's
 * and the turns' spans are ended by their caller (`ended`, `chatEnded`), in frames the run has anyway.
 */
export interface RunTrace {
  /** The session, once known: `gen_ai.conversation.id`. */
  conversation(sessionId: string): void;
  /** Ends the run's span: with its result, or (`result` undefined) ERROR with what it threw. */
  ended(result: RunResult | undefined, error?: unknown): void;
  /** Starts a model turn's `chat {model}` span (CLIENT), active while `turn` is called: `turn`'s promise, as it is. */
  chat<T>(model: Model, request: ModelRequest, turn: () => Promise<T>): Promise<T>;
  /** Ends the turn's span: with what the turn answered, or (`turn` undefined) ERROR with what it threw. */
  chatEnded(turn: TurnResult | undefined, error?: unknown): void;
  /** One tool call in its `execute_tool {tool}` span; a call answered with an error is ERROR, `error.type` `TOOL_ERROR`. */
  tool<T extends ToolAnswer>(
    call: ToolCall,
    approval: 'approved' | 'denied' | undefined,
    answer: () => T | Promise<T>,
    description?: string,
    decidedBy?: DecidedBy,
  ): Promise<T>;
}

/**
 * The spans of one agent (`createAgent({ telemetry })`): a function of `run` (`send` or `decide`)
 * that calls it in its `invoke_agent {agent}` span, which `run` ends (`trace.ended`). What is the same
 * for all its runs is made once (the run's span name and options, what a turn's and a tool's span
 * say once done), so that a traced send allocates little more than its spans and its `RunTrace`.
 * Contents are on the run's chat and tool spans, not on the run's.
 */
export function agentTracing(
  { tracer, recordContent, recordPrincipal }: Telemetry,
  agent: string,
  model?: Model,
): <A, B>(
  run: (first: A, second: B, trace?: RunTrace) => Promise<RunResult>,
) => (first: A, second: B) => Promise<RunResult> {
  const name = `invoke_agent ${agent}`;
  const options = {
    kind: INTERNAL,
    attributes: { [OPERATION]: 'invoke_agent', 'gen_ai.agent.name': agent, ...(model && modelAttributes(model)) },
  };
  /** What a run's span says once the run is done: its status and usage. */
  const invoked = (span: TelemetrySpan, result: RunResult) => {
    span.setAttribute('agentward.run.status', result.status);
    setUsage(span, result.usage);
  };
  /** What a model turn's span says once the turn is done: usage, finish reason and (with `recordContent`) answer. */
  const turned = (span: TelemetrySpan, { text, toolCalls, usage }: TurnResult) => {
    setUsage(span, usage);
    span.setAttribute('gen_ai.response.finish_reasons', toolCalls.length > 0 ? TOOL_CALLS : STOP);
    if (recordContent)
      span.setAttribute(
        'gen_ai.output.messages',
        conventionMessages([{ role: 'assistant', content: text, ...(toolCalls.length > 0 && { toolCalls }) }]),
      );
  };
  /** What a tool call's span says once it is answered: the result with `recordContent`; ERROR, `TOOL_ERROR`, when it failed. */
  const answered = (span: TelemetrySpan, { message, event }: ToolAnswer) => {
    if (recordContent) span.setAttribute('gen_ai.tool.call.result', message.content);
    if (event.type === 'tool-error') spanFailed(span, undefined, 'TOOL_ERROR');
  };
  /**
   * The last turn's span name and options, and the model and settings they are for: made again
   * only when those change (an agent's model is mostly one), or each turn when contents are recorded.
   */
  let chatSpan: { model: Model; settings: unknown; name: string; options: TelemetrySpanOptions } | undefined;
  /** A run's trace: one object on its span, its methods shared (a traced send allocates little more than its spans). */
  class Trace implements RunTrace {
    readonly span: TelemetrySpan;
    /** The running model turn's span, until it ends. */
    turn: TelemetrySpan | undefined;
    /** The session, once known: on the run's span and each turn's. */
    sessionId: string | undefined;
    /** Whether the run's span names its model (given at creation, else by the first turn's). */
    modelNamed = model !== undefined;
    constructor(span: TelemetrySpan) {
      this.span = span;
    }
    conversation(sessionId: string) {
      this.sessionId = sessionId;
      this.span.setAttribute('gen_ai.conversation.id', sessionId);
    }
    ended(result: RunResult | undefined, error?: unknown) {
      endSpan(this.span, invoked, result, error);
    }
    chat<T>(model: Model, request: ModelRequest, turn: () => Promise<T>): Promise<T> {
      let made = chatSpan;
      if (recordContent || made?.model !== model || made.settings !== request.settings) {
        const { modelId } = model;
        const attributes: SpanAttributes = { [OPERATION]: 'chat', ...modelAttributes(model) };
        const settings = (request.settings ?? {}) as Record<string, SpanAttributeValue | undefined>;
        for (const setting in REQUEST_SETTINGS) {
          const value = settings[setting];
          if (value !== undefined) attributes[`gen_ai.request.${REQUEST_SETTINGS[setting]}`] = value;
        }
        if (recordContent) {
          if (request.instructions !== '')
            attributes['gen_ai.system_instructions'] = JSON.stringify([
              { type: 'text', content: request.instructions },
            ]);
          attributes['gen_ai.input.messages'] = conventionMessages(request.messages);
        }
        const name = modelId === undefined ? 'chat' : `chat ${modelId}`;
        chatSpan = made = { model, settings: request.settings, name, options: { kind: CLIENT, attributes } };
      }
      // A model a function chose for this run: the run's span names it with the first turn.
      if (!this.modelNamed) {
        this.modelNamed = true;
        const attributes = modelAttributes(model);
        for (const key in attributes) this.span.setAttribute(key, attributes[key] as SpanAttributeValue);
      }
      return startSpan(tracer, made!.name, made!.options, (span) => {
        this.turn = span;
        if (this.sessionId !== undefined) span.setAttribute('gen_ai.conversation.id', this.sessionId);
        return turn();
      });
    }
    chatEnded(result: TurnResult | undefined, error?: unknown) {
      const span = this.turn;
      this.turn = undefined;
      if (span !== undefined) endSpan(span, turned, result, error);
    }
    tool<T extends ToolAnswer>(
      call: ToolCall,
      approval: 'approved' | 'denied' | undefined,
      answer: () => T | Promise<T>,
      description?: string,
      decidedBy?: DecidedBy,
    ): Promise<T> {
      const attributes: SpanAttributes = {
        [OPERATION]: 'execute_tool',
        'gen_ai.agent.name': agent,
        [TOOL_NAME]: call.name,
        'gen_ai.tool.call.id': call.id,
        // The agent's tools are all functions the model calls by name (the conventions' `function`).
        'gen_ai.tool.type': 'function',
      };
      if (description !== undefined) attributes['gen_ai.tool.description'] = description;
      if (approval !== undefined) attributes['agentward.approval.outcome'] = approval;
      // The decider (design §33): its authenticator and issuer, and its id unless recordPrincipal is false.
      if (decidedBy !== undefined) {
        attributes['agentward.approval.decided_by.authenticator'] = decidedBy.authenticator;
        if (decidedBy.issuer !== undefined) attributes['agentward.approval.decided_by.issuer'] = decidedBy.issuer;
        if (recordPrincipal) attributes['agentward.approval.decided_by.id'] = decidedBy.id;
      }
      if (recordContent) attributes['gen_ai.tool.call.arguments'] = JSON.stringify(call.arguments) ?? 'null';
      return inSpan(tracer, `execute_tool ${call.name}`, { kind: INTERNAL, attributes }, answer, answered);
    }
  }
  // A span that records nothing (an OpenTelemetry API without an SDK, a sampler that dropped the
  // run) is ended at once and the run goes on untraced, inside it: no turn or tool span under it.
  return (run) => (first, second) =>
    startSpan(tracer, name, options, (span) =>
      run(first, second, span.isRecording?.() === false ? void span.end() : new Trace(span)),
    );
}
