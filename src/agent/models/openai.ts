import { checkOptionNames } from '../../auth/options.ts';
import { AgentError } from '../errors.ts';
import type { Message, Model, ModelDelta, ModelRequest, ToolCall, ToolSpec } from '../types.ts';

export interface OpenAICompatibleOptions {
  /** The API root, e.g. `https://api.openai.com/v1`; requests go to `${baseURL}/chat/completions`. */
  baseURL: string;
  /** Sent as `Authorization: Bearer <apiKey>`; omit it for a local server that takes none. Never put into an error. */
  apiKey?: string;
  model: string;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
}

/**
 * A model behind any OpenAI-compatible chat-completions API, over `fetch`: tool calls as
 * function tools, streaming over server-sent events. Failures are `AgentError('MODEL_ERROR')`
 * naming the HTTP status only: a provider's error body can quote the key, so it is never read.
 * @example
 * const model = openAICompatible({ baseURL: 'https://api.openai.com/v1', apiKey: env.OPENAI_API_KEY, model: 'gpt-4o-mini' });
 */
export function openAICompatible(options: OpenAICompatibleOptions): Model {
  if (typeof options !== 'object' || options === null) throw new AgentError('INVALID_AGENT', 'openAICompatible(): options must be { baseURL, apiKey?, model, fetch? }');
  checkOptionNames('openAICompatible()', options, ['baseURL', 'apiKey', 'model', 'fetch'], (message) => new AgentError('INVALID_AGENT', message));
  const { baseURL, apiKey, model, fetch: fetchImpl = globalThis.fetch } = options;
  let url: URL;
  try {
    url = new URL(`${String(baseURL).replace(/\/+$/, '')}/chat/completions`);
  } catch {
    throw new AgentError('INVALID_AGENT', 'openAICompatible(): baseURL must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new AgentError('INVALID_AGENT', 'openAICompatible(): baseURL must be an absolute http(s) URL');
  if (typeof model !== 'string' || model === '') throw new AgentError('INVALID_AGENT', 'openAICompatible(): model must be a non-empty string');
  if (apiKey !== undefined && typeof apiKey !== 'string') throw new AgentError('INVALID_AGENT', 'openAICompatible(): apiKey must be a string');
  if (typeof fetchImpl !== 'function') throw new AgentError('INVALID_AGENT', 'openAICompatible(): fetch must be a function');

  async function post(request: ModelRequest, stream: boolean): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const body: Record<string, unknown> = { model, messages: chatMessages(request) };
    if (request.tools.length > 0) body.tools = request.tools.map(functionTool);
    if (stream) body.stream = true;
    let response: Response;
    try {
      response = await fetchImpl(url, { method: 'POST', headers, body: JSON.stringify(body), signal: request.signal });
    } catch (error) {
      if (request.signal?.aborted) throw request.signal.reason;
      throw new AgentError('MODEL_ERROR', 'the model request failed', { cause: error });
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new AgentError('MODEL_ERROR', `the model answered with HTTP ${response.status}`);
    }
    return response;
  }

  return {
    async generate(request) {
      const response = await post(request, false);
      let body: unknown;
      try {
        body = await response.json();
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        throw new AgentError('MODEL_ERROR', 'the model answered with a body that is not JSON', { cause: error });
      }
      const message = (body as { choices?: { message?: unknown }[] } | null)?.choices?.[0]?.message;
      if (typeof message !== 'object' || message === null) throw new AgentError('MODEL_ERROR', 'the model answered without choices[0].message');
      const { content, tool_calls: calls } = message as { content?: unknown; tool_calls?: unknown };
      if (calls !== undefined && calls !== null && !Array.isArray(calls)) throw new AgentError('MODEL_ERROR', 'the model answered with tool_calls that are not a list');
      const toolCalls = ((calls ?? []) as WireCall[]).map((call, index) => toolCall(call.id, call.function?.name, call.function?.arguments, index));
      return { text: typeof content === 'string' ? content : '', toolCalls };
    },

    async *stream(request): AsyncIterable<ModelDelta> {
      const response = await post(request, true);
      if (response.body === null) throw new AgentError('MODEL_ERROR', 'the model answered without a body');
      const calls = new Map<number, { id: string; name: string; arguments: string }>();
      let finished = false;
      try {
        for await (const data of serverSentData(response.body)) {
          if (data === '[DONE]') {
            finished = true;
            break;
          }
          let chunk: WireChunk;
          try {
            chunk = JSON.parse(data) as WireChunk;
          } catch {
            throw new AgentError('MODEL_ERROR', 'the model streamed an event that is not JSON');
          }
          if (chunk?.error !== undefined) throw new AgentError('MODEL_ERROR', 'the model reported an error in its stream');
          const choice = chunk?.choices?.[0];
          if (typeof choice?.finish_reason === 'string') finished = true;
          const delta = choice?.delta;
          if (typeof delta?.content === 'string' && delta.content !== '') yield { type: 'text', text: delta.content };
          for (const part of Array.isArray(delta?.tool_calls) ? delta.tool_calls : []) {
            const index = typeof part?.index === 'number' ? part.index : calls.size;
            const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
            if (typeof part?.id === 'string' && call.id === '') call.id = part.id;
            if (typeof part?.function?.name === 'string' && call.name === '') call.name = part.function.name;
            if (typeof part?.function?.arguments === 'string') call.arguments += part.function.arguments;
            calls.set(index, call);
          }
        }
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        if (error instanceof AgentError) throw error;
        throw new AgentError('MODEL_ERROR', 'the model stream failed', { cause: error });
      }
      // A stream cut before its end would otherwise pass for a complete (shorter) answer.
      if (!finished) throw new AgentError('MODEL_ERROR', 'the model stream ended before it finished');
      for (const [index, call] of [...calls].sort(([a], [b]) => a - b)) {
        yield { type: 'tool-call', call: toolCall(call.id, call.name, call.arguments, index) };
      }
    },
  };
}

interface WireCall { id?: unknown; function?: { name?: unknown; arguments?: unknown } }
interface WireChunk {
  error?: unknown;
  choices?: { finish_reason?: unknown; delta?: { content?: unknown; tool_calls?: (WireCall & { index?: unknown })[] } }[];
}

function toolCall(id: unknown, name: unknown, args: unknown, index: number): ToolCall {
  if (typeof name !== 'string' || name === '') throw new AgentError('MODEL_ERROR', 'the model returned a tool call without a name');
  let parsed: unknown = args ?? {};
  if (typeof args === 'string') {
    try {
      parsed = args.trim() === '' ? {} : JSON.parse(args);
    } catch {
      // Kept as text: the tool call then fails as a recorded tool error the model can correct.
      parsed = args;
    }
  }
  return { id: typeof id === 'string' && id !== '' ? id : `call_${index}`, name, arguments: parsed };
}

function chatMessages({ instructions, messages }: ModelRequest): unknown[] {
  const wire: unknown[] = instructions === '' ? [] : [{ role: 'system', content: instructions }];
  for (const message of messages) wire.push(chatMessage(message));
  return wire;
}

function chatMessage(message: Message): unknown {
  if (message.role === 'tool') return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  if (message.role === 'user' || !message.toolCalls?.length) return { role: message.role, content: message.content };
  return {
    role: 'assistant',
    content: message.content === '' ? null : message.content,
    tool_calls: message.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}) },
    })),
  };
}

const functionTool = ({ name, description, parameters }: ToolSpec) => ({ type: 'function', function: { name, description, parameters } });

/** The `data` of each server-sent event of a body (lines joined with `\n`). */
async function* serverSentData(body: ReadableStream<Uint8Array>): AsyncIterable<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
        const line = buffer.slice(0, end).replace(/\r$/, '');
        buffer = buffer.slice(end + 1);
        if (line === '') {
          if (data.length > 0) yield data.join('\n');
          data = [];
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        }
      }
    }
    if (data.length > 0) yield data.join('\n');
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
