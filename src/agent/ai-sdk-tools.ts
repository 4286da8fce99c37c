// AI SDK tools as they are (design §27): `tool()`, `dynamicTool()` and the records of them (a
// `ToolSet`, what `@ai-sdk/mcp`'s `client.tools()` returns), recognised by their shape: nothing
// here imports `ai`. Each becomes one of this library's tools, so §21's validation and approvals
// and §26's argument rules apply to it unchanged. Wire facts: `@ai-sdk/provider-utils`' `Tool`,
// `jsonSchema()`, `ToolExecutionOptions` and `ToolResultOutput`.
import { kindOf } from '../auth/internal.ts';
import { jsonSchemaIssues, parametersSchema, type StandardJsonSchema } from './arguments.ts';
import { type Fail, invalidAgent } from './errors.ts';
import { promptMessages } from './models/ai-sdk.ts';
import type { JsonSchema, Message, Tool, ToolCall } from './types.ts';
import { isTextPart } from './shapes.ts';

/**
 * An AI SDK tool (`tool({ description, inputSchema, execute, needsApproval })`, `dynamicTool()`),
 * as far as the agent reads it. `inputSchema`: zod (4.2 or later), valibot through
 * `toStandardJsonSchema`, arktype, or `jsonSchema()` (with its optional `validate`).
 */
export interface AiSdkTool {
  /** An AI SDK tool has no name of its own: its key in the record is its name. */
  readonly name?: undefined;
  readonly type?: 'function' | 'dynamic' | 'provider' | undefined;
  /** A string, or a function of `{ context }` (called once, with no context). */
  // biome-ignore lint/suspicious/noExplicitAny: the AI SDK types its options from the tool's context type.
  readonly description?: string | ((options: any) => string) | undefined;
  readonly inputSchema: unknown;
  // biome-ignore lint/suspicious/noExplicitAny: the AI SDK types the input from the schema; any tool of any input must fit.
  readonly execute?: ((input: any, options: AiSdkToolCallOptions) => unknown) | undefined;
  readonly needsApproval?:
    | boolean
    // biome-ignore lint/suspicious/noExplicitAny: as for execute.
    | ((input: any, options: Omit<AiSdkToolCallOptions, 'abortSignal'>) => boolean | PromiseLike<boolean>)
    | undefined;
}

/** What an AI SDK tool's `execute` (and `needsApproval`) receives besides its input: never the principal. */
export interface AiSdkToolCallOptions {
  readonly toolCallId: string;
  /** The messages sent to the model for the turn that made the call (`ModelMessage`s, without the system message). */
  // biome-ignore lint/suspicious/noExplicitAny: the AI SDK's ModelMessage, which this file does not import.
  readonly messages: any[];
  readonly abortSignal?: AbortSignal;
  /** The AI SDK's tool context: always `undefined` here, as the AI SDK passes it without one (a tool with a `contextSchema` is refused). */
  // biome-ignore lint/suspicious/noExplicitAny: the AI SDK types it from the tool's context type.
  readonly context: any;
}

/** The AI SDK's mark of a `jsonSchema()` schema. */
const AI_SCHEMA = Symbol.for('vercel.ai.schema');
/** Where an adapted tool keeps the AI SDK tool it runs. */
const SDK = Symbol('agentward.aiSdkTool');
type Adapted = Tool & { readonly [SDK]: AiSdkTool; readonly ready: () => Promise<void> };

/** Whether `value` looks like an AI SDK tool: it has `inputSchema`, or an AI SDK tool `type`. */
export function looksLikeAiSdkTool(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { type } = value as { type?: unknown };
  return 'inputSchema' in value || type === 'dynamic' || type === 'provider' || type === 'function';
}

/** The AI SDK tool a tool of this library runs, when it is one adapted here. */
export const aiSdkToolOf = (tool: Tool): AiSdkTool | undefined => (tool as Partial<Adapted>)[SDK];

/** Waits for the JSON Schemas `jsonSchema()` gave as promises: before a run sends its tools to the model. */
export async function schemasReady(tools: Iterable<Tool>): Promise<void> {
  for (const tool of tools) await (tool as Partial<Adapted>).ready?.();
}

/** Whether a `needsApproval` can work (absent, a boolean or a policy function), and what is said of one that cannot. */
export const isApprovalPolicy = (value: unknown) =>
  value === undefined || typeof value === 'boolean' || typeof value === 'function';
const adaptations = new WeakMap<object, Map<string, Adapted>>();
const noWait = () => Promise.resolve();

/** The AI SDK tool `value` named `name` as a tool of this library, checked (`fail` names it); the same object per tool and name. */
export function adaptAiSdkTool(value: object, name: string, where: string, fail: Fail = invalidAgent): Tool {
  const known = adaptations.get(value)?.get(name);
  if (known !== undefined) return known;
  const sdk = value as AiSdkTool & { contextSchema?: unknown };
  const at = `${where}: tool "${name}"`;
  if (sdk.type === 'provider')
    throw fail(`${at} is provider-executed (type: 'provider'): its provider runs it, not this agent; leave it out`);
  if (typeof sdk.execute !== 'function')
    throw fail(
      `${at} has no execute function (an AI SDK tool: tool({ description, inputSchema, execute, needsApproval? })): this agent runs its tools itself`,
    );
  if (sdk.contextSchema !== undefined)
    throw fail(`${at} has a contextSchema: tools here get no context; close over what it needs instead`);
  const { needsApproval } = sdk;
  if (!isApprovalPolicy(needsApproval))
    throw fail(`${at} needs needsApproval as a boolean or a function; got ${kindOf(needsApproval)}`);
  const description = typeof sdk.description === 'function' ? sdk.description({ context: undefined }) : sdk.description;
  if (description !== undefined && typeof description !== 'string')
    throw fail(`${at} needs a description that is a string`);
  const schema = inputParameters(sdk.inputSchema);
  // A Standard Schema's JSON Schema is made (and checked) now, as for every tool; a jsonSchema() one's may be a promise.
  if (
    schema === undefined ||
    (schema.wait === undefined && parametersSchema(schema.parameters, at, fail) === undefined)
  )
    throw fail(
      `${at} needs inputSchema: zod 4.2 or later, valibot through toStandardJsonSchema, arktype, or jsonSchema()`,
    );
  const tool: Adapted = {
    name,
    description: description ?? '',
    parameters: schema.parameters,
    // Read only for whether it is set; the policy itself is called with its options (tools.ts).
    ...(needsApproval !== undefined && { needsApproval: needsApproval as Tool['needsApproval'] }),
    execute: (args, context) =>
      runAiSdkTool(sdk, args, { id: '', name, arguments: args }, [], context.signal) as Promise<unknown>,
    [SDK]: sdk,
    ready: schema.wait ?? noWait,
  };
  if (!adaptations.has(value)) adaptations.set(value, new Map());
  adaptations.get(value)!.set(name, tool);
  return tool;
}

/** What an AI SDK tool's `needsApproval` function receives besides the input (as `generateText` passes it). */
export const approvalOptions = (call: ToolCall, messages: readonly Message[]) => {
  const { abortSignal: _, ...options } = callOptions(call, messages);
  return options;
};

/** The options an AI SDK tool's functions receive for `call`: the messages the model was sent for the turn that made it. */
function callOptions(call: ToolCall, messages: readonly Message[], signal?: AbortSignal): AiSdkToolCallOptions {
  const turn = messages.findLastIndex(
    (message) => message.role === 'assistant' && message.toolCalls?.some(({ id }) => id === call.id),
  );
  const sent = promptMessages(turn < 0 ? messages : messages.slice(0, turn));
  return {
    toolCallId: call.id,
    messages: sent,
    ...(signal !== undefined && { abortSignal: signal }),
    context: undefined,
  };
}

/**
 * Runs an AI SDK tool: its output (the last value of one that streams), passed through its
 * `toModelOutput` when it has one (`@ai-sdk/mcp`'s turns an MCP result into its text).
 */
export async function runAiSdkTool(
  sdk: AiSdkTool,
  input: unknown,
  call: ToolCall,
  messages: readonly Message[],
  signal: AbortSignal | undefined,
): Promise<unknown> {
  const options = callOptions(call, messages, signal);
  let output = (sdk.execute as NonNullable<AiSdkTool['execute']>)(input, options);
  if (
    typeof output === 'object' &&
    output !== null &&
    typeof (output as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function'
  ) {
    let last: unknown;
    for await (const value of output as unknown as AsyncIterable<unknown>) last = value;
    output = last;
  } else output = await output;
  const toModelOutput = (sdk as { toModelOutput?: (output: unknown) => unknown }).toModelOutput;
  if (typeof toModelOutput !== 'function') return output;
  return modelOutput(await toModelOutput({ toolCallId: call.id, input, output }));
}

/** An AI SDK `ToolResultOutput` as what the model is told: its text, its JSON, the text parts of its content. */
function modelOutput(result: unknown): unknown {
  if (typeof result !== 'object' || result === null) return result;
  const { type, value, reason } = result as { type?: unknown; value?: unknown; reason?: unknown };
  if (type === 'text' || type === 'error-text' || type === 'json' || type === 'error-json') return value;
  if (type === 'execution-denied') return typeof reason === 'string' ? reason : 'denied';
  if (type === 'content' && Array.isArray(value))
    return value
      .map((part: unknown) =>
        isTextPart(part)
          ? part.text
          : `[${String(typeof part === 'object' && part !== null ? (part as { type?: unknown }).type : 'part')} omitted]`,
      )
      .join('\n');
  return result;
}

/**
 * `inputSchema` as a tool's `parameters`: a Standard Schema as it is (its JSON Schema checked where
 * every tool's is), a `jsonSchema()` schema (or an AI SDK lazy schema returning one) as a Standard
 * Schema of its own; `undefined` for anything else.
 */
function inputParameters(input: unknown): { parameters: Tool['parameters']; wait?: () => Promise<void> } | undefined {
  let schema = input;
  if (typeof schema === 'function' && !('~standard' in schema)) schema = (schema as () => unknown)();
  if ((typeof schema !== 'object' || schema === null) && typeof schema !== 'function') return undefined;
  if ('~standard' in (schema as object)) return { parameters: schema as Tool['parameters'] };
  if ((schema as Record<PropertyKey, unknown>)[AI_SCHEMA] !== true) return undefined;
  const { validate } = schema as { validate?: (value: unknown) => unknown };
  let resolved: JsonSchema | undefined;
  let pending: Promise<void> | undefined;
  const ready = () =>
    (pending ??= Promise.resolve((schema as { jsonSchema: unknown }).jsonSchema).then((value) => {
      if (typeof value !== 'object' || value === null)
        throw invalidAgent(
          'jsonSchema() gave no JSON Schema (zod 4.2 or later, valibot through toStandardJsonSchema, arktype, or jsonSchema())',
        );
      resolved = value as JsonSchema;
    }));
  const parameters: StandardJsonSchema = {
    '~standard': {
      version: 1,
      vendor: 'ai-sdk',
      async validate(value: unknown) {
        await ready();
        if (typeof validate !== 'function') {
          const issues = jsonSchemaIssues(resolved as JsonSchema, value);
          return issues.length > 0 ? { issues } : { value };
        }
        const result = (await validate(value)) as { success?: unknown; value?: unknown; error?: unknown };
        if (result?.success === true) return { value: result.value };
        const issues = issuesOf(result?.error) ?? jsonSchemaIssues(resolved as JsonSchema, value);
        return { issues: issues.length > 0 ? issues : [{ message: 'invalid' }] };
      },
      jsonSchema: {
        input() {
          if (resolved === undefined) throw invalidAgent('jsonSchema(): its JSON Schema is not resolved yet');
          return resolved;
        },
      },
    },
  };
  return { parameters, wait: ready };
}

/** The Standard Schema issues inside a failed `validate()`'s error (a zod error's `issues`, a `TypeValidationError`'s cause). */
function issuesOf(error: unknown): { message: string; path?: PropertyKey[] }[] | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { issues, cause } = error as { issues?: unknown; cause?: unknown };
  const found =
    issues ?? (typeof cause === 'object' && cause !== null ? (cause as { issues?: unknown }).issues : cause);
  return Array.isArray(found) &&
    found.every((issue) => typeof issue === 'object' && issue !== null && typeof issue.message === 'string')
    ? found
    : undefined;
}
