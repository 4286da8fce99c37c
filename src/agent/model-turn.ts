import { AgentError } from './errors.ts';
import type { Model, ModelRequest, ModelTurn, RunEvent, ToolCall } from './types.ts';

/**
 * One model turn: streamed when the model can stream (each text delta emitted as it comes),
 * otherwise generated and emitted as one delta. Whatever the model throws, or a turn of the
 * wrong shape, becomes `AgentError('MODEL_ERROR')`; an abort stays the signal's reason.
 */
export async function modelTurn(model: Model, request: ModelRequest, emit: (event: RunEvent) => void): Promise<{ text: string; toolCalls: ToolCall[] }> {
  let text = '';
  const toolCalls: ToolCall[] = [];
  const addText = (delta: unknown) => {
    if (typeof delta !== 'string') throw new AgentError('MODEL_ERROR', 'the model returned text that is not a string');
    if (delta === '') return;
    text += delta;
    emit({ type: 'text-delta', text: delta });
  };
  const addCall = (call: unknown) => {
    const { id, name } = (call ?? {}) as Partial<ToolCall>;
    if (typeof id !== 'string' || id === '' || typeof name !== 'string' || name === '' || toolCalls.some((c) => c.id === id)) {
      throw new AgentError('MODEL_ERROR', 'the model returned a tool call without a unique id and a name');
    }
    const copy: ToolCall = { id, name, arguments: structuredClone((call as ToolCall).arguments) };
    toolCalls.push(copy);
    emit({ type: 'tool-call', call: structuredClone(copy) });
  };
  try {
    if (typeof model.stream === 'function') {
      for await (const delta of model.stream(request)) {
        if (delta?.type === 'text') addText(delta.text);
        else if (delta?.type === 'tool-call') addCall(delta.call);
        else throw new AgentError('MODEL_ERROR', 'the model streamed an unknown delta');
      }
    } else {
      const turn: ModelTurn = await model.generate(request);
      if (typeof turn !== 'object' || turn === null) throw new AgentError('MODEL_ERROR', 'the model returned no turn');
      if (turn.text !== undefined) addText(turn.text);
      if (turn.toolCalls !== undefined && !Array.isArray(turn.toolCalls)) throw new AgentError('MODEL_ERROR', 'the model returned tool calls that are not a list');
      for (const call of turn.toolCalls ?? []) addCall(call);
    }
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason;
    if (error instanceof AgentError && error.code === 'MODEL_ERROR') throw error;
    throw new AgentError('MODEL_ERROR', 'the model failed', { cause: error });
  }
  return { text, toolCalls };
}
