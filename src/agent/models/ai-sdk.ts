// AI SDK language models (LanguageModelV3/V4) as a `Model` (design §21), recognized by their
// shape: nothing here imports `ai` or `@ai-sdk/*`. Wire facts: `@ai-sdk/provider`'s
// language-model types (prompt, function tools, generate result, stream parts, usage).
import { AgentError, modelError } from '../errors.ts';
import { reportedUsage, wireToolCall } from '../model-turn.ts';
import { detailOfBody, type ProviderDetail, withProviderDetail } from '../provider-detail.ts';
import type { Message, Model, ModelDelta, ModelRequest, ToolCall, Usage } from '../types.ts';
import { isNonEmptyString, isTextPart } from '../shapes.ts';

const FAILED = 'the model failed';
/**
 * An AI SDK language model (`LanguageModelV3`/`V4`, what `@ai-sdk/openai`, `@ai-sdk/anthropic`
 * and every AI SDK provider return), as far as the agent reads it; recognized by its shape, so
 * nothing here imports the AI SDK (design §21).
 */
export interface AiSdkLanguageModel {
  readonly specificationVersion: 'v3' | 'v4';
  readonly provider: string;
  readonly modelId: string;
  doGenerate(
    options: AiSdkCallOptions,
  ): PromiseLike<{ readonly content: ReadonlyArray<{ readonly type: string }>; readonly usage?: unknown }>;
  doStream(options: AiSdkCallOptions): PromiseLike<{ readonly stream: ReadableStream<{ readonly type: string }> }>;
}

/**
 * The call options the agent hands an AI SDK model: the part of `LanguageModelV3CallOptions` /
 * `LanguageModelV4CallOptions` it sets, typed loosely enough that both are assignable to it.
 */
export interface AiSdkCallOptions {
  prompt: ReadonlyArray<{ readonly role: string; readonly content: unknown }>;
  tools?: ReadonlyArray<{ readonly type: string; readonly name: string }>;
  temperature?: number;
  maxOutputTokens?: number;
  topP?: number;
  stopSequences?: string[];
  headers?: Record<string, string | undefined>;
  abortSignal?: AbortSignal;
}

/** True for an AI SDK language model of specification `v3` or `v4` (`@ai-sdk/openai`, `@ai-sdk/anthropic`, `MockLanguageModelV4`, …). */
export function isAiSdkModel(value: unknown): value is AiSdkLanguageModel {
  const model = value as Partial<AiSdkLanguageModel>;
  return (
    typeof model === 'object' &&
    model !== null &&
    (model.specificationVersion === 'v3' || model.specificationVersion === 'v4') &&
    typeof model.doGenerate === 'function' &&
    typeof model.doStream === 'function'
  );
}

/** The parts of a generate result's content and of a stream this adapter reads. */
interface Part {
  type: string;
  text?: string;
  delta?: string;
  toolCallId?: string;
  toolName?: string;
  input?: string;
  providerExecuted?: boolean;
  usage?: { inputTokens?: unknown; outputTokens?: unknown };
  finishReason?: string | { unified?: string };
  error?: unknown;
}

/**
 * An AI SDK language model as a `Model`: the instructions as the system message, the transcript
 * as the prompt, the tools as function tools, the settings and the abort signal as call options;
 * `generate` reads text, tool calls and usage from `doGenerate`, `stream` the same from `doStream`
 * as its parts come. A failure is `MODEL_ERROR` naming the HTTP status at most: an AI SDK error
 * holds the provider's body (and the request), so it is not kept as the cause; what the provider
 * said (status, error type, message; the model's header values and credential-shaped text
 * redacted) rides on the error for `agentward dev` to print, never in its message (design §31).
 */
export function aiSdkModel(model: AiSdkLanguageModel): Model {
  return {
    provider: model.provider,
    modelId: model.modelId,
    async generate(request) {
      let result: Awaited<ReturnType<AiSdkLanguageModel['doGenerate']>>;
      try {
        result = await model.doGenerate(callOptions(request));
      } catch (error) {
        throw await providerError(model, error, FAILED);
      }
      let text = '';
      const toolCalls: ToolCall[] = [];
      for (const part of result.content as Part[]) {
        if (isTextPart(part)) text += part.text;
        else if (part.type === 'tool-call' && part.providerExecuted !== true)
          toolCalls.push(toolCall(part, toolCalls.length));
      }
      return { text, toolCalls, usage: usageOf(result.usage as Part['usage']) };
    },

    async *stream(request): AsyncIterable<ModelDelta> {
      let reader: ReadableStreamDefaultReader<{ type: string }> | undefined;
      let finished = false;
      let done = false;
      let calls = 0;
      try {
        reader = (await model.doStream(callOptions(request))).stream.getReader();
        for (;;) {
          const read = await reader.read();
          // A stream without its finish part (or a provider's `interrupted` one) was cut: not a shorter answer.
          if ((done = read.done)) {
            if (finished) return;
            throw modelError('the model stream ended before it finished');
          }
          const part = read.value as Part;
          if (part.type === 'text-delta') {
            if (part.delta) yield { type: 'text', text: part.delta };
          } else if (part.type === 'tool-call') {
            if (part.providerExecuted !== true) yield { type: 'tool-call', call: toolCall(part, calls++) };
          } else if (part.type === 'finish') {
            finished =
              (typeof part.finishReason === 'string' ? part.finishReason : part.finishReason?.unified) !==
              'interrupted';
            const usage = usageOf(part.usage);
            if (usage !== undefined) yield { type: 'usage', usage };
          } else if (part.type === 'error') {
            throw await providerError(model, part.error, 'the model reported an error in its stream');
          }
        }
      } catch (error) {
        throw await providerError(model, error, FAILED);
      } finally {
        // A run that stops early (an abort, a bad part) lets go of the provider's response.
        if (!done) reader?.cancel().catch(() => undefined);
      }
    },
  };
}

/**
 * `MODEL_ERROR` for what a provider threw: its message names the HTTP status of an `APICallError`
 * or the `AI_…` name of another AI SDK error, nothing else of it; what the provider said is kept
 * beside it, redacted (`provider-detail.ts`).
 */
async function providerError(model: AiSdkLanguageModel, error: unknown, otherwise: string): Promise<AgentError> {
  if (error instanceof AgentError) return error;
  const { statusCode: status, name } = (typeof error === 'object' && error !== null ? error : {}) as {
    statusCode?: unknown;
    name?: unknown;
  };
  const aiSdkName = typeof name === 'string' && /^AI_\w{1,60}$/.test(name) ? name : undefined;
  const failed = Number.isInteger(status)
    ? modelError(`the model answered with HTTP ${status}`)
    : modelError(aiSdkName === undefined ? otherwise : `${otherwise} (${aiSdkName})`);
  return withProviderDetail(failed, detailOf(model, error, aiSdkName), await headerValues(model));
}

/** An `APICallError`'s status, the type its `data` (or `responseBody`) names, and its message; a stream's error part the same. */
function detailOf(model: AiSdkLanguageModel, error: unknown, aiSdkName: string | undefined): ProviderDetail {
  const provider = `${model.provider} ${model.modelId}`;
  if (typeof error !== 'object' || error === null)
    return { provider, message: typeof error === 'string' ? error : undefined };
  const { statusCode, data, responseBody, message } = error as Record<string, unknown>;
  const said = detailOfBody(data ?? responseBody ?? (aiSdkName === undefined ? error : undefined));
  return {
    provider,
    ...(Number.isInteger(statusCode) && { status: statusCode as number }),
    type: said.type ?? aiSdkName,
    message: (isNonEmptyString(message) ? message : undefined) ?? said.message,
  };
}

/** The header values an AI SDK provider sends (its API key among them), to redact; none when it does not say. */
async function headerValues(model: AiSdkLanguageModel): Promise<string[]> {
  try {
    const headers = (model as { config?: { headers?: unknown } }).config?.headers;
    const resolved: unknown = typeof headers === 'function' ? await (headers as () => unknown)() : headers;
    if (typeof resolved !== 'object' || resolved === null) return [];
    return Object.values(resolved).flatMap((value) =>
      typeof value === 'string' ? [value, value.replace(/^\S+\s+/, '')] : [],
    );
  } catch {
    return [];
  }
}

const toolCall = (part: Part, index: number): ToolCall =>
  wireToolCall(part.toolCallId, part.toolName, part.input, index);

/** Usage of a V3/V4 result (`{ inputTokens: { total }, outputTokens: { total } }`; flat numbers read too). */
const usageOf = (usage: Part['usage']): Usage | undefined =>
  reportedUsage(tokens(usage?.inputTokens), tokens(usage?.outputTokens));
const tokens = (count: unknown) =>
  typeof count === 'object' && count !== null ? (count as { total?: unknown }).total : count;

type PromptMessage =
  | { role: 'system'; content: string }
  | { role: 'user' | 'assistant' | 'tool'; content: Record<string, unknown>[] };

/**
 * A transcript as the AI SDK's prompt messages (`ModelMessage`s without the system message): text
 * and tool-call parts, consecutive tool results in one tool message, as the AI SDK builds them.
 * The prompt of a model turn, and the `messages` an AI SDK tool's `execute` receives (design §27).
 */
export function promptMessages(messages: readonly Message[]): PromptMessage[] {
  const prompt: PromptMessage[] = [];
  // The calls the tool results that follow answer (a transcript answers each turn's calls right after it).
  let calls: readonly ToolCall[] = [];
  let results: Record<string, unknown>[] | undefined;
  for (const message of messages) {
    if (message.role === 'tool') {
      if (results === undefined) prompt.push({ role: 'tool', content: (results = []) });
      const { toolCallId, content, json } = message;
      results.push({
        type: 'tool-result',
        toolCallId,
        toolName: calls.find((call) => call.id === toolCallId)?.name ?? '',
        // As generateText sends a tool's output: a string as text, any other value as JSON.
        output: json === true ? { type: 'json', value: JSON.parse(content) } : { type: 'text', value: content },
      });
      continue;
    }
    results = undefined;
    const content: Record<string, unknown>[] = message.content === '' ? [] : [{ type: 'text', text: message.content }];
    calls = (message.role === 'assistant' && message.toolCalls) || [];
    for (const call of calls)
      content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.arguments });
    if (content.length > 0) prompt.push({ role: message.role, content });
  }
  return prompt;
}

/** The call options of one turn. */
function callOptions({ instructions, messages, tools, settings, signal }: ModelRequest): AiSdkCallOptions {
  const prompt: PromptMessage[] = instructions === '' ? [] : [{ role: 'system', content: instructions }];
  prompt.push(...promptMessages(messages));
  const options: AiSdkCallOptions = { ...settings, prompt };
  if (tools.length > 0)
    options.tools = tools.map(({ name, description, parameters }) => ({
      type: 'function',
      name,
      description,
      inputSchema: parameters,
    }));
  if (signal !== undefined) options.abortSignal = signal;
  return options;
}
