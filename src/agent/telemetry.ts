// OpenTelemetry spans of a run (design §28), in the GenAI conventions, made through any tracer
// shaped like `@opentelemetry/api`'s `Tracer`: nothing here imports OpenTelemetry. Without the
// `telemetry` option nothing of this module runs, and nothing is allocated for it.
import { checkOptionNames, kindOf } from '../auth/internal.ts';
import { AgentError, configError } from './errors.ts';
import type { Message, Model, ModelRequest, RunResult, ToolCall, Usage } from './types.ts';

/** An attribute's value, as OpenTelemetry takes it. */
export type SpanAttributeValue = string | number | boolean | string[];
export type SpanAttributes = Record<string, SpanAttributeValue>;

/** What the agent calls on a span: the part of `@opentelemetry/api`'s `Span` it uses. */
export interface TelemetrySpan {
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
// Names used more than once: one string each in a minified bundle.
export const OPERATION = 'gen_ai.operation.name';
export const TOOL_NAME = 'gen_ai.tool.name';
const TOOL_CALL_ID = 'gen_ai.tool.call.id';
const INPUT_TOKENS = 'gen_ai.usage.input_tokens';
const OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
const INPUT_MESSAGES = 'gen_ai.input.messages';
const OUTPUT_MESSAGES = 'gen_ai.output.messages';

/** `telemetry` checked at creation (`helper` names the factory), or `undefined` when absent. */
export function readTelemetry(value: unknown, helper: string): Telemetry | undefined {
  if (value === undefined) return undefined;
  const where = `${helper}: telemetry`;
  if (typeof value !== 'object' || value === null)
    throw configError(`${where} must be an object; got ${kindOf(value)}`);
  checkOptionNames(where, value, ['tracer', 'recordContent', 'recordPrincipal']);
  const { tracer, recordContent = false, recordPrincipal = true } = value as TelemetryOptions;
  // One message for the three: an OpenTelemetry Tracer (startActiveSpan or startSpan), and booleans.
  if (
    typeof (tracer?.startActiveSpan ?? tracer?.startSpan) !== 'function' ||
    typeof recordContent !== 'boolean' ||
    typeof recordPrincipal !== 'boolean'
  )
    throw configError(`${where}: tracer must be an OpenTelemetry Tracer, recordContent and recordPrincipal booleans`);
  return Object.freeze({ tracer, recordContent, recordPrincipal });
}

/**
 * `error.type` of a failure: the agent's error code (`MODEL_ERROR`, `SESSION_FULL`…), a store's
 * `STORE_UNAVAILABLE`, else `_OTHER` (the conventions' fallback: an abort, another's error).
 */
export const errorType = (error: unknown): string =>
  error instanceof AgentError
    ? error.code
    : (error as { code?: unknown } | null)?.code === 'STORE_UNAVAILABLE'
      ? 'STORE_UNAVAILABLE'
      : '_OTHER';

/** Marks `span` failed: status ERROR and `error.type`; the message and exception only of the agent's own errors (another's may hold internals). */
export function spanFailed(span: TelemetrySpan, error: unknown, type = errorType(error)): void {
  span.setAttribute('error.type', type);
  if (error instanceof AgentError) {
    span.setStatus({ code: STATUS_ERROR, message: error.message });
    span.recordException?.(error);
  } else span.setStatus({ code: STATUS_ERROR });
}

/**
 * Runs `body` in a span that ends when it settles (ERROR when it throws): active while it runs
 * when the tracer has `startActiveSpan`, so that spans started inside nest under it.
 */
export function inSpan<T>(
  tracer: TelemetryTracer,
  name: string,
  options: TelemetrySpanOptions,
  body: (span: TelemetrySpan) => Promise<T>,
): Promise<T> {
  return withSpan(tracer, name, options, (span) => settle(span, body(span)));
}

/**
 * `work`'s result once `after` has put what it says on `span`; ERROR when it fails; the span
 * ended either way. The one async frame a span adds.
 */
async function settle<T, C>(
  span: TelemetrySpan,
  work: Promise<T>,
  after?: (span: TelemetrySpan, result: T, context: C) => void,
  context?: C,
): Promise<T> {
  try {
    const result = await work;
    after?.(span, result, context as C);
    return result;
  } catch (error) {
    spanFailed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** The usage of a run or a turn on its span. */
function setUsage(span: TelemetrySpan, usage: Usage | undefined): void {
  if (usage === undefined) return;
  span.setAttribute(INPUT_TOKENS, usage.inputTokens);
  span.setAttribute(OUTPUT_TOKENS, usage.outputTokens);
}

/** `fn` of a new span, active while `fn` runs where the tracer can; `fn` ends it. */
function withSpan<T>(
  tracer: TelemetryTracer,
  name: string,
  options: TelemetrySpanOptions,
  fn: (span: TelemetrySpan) => T,
): T {
  return typeof tracer.startActiveSpan === 'function'
    ? tracer.startActiveSpan(name, options, fn)
    : fn((tracer.startSpan as NonNullable<TelemetryTracer['startSpan']>)(name, options));
}

/** The conventions' message form (`gen_ai.input.messages`): role and parts. */
function conventionMessages(messages: readonly Message[]): string {
  return JSON.stringify(
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
}

/** The settings a chat span records, by their `gen_ai.request.*` names; a provider's `openai.chat` is `openai`. */
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
/** A `chat {model}` span's name and options. */
type ChatSpan = { readonly name: string; readonly options: TelemetrySpanOptions };
/** What a tool call is answered with, as far as its span reads it. */
type ToolAnswer = { message: Message; event: { type: string } };

/**
 * The spans of one agent (`createAgent({ telemetry })`): what is the same for all its runs is
 * made once (the run's span name and options; a model turn's, per model and settings, unless
 * contents are recorded), so that a traced send allocates little more than the spans themselves.
 */
export class AgentTracing {
  readonly telemetry: Telemetry;
  readonly #name: string;
  readonly #options: TelemetrySpanOptions;

  constructor(telemetry: Telemetry, agent: string) {
    this.telemetry = telemetry;
    this.#name = `invoke_agent ${agent}`;
    this.#options = {
      kind: INTERNAL,
      attributes: { [OPERATION]: 'invoke_agent', 'gen_ai.agent.name': agent },
    };
  }

  /**
   * `run(first, second, trace)` (`send` or `decide` and their arguments) in its `invoke_agent {agent}`
   * span. No closure per run but the tracer's. Contents are on the run's chat and tool spans, not here.
   */
  invoke<A, B>(
    first: A,
    second: B,
    run: (first: A, second: B, trace: RunTrace) => Promise<RunResult>,
  ): Promise<RunResult> {
    return withSpan(this.telemetry.tracer, this.#name, this.#options, (span) =>
      settle(span, run(first, second, new RunTrace(this, span)), invoked),
    );
  }

  /** The name and options of a `chat {model}` span (CLIENT) of `model` with `request`'s settings. */
  chatSpan(model: Model, request: ModelRequest): ChatSpan {
    const attributes: SpanAttributes = { [OPERATION]: 'chat' };
    const provider = model.provider?.split('.')[0];
    if (provider !== undefined) attributes['gen_ai.provider.name'] = provider;
    if (model.modelId !== undefined) attributes['gen_ai.request.model'] = model.modelId;
    const settings = (request.settings ?? {}) as Record<string, SpanAttributeValue | undefined>;
    for (const name in REQUEST_SETTINGS) {
      const value = settings[name];
      if (value !== undefined) attributes[`gen_ai.request.${REQUEST_SETTINGS[name]}`] = value;
    }
    if (this.telemetry.recordContent) {
      if (request.instructions !== '')
        attributes['gen_ai.system_instructions'] = JSON.stringify([{ type: 'text', content: request.instructions }]);
      attributes[INPUT_MESSAGES] = conventionMessages(request.messages);
    }
    return {
      name: model.modelId === undefined ? 'chat' : `chat ${model.modelId}`,
      options: { kind: CLIENT, attributes },
    };
  }
}

/** What a run's span says once the run is done: its status and usage. */
function invoked(span: TelemetrySpan, result: RunResult): void {
  span.setAttribute('agentward.run.status', result.status);
  setUsage(span, result.usage);
}

/** The spans of one run inside its `invoke_agent` span: each model turn and each tool call. */
export class RunTrace {
  readonly tracing: AgentTracing;
  readonly span: TelemetrySpan;

  constructor(tracing: AgentTracing, span: TelemetrySpan) {
    this.tracing = tracing;
    this.span = span;
  }

  /** The session, once known: `gen_ai.conversation.id`. */
  conversation(sessionId: string): void {
    this.span.setAttribute('gen_ai.conversation.id', sessionId);
  }

  /** One model turn in its `chat {model}` span (CLIENT). */
  chat<T extends TurnResult>(model: Model, request: ModelRequest, turn: () => Promise<T>): Promise<T> {
    const { name, options } = this.tracing.chatSpan(model, request);
    const { tracer, recordContent } = this.tracing.telemetry;
    return withSpan(tracer, name, options, (span) => settle(span, turn(), turned, recordContent));
  }

  /** One tool call in its `execute_tool {tool}` span; a call answered with an error is ERROR, `error.type` `TOOL_ERROR`. */
  tool<T extends ToolAnswer>(
    call: ToolCall,
    approval: 'approved' | 'denied' | undefined,
    answer: () => T | Promise<T>,
  ): Promise<T> {
    const { tracer, recordContent } = this.tracing.telemetry;
    const attributes: SpanAttributes = {
      [OPERATION]: 'execute_tool',
      [TOOL_NAME]: call.name,
      [TOOL_CALL_ID]: call.id,
    };
    if (approval !== undefined) attributes['agentward.approval.outcome'] = approval;
    if (recordContent) attributes['gen_ai.tool.call.arguments'] = JSON.stringify(call.arguments) ?? 'null';
    const options = { kind: INTERNAL, attributes };
    return withSpan(tracer, `execute_tool ${call.name}`, options, (span) =>
      settle(span, Promise.resolve(answer()), answered, recordContent),
    );
  }
}

/** What a model turn's span says once the turn is done: usage, finish reason and (with `recordContent`) answer. */
function turned(span: TelemetrySpan, result: TurnResult, recordContent: boolean): void {
  setUsage(span, result.usage);
  span.setAttribute('gen_ai.response.finish_reasons', result.toolCalls.length > 0 ? TOOL_CALLS : STOP);
  if (!recordContent) return;
  const answer: Message = { role: 'assistant', content: result.text };
  if (result.toolCalls.length > 0) answer.toolCalls = result.toolCalls;
  span.setAttribute(OUTPUT_MESSAGES, conventionMessages([answer]));
}

/** What a tool call's span says once it is answered: the result with `recordContent`; ERROR, `TOOL_ERROR`, when it failed. */
function answered(span: TelemetrySpan, result: ToolAnswer, recordContent: boolean): void {
  if (recordContent) span.setAttribute('gen_ai.tool.call.result', result.message.content);
  if (result.event.type === 'tool-error') spanFailed(span, undefined, 'TOOL_ERROR');
}
