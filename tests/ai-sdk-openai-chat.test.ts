// @ai-sdk/openai's chat model (openai.chat(), POST /v1/chat/completions) against a local server speaking its wire.
import { createOpenAI } from '@ai-sdk/openai';
import { API_KEY, providerScenarios, sse, type Tokens, type Wire } from './helpers/ai-sdk-wire.ts';

const MODEL = 'gpt-4o-mini';
const usage = ([prompt, completion]: Tokens) => ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });
const completion = (message: unknown, finish: string, tokens: Tokens) => ({
  json: { id: 'chatcmpl-1', object: 'chat.completion', created: 1767225600, model: MODEL, choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage: usage(tokens) },
});
/** A chunk as OpenAI streams it with `stream_options.include_usage`: `usage: null` until the last chunk, which has no choices. */
const chunk = (delta: unknown, finish: string | null = null) =>
  sse({ id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 1767225600, model: MODEL, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null });
const usageChunk = (tokens: Tokens) => sse({ id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 1767225600, model: MODEL, choices: [], usage: usage(tokens) });

const wire: Wire = {
  name: 'openai.chat',
  model: (baseURL) => createOpenAI({ baseURL, apiKey: API_KEY }).chat(MODEL),
  path: '/v1/chat/completions',
  key: ['authorization', `Bearer ${API_KEY}`],
  text: (text, tokens) => completion({ role: 'assistant', content: text, refusal: null }, 'stop', tokens),
  toolCall: (id, name, args, tokens) =>
    completion({ role: 'assistant', content: null, refusal: null, tool_calls: [{ id, type: 'function', function: { name, arguments: args } }] }, 'tool_calls', tokens),
  streamText: (pieces, tokens) => ({
    sse: [chunk({ role: 'assistant', content: '', refusal: null }), ...pieces.map((content) => chunk({ content })), chunk({}, 'stop'), usageChunk(tokens), sse('[DONE]')],
    gate: 2,
  }),
  streamToolCall: (id, name, pieces, tokens) => ({
    sse: [
      chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }], refusal: null }),
      ...pieces.map((part) => chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] })),
      chunk({}, 'tool_calls'),
      usageChunk(tokens),
      sse('[DONE]'),
    ],
  }),
  error: (status, secret) => ({ status, json: { error: { message: `Incorrect API key provided: ${secret}`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } }),
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

providerScenarios(wire);
