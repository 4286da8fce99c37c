import { AgentError, modelError } from './errors.ts';
import type { Model, ModelRequest, ModelTurn, RunEvent, ToolCall, Usage } from './types.ts';
import { isNonEmptyString } from './shapes.ts';
import { estimateTokens } from './token-estimate.ts';

/** `MODEL_ERROR`: the model returned `what`, which is not part of a turn. */
const returned = (what: string) => modelError(`the model returned ${what}`);
/**
 * Who hears of a failed model turn: empty until `onProviderFailure` (provider-detail.ts) installs
 * the listener, so that a bundle that never installs one carries none of its code.
 */
export const modelFailures: { report?: (error: unknown) => void } = {};

/** What a model turn has produced so far, kept up to date as it comes: what a turn that fails still spent. */
export interface TurnTally {
  /** The estimate in tokens (`estimateTokens`) of its text and tool calls (name and arguments as JSON). */
  produced: number;
  /** The usage the model reported so far. */
  usage?: Usage;
}

/**
 * One model turn: streamed when the run is streamed to its caller and the model can stream
 * (each text delta emitted as it comes), otherwise generated and emitted as one delta. Whatever
 * the model throws, or a turn of the wrong shape, becomes `AgentError('MODEL_ERROR')`; an abort
 * stays the signal's reason. `usage`: what the turn reported (several usage deltas add up).
 * `tally` follows what the turn produced and reported, also when it then fails.
 */
export async function modelTurn(
  model: Model,
  request: ModelRequest,
  emit: (event: RunEvent) => void,
  streaming: boolean,
  tally: TurnTally = { produced: 0 },
): Promise<{ text: string; toolCalls: ToolCall[]; usage?: Usage }> {
  let text = '';
  const toolCalls: ToolCall[] = [];
  let usage: Usage | undefined;
  const addText = (delta: unknown) => {
    if (typeof delta !== 'string') throw returned('text that is not a string');
    if (delta === '') return;
    text += delta;
    tally.produced += estimateTokens(delta);
    emit({ type: 'text-delta', text: delta });
  };
  const addCall = (call: unknown) => {
    const { id, name } = (call ?? {}) as Partial<ToolCall>;
    if (
      typeof id !== 'string' ||
      id === '' ||
      typeof name !== 'string' ||
      name === '' ||
      toolCalls.some((c) => c.id === id)
    ) {
      throw returned('a tool call without a unique id and a name');
    }
    const copy: ToolCall = { id, name, arguments: structuredClone((call as ToolCall).arguments) };
    toolCalls.push(copy);
    tally.produced += estimateTokens(name) + estimateTokens(JSON.stringify(copy.arguments) ?? '');
    emit({ type: 'tool-call', call: structuredClone(copy) });
  };
  const reportUsage = (reported: unknown) => {
    const { inputTokens, outputTokens } = (reported ?? {}) as Partial<Usage>;
    if (!isCount(inputTokens) || !isCount(outputTokens))
      throw modelError('the model reported usage that is not { inputTokens, outputTokens } token counts');
    tally.usage = usage = addUsage(usage, { inputTokens, outputTokens });
  };
  try {
    if (streaming && typeof model.stream === 'function') {
      for await (const delta of model.stream(request)) {
        if (delta?.type === 'text') addText(delta.text);
        else if (delta?.type === 'tool-call') addCall(delta.call);
        else if (delta?.type === 'usage') reportUsage(delta.usage);
        else throw modelError('the model streamed an unknown delta');
      }
    } else {
      const turn: ModelTurn = await model.generate(request);
      if (typeof turn !== 'object' || turn === null) throw returned('no turn');
      if (turn.text !== undefined) addText(turn.text);
      if (turn.toolCalls !== undefined && !Array.isArray(turn.toolCalls))
        throw returned('tool calls that are not a list');
      for (const call of turn.toolCalls ?? []) addCall(call);
      if (turn.usage !== undefined) reportUsage(turn.usage);
    }
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason;
    // What the provider said goes to agentward dev's terminal (design §31), never into the answer.
    modelFailures.report?.(error);
    if (error instanceof AgentError && error.code === 'MODEL_ERROR') throw error;
    throw modelError('the model failed', { cause: error });
  }
  return { text, toolCalls, usage };
}

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/**
 * A tool call read off a provider's wire: `args` as the JSON text the provider sent (`''` is
 * `{}`), kept as text when it is not JSON, so the call fails as a recorded tool error the model
 * can correct; a call without an id gets `call_<index>`.
 */
export function wireToolCall(id: unknown, name: unknown, args: unknown, index: number): ToolCall {
  if (!isNonEmptyString(name)) throw returned('a tool call without a name');
  let parsed: unknown = args ?? {};
  if (typeof args === 'string') {
    try {
      parsed = args.trim() === '' ? {} : JSON.parse(args);
    } catch {
      parsed = args;
    }
  }
  return { id: isNonEmptyString(id) ? id : `call_${index}`, name, arguments: parsed };
}

/** Usage from the two counts a provider reported; `undefined` when neither is a number (one not reported counts 0). */
export function reportedUsage(input: unknown, output: unknown): Usage | undefined {
  if (typeof input !== 'number' && typeof output !== 'number') return undefined;
  return { inputTokens: typeof input === 'number' ? input : 0, outputTokens: typeof output === 'number' ? output : 0 };
}

/** Two usages added up (`total` absent: `usage` alone, as a new object). */
export const addUsage = (total: Usage | undefined, usage: Usage): Usage =>
  total === undefined
    ? { ...usage }
    : { inputTokens: total.inputTokens + usage.inputTokens, outputTokens: total.outputTokens + usage.outputTokens };

/**
 * A model turn's input estimate in tokens (design §25, `limits.tokens`): `estimateTokens` of what
 * the model is sent (instructions, messages with their tool calls, tool specs). `toolsTokens`: the
 * tool specs' estimate, when the caller already has it (a run's tools are the same every turn).
 */
export function turnEstimate(request: ModelRequest, toolsTokens = toolSpecsEstimate(request)): number {
  let tokens = estimateTokens(request.instructions) + toolsTokens;
  for (const message of request.messages) {
    tokens += estimateTokens(message.content);
    if (message.role === 'assistant' && message.toolCalls !== undefined)
      tokens += estimateTokens(JSON.stringify(message.toolCalls));
  }
  return tokens;
}

/** The estimate of a turn's tool specs, as the model is sent them (JSON). */
export const toolSpecsEstimate = (request: ModelRequest): number => estimateTokens(JSON.stringify(request.tools));

/** What a turn spent: what the model reported, else its input estimate plus the estimate of what it produced. */
export const turnSpent = (tally: TurnTally, input: number): number =>
  tally.usage === undefined ? input + tally.produced : tally.usage.inputTokens + tally.usage.outputTokens;
