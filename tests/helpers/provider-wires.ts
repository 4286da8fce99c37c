// The wires of the real AI SDK providers as a local server speaks them (design §21): what
// `@ai-sdk/openai` (chat completions, responses) and `@ai-sdk/anthropic` (messages) send and
// parse, written from the providers' own parsers (their zod schemas in node_modules) and their
// API documentation. Each wire is built in a scope of its own.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { API_KEY, sse, type Tokens, type Wire } from './ai-sdk-wire.ts';

/** `openai.chat()`: POST /v1/chat/completions. */
export const openAIChatWire: Wire = (() => {
  const MODEL = 'gpt-4o-mini';
  const usage = ([prompt, completion]: Tokens) => ({
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  });
  const completion = (message: unknown, finish: string, tokens: Tokens) => ({
    json: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1767225600,
      model: MODEL,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
      usage: usage(tokens),
    },
  });
  /** A chunk as OpenAI streams it with `stream_options.include_usage`: `usage: null` until the last chunk, which has no choices. */
  const chunk = (delta: unknown, finish: string | null = null) =>
    sse({
      id: 'chatcmpl-2',
      object: 'chat.completion.chunk',
      created: 1767225600,
      model: MODEL,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      usage: null,
    });
  const usageChunk = (tokens: Tokens) =>
    sse({
      id: 'chatcmpl-2',
      object: 'chat.completion.chunk',
      created: 1767225600,
      model: MODEL,
      choices: [],
      usage: usage(tokens),
    });

  const wire: Wire = {
    name: 'openai.chat',
    model: (baseURL) => createOpenAI({ baseURL, apiKey: API_KEY }).chat(MODEL),
    path: '/v1/chat/completions',
    key: ['authorization', `Bearer ${API_KEY}`],
    text: (text, tokens) => completion({ role: 'assistant', content: text, refusal: null }, 'stop', tokens),
    toolCall: (id, name, args, tokens) =>
      completion(
        {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [{ id, type: 'function', function: { name, arguments: args } }],
        },
        'tool_calls',
        tokens,
      ),
    streamText: (pieces, tokens) => ({
      sse: [
        chunk({ role: 'assistant', content: '', refusal: null }),
        ...pieces.map((content) => chunk({ content })),
        chunk({}, 'stop'),
        usageChunk(tokens),
        sse('[DONE]'),
      ],
      gate: 2,
    }),
    streamToolCall: (id, name, pieces, tokens) => ({
      sse: [
        chunk({
          role: 'assistant',
          content: null,
          tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }],
          refusal: null,
        }),
        ...pieces.map((part) => chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] })),
        chunk({}, 'tool_calls'),
        usageChunk(tokens),
        sse('[DONE]'),
      ],
    }),
    error: (status, secret) => ({
      status,
      json: {
        error: {
          message: `Incorrect API key provided: ${secret}`,
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      },
    }),
    read: (body) => {
      const messages = body.messages as { role: string; content: unknown }[];
      return {
        system: messages.find((m) => m.role === 'system')?.content,
        tools: ((body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name),
        toolOutput: messages.findLast((m) => m.role === 'tool')?.content as string | undefined,
        stream: body.stream === true && (body.stream_options as { include_usage?: boolean })?.include_usage === true,
        settings: { temperature: body.temperature, max_tokens: body.max_tokens, top_p: body.top_p, stop: body.stop },
      };
    },
    settings: { temperature: 0.25, max_tokens: 321, top_p: 0.5, stop: ['END'] },
  };
  return wire;
})();

/** `openai.responses()`: POST /v1/responses. */
export const openAIResponsesWire: Wire = (() => {
  const MODEL = 'gpt-4o-mini';
  const usage = ([input, output]: Tokens) => ({
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  });
  const response = (status: string, output: unknown[], tokens?: Tokens) => ({
    id: 'resp_1',
    object: 'response',
    created_at: 1767225600,
    status,
    error: null,
    incomplete_details: null,
    model: MODEL,
    output,
    parallel_tool_calls: true,
    temperature: 1,
    top_p: 1,
    usage: tokens === undefined ? null : usage(tokens),
  });
  const message = (text: string, status = 'completed') => ({
    type: 'message',
    id: 'msg_1',
    status,
    role: 'assistant',
    content: status === 'completed' ? [{ type: 'output_text', text, annotations: [], logprobs: [] }] : [],
  });
  const functionCall = (callId: string, name: string, args: string, status = 'completed') => ({
    type: 'function_call',
    id: 'fc_1',
    call_id: callId,
    name,
    arguments: args,
    status,
  });

  /** The events of one streamed response, named and numbered as OpenAI sends them. */
  function events(items: Record<string, unknown>[], tokens: Tokens, output: unknown[]): string[] {
    const all = [
      { type: 'response.created', response: response('in_progress', []) },
      { type: 'response.in_progress', response: response('in_progress', []) },
      ...items,
      { type: 'response.completed', response: response('completed', output, tokens) },
    ];
    return all.map((event, sequence) => sse({ ...event, sequence_number: sequence }, event.type as string));
  }

  const wire: Wire = {
    name: 'openai.responses',
    model: (baseURL) => createOpenAI({ baseURL, apiKey: API_KEY }).responses(MODEL),
    path: '/v1/responses',
    key: ['authorization', `Bearer ${API_KEY}`],
    text: (text, tokens) => ({ json: response('completed', [message(text)], tokens) }),
    toolCall: (id, name, args, tokens) => ({ json: response('completed', [functionCall(id, name, args)], tokens) }),
    streamText: (pieces, tokens) => {
      const text = pieces.join('');
      const at = { item_id: 'msg_1', output_index: 0, content_index: 0 };
      return {
        sse: events(
          [
            { type: 'response.output_item.added', output_index: 0, item: message('', 'in_progress') },
            { type: 'response.content_part.added', ...at, part: { type: 'output_text', text: '', annotations: [] } },
            ...pieces.map((delta) => ({ type: 'response.output_text.delta', ...at, delta, logprobs: [] })),
            { type: 'response.output_text.done', ...at, text, logprobs: [] },
            { type: 'response.content_part.done', ...at, part: { type: 'output_text', text, annotations: [] } },
            { type: 'response.output_item.done', output_index: 0, item: message(text) },
          ],
          tokens,
          [message(text)],
        ),
        gate: 5,
      };
    },
    streamToolCall: (id, name, pieces, tokens) => {
      const args = pieces.join('');
      return {
        sse: events(
          [
            { type: 'response.output_item.added', output_index: 0, item: functionCall(id, name, '', 'in_progress') },
            ...pieces.map((delta) => ({
              type: 'response.function_call_arguments.delta',
              item_id: 'fc_1',
              output_index: 0,
              delta,
            })),
            { type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 0, arguments: args },
            { type: 'response.output_item.done', output_index: 0, item: functionCall(id, name, args) },
          ],
          tokens,
          [functionCall(id, name, args)],
        ),
      };
    },
    error: (status, secret) => ({
      status,
      json: {
        error: {
          message: `Incorrect API key provided: ${secret}`,
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      },
    }),
    read: (body) => {
      const input = body.input as { role?: string; type?: string; content?: unknown; output?: unknown }[];
      return {
        system: input.find((item) => item.role === 'system' || item.role === 'developer')?.content,
        tools: ((body.tools ?? []) as { name: string }[]).map((t) => t.name),
        toolOutput: input.findLast((item) => item.type === 'function_call_output')?.output as string | undefined,
        stream: body.stream === true,
        settings: { temperature: body.temperature, max_output_tokens: body.max_output_tokens, top_p: body.top_p },
      };
    },
    // The Responses API has no stop sequences: the provider leaves them out (with a warning it keeps to itself).
    settings: { temperature: 0.25, max_output_tokens: 321, top_p: 0.5 },
  };
  return wire;
})();

/** `anthropic()`: POST /v1/messages. */
export const anthropicWire: Wire = (() => {
  const MODEL = 'claude-sonnet-4-5';
  const message = (content: unknown[], stop: string, [input, output]: Tokens) => ({
    json: {
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: { input_tokens: input, output_tokens: output },
    },
  });

  /** A streamed message as Anthropic sends it: input tokens in message_start, the output count (cumulative) in message_delta. */
  function stream(blocks: { start: unknown; deltas: unknown[] }[], stop: string, [input, output]: Tokens): string[] {
    const events: Record<string, unknown>[] = [
      {
        type: 'message_start',
        message: {
          id: 'msg_02',
          type: 'message',
          role: 'assistant',
          model: MODEL,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: input, output_tokens: 1 },
        },
      },
      { type: 'ping' },
    ];
    blocks.forEach(({ start, deltas }, index) => {
      events.push({ type: 'content_block_start', index, content_block: start });
      for (const delta of deltas) events.push({ type: 'content_block_delta', index, delta });
      events.push({ type: 'content_block_stop', index });
    });
    events.push(
      { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: output } },
      { type: 'message_stop' },
    );
    return events.map((event) => sse(event, event.type as string));
  }

  const wire: Wire = {
    name: 'anthropic',
    model: (baseURL) => createAnthropic({ baseURL, apiKey: API_KEY })(MODEL),
    path: '/v1/messages',
    key: ['x-api-key', API_KEY],
    text: (text, tokens) => message([{ type: 'text', text }], 'end_turn', tokens),
    toolCall: (id, name, args, tokens) =>
      message([{ type: 'tool_use', id, name, input: JSON.parse(args) }], 'tool_use', tokens),
    streamText: (pieces, tokens) => ({
      sse: stream(
        [{ start: { type: 'text', text: '' }, deltas: pieces.map((text) => ({ type: 'text_delta', text })) }],
        'end_turn',
        tokens,
      ),
      gate: 4,
    }),
    streamToolCall: (id, name, pieces, tokens) => ({
      sse: stream(
        [
          {
            start: { type: 'tool_use', id, name, input: {} },
            deltas: ['', ...pieces].map((partial_json) => ({ type: 'input_json_delta', partial_json })),
          },
        ],
        'tool_use',
        tokens,
      ),
    }),
    error: (status, secret) => ({
      status,
      json: {
        type: 'error',
        error: {
          type: status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : 'api_error',
          message: `invalid x-api-key: ${secret}`,
        },
      },
    }),
    read: (body) => {
      const messages = body.messages as { role: string; content: { type: string; content?: unknown }[] }[];
      const results = messages.flatMap((m) => m.content).filter((block) => block.type === 'tool_result');
      const output = results.at(-1)?.content;
      return {
        system: body.system,
        tools: ((body.tools ?? []) as { name: string }[]).map((t) => t.name),
        toolOutput: Array.isArray(output)
          ? (output as { text: string }[]).map((part) => part.text).join('')
          : (output as string | undefined),
        stream: body.stream === true,
        settings: {
          temperature: body.temperature,
          max_tokens: body.max_tokens,
          top_p: body.top_p,
          stop_sequences: body.stop_sequences,
        },
      };
    },
    // Anthropic takes temperature or top_p, not both: the provider drops top_p when temperature is set.
    settings: { temperature: 0.25, max_tokens: 321, top_p: undefined, stop_sequences: ['END'] },
  };
  return wire;
})();
