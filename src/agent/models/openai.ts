import { checkOptionNames, kindOf } from '../../auth/internal.ts';
import { AgentError, configError, modelError } from '../errors.ts';
import { reportedUsage, wireToolCall as toolCall } from '../model-turn.ts';
import { detailOfBody, withProviderDetail } from '../provider-detail.ts';
import { checkHeaders } from '../settings.ts';
import type { Message, Model, ModelDelta, ModelRequest, ToolSpec, Usage } from '../types.ts';

export interface OpenAICompatibleOptions {
  /** The API root, e.g. `https://api.openai.com/v1`; requests go to `${baseURL}/chat/completions`. */
  baseURL: string;
  /** Sent as `Authorization: Bearer <apiKey>`; omit it for a local server that takes none. Never put into an error. */
  apiKey?: string;
  model: string;
  /** Extra HTTP headers of every request (the agent's `settings.headers` are added over them). */
  headers?: Record<string, string>;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
}

/**
 * A model behind any OpenAI-compatible chat-completions API, over `fetch`: tool calls as
 * function tools, streaming over server-sent events. Failures are `AgentError('MODEL_ERROR')`
 * naming the HTTP status only; what the provider's error body says (its type and message, the
 * key and header values redacted) is kept off the error's message for `agentward dev` to print
 * (design §31). A `baseURL` with a user name or password is refused: credentials go in `apiKey`
 * or `headers`, never in a URL that logs and errors print.
 * The agent's settings go on the wire as `temperature`, `max_tokens` (`maxOutputTokens`: the
 * field every OpenAI-compatible server takes; OpenAI's reasoning models want
 * `max_completion_tokens`, which the AI SDK's `@ai-sdk/openai` sends), `top_p` and `stop`;
 * `settings.headers` as headers. Token usage is read from `usage` (asked for with
 * `stream_options: { include_usage: true }` when streaming).
 * @example
 * const model = openAICompatible({ baseURL: 'https://api.openai.com/v1', apiKey: env.OPENAI_API_KEY, model: 'gpt-4o-mini' });
 */
export function openAICompatible(options: OpenAICompatibleOptions): Model {
  const invalid = (what: string) => configError(`openAICompatible(): ${what}`);
  if (typeof options !== 'object' || options === null)
    throw invalid('options must be { baseURL, apiKey?, model, headers?, fetch? }');
  checkOptionNames('openAICompatible()', options, ['baseURL', 'apiKey', 'model', 'headers', 'fetch']);
  const { baseURL, apiKey, model, fetch: fetchImpl = globalThis.fetch } = options;
  const ownHeaders =
    options.headers === undefined
      ? undefined
      : checkHeaders(options.headers, 'openAICompatible(): headers', configError);
  let url: URL;
  try {
    url = new URL(`${String(baseURL).replace(/\/+$/, '')}/chat/completions`);
  } catch {
    throw invalid('baseURL must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('baseURL must be an absolute http(s) URL');
  // fetch refuses such a URL with an error that quotes it, password and all (design §26).
  if (url.username !== '' || url.password !== '')
    throw invalid('baseURL holds a user name or password; put credentials in apiKey or headers');
  if (typeof model !== 'string' || model === '')
    throw invalid(`model must be a non-empty string; got ${kindOf(model)}`);
  if (apiKey !== undefined && typeof apiKey !== 'string')
    throw invalid(`apiKey must be a string; got ${kindOf(apiKey)}`);
  if (typeof fetchImpl !== 'function') throw invalid('fetch must be a function');
  const provider = `${url.host} ${model}`;

  /** The values a provider's error must never be printed with: the key and every header value sent. */
  const secrets = ({ settings = {} }: ModelRequest) =>
    [apiKey ?? '', ...Object.values({ ...ownHeaders, ...settings.headers })].filter((value) => value !== '');

  async function post(request: ModelRequest, stream: boolean): Promise<Response> {
    const { settings = {} } = request;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
    };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    Object.assign(headers, ownHeaders, settings.headers);
    const body: Record<string, unknown> = { model, messages: chatMessages(request) };
    if (request.tools.length > 0) body.tools = request.tools.map(functionTool);
    if (settings.temperature !== undefined) body.temperature = settings.temperature;
    if (settings.maxOutputTokens !== undefined) body.max_tokens = settings.maxOutputTokens;
    if (settings.topP !== undefined) body.top_p = settings.topP;
    if (settings.stopSequences !== undefined) body.stop = settings.stopSequences;
    if (stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    let response: Response;
    try {
      response = await fetchImpl(url, { method: 'POST', headers, body: JSON.stringify(body), signal: request.signal });
    } catch (error) {
      if (request.signal?.aborted) throw request.signal.reason;
      throw modelError('the model request failed', { cause: error });
    }
    if (!response.ok) {
      const failed = modelError(`the model answered with HTTP ${response.status}`);
      const said = detailOfBody(await boundedText(response));
      throw withProviderDetail(failed, { provider, status: response.status, ...said }, secrets(request));
    }
    return response;
  }

  return {
    // gen_ai.provider.name (design §28): only OpenAI's own API is `openai`; another server's is not known.
    ...(url.hostname === 'api.openai.com' && { provider: 'openai' }),
    modelId: model,
    async generate(request) {
      const response = await post(request, false);
      let body: unknown;
      try {
        body = await response.json();
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        throw modelError('the model answered with a body that is not JSON', { cause: error });
      }
      const message = (body as (WireChunk & { choices?: { message?: unknown }[] }) | null)?.choices?.[0]?.message;
      if (typeof message !== 'object' || message === null)
        throw modelError('the model answered without choices[0].message');
      const { content, tool_calls: calls } = message as { content?: unknown; tool_calls?: unknown };
      if (calls !== undefined && calls !== null && !Array.isArray(calls))
        throw modelError('the model answered with tool_calls that are not a list');
      const toolCalls = ((calls ?? []) as WireCall[]).map((call, index) =>
        toolCall(call.id, call.function?.name, call.function?.arguments, index),
      );
      const usage = usageOf((body as WireChunk).usage);
      return { text: typeof content === 'string' ? content : '', toolCalls, ...(usage && { usage }) };
    },

    async *stream(request): AsyncIterable<ModelDelta> {
      const response = await post(request, true);
      if (response.body === null) throw modelError('the model answered without a body');
      const calls = new Map<number, { id: string; name: string; arguments: string }>();
      let finished = false;
      let usage: Usage | undefined;
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
            throw modelError('the model streamed an event that is not JSON');
          }
          if (chunk?.error !== undefined) {
            const failed = modelError('the model reported an error in its stream');
            throw withProviderDetail(failed, { provider, ...detailOfBody(chunk) }, secrets(request));
          }
          // With include_usage, the last chunk before [DONE] carries the turn's usage (and no choices).
          usage = usageOf(chunk?.usage) ?? usage;
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
        throw modelError('the model stream failed', { cause: error });
      }
      // A stream cut before its end would otherwise pass for a complete (shorter) answer.
      if (!finished) throw modelError('the model stream ended before it finished');
      for (const [index, call] of [...calls].sort(([a], [b]) => a - b)) {
        yield { type: 'tool-call', call: toolCall(call.id, call.name, call.arguments, index) };
      }
      if (usage !== undefined) yield { type: 'usage', usage };
    },
  };
}

interface WireCall {
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}
interface WireChunk {
  error?: unknown;
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
  choices?: {
    finish_reason?: unknown;
    delta?: { content?: unknown; tool_calls?: (WireCall & { index?: unknown })[] };
  }[];
}

/** `usage` of a chat-completions answer or chunk; `undefined` when it has none. */
const usageOf = (usage: WireChunk['usage']) => reportedUsage(usage?.prompt_tokens, usage?.completion_tokens);

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
      function: {
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
      },
    })),
  };
}

const functionTool = ({ name, description, parameters }: ToolSpec) => ({
  type: 'function',
  function: { name, description, parameters },
});

/** The first 16 KiB of an error answer's body as text (a provider's error is short; a proxy's page may not be); `''` when unreadable. */
async function boundedText(response: Response, limit = 16_384): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < limit) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // What was read before the failure is kept.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return text.slice(0, limit);
}

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
