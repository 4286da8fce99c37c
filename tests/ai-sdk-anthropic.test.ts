// @ai-sdk/anthropic's messages model (anthropic(), POST /v1/messages) against a local server speaking its wire.
import { createAnthropic } from '@ai-sdk/anthropic';
import { API_KEY, providerScenarios, sse, type Tokens, type Wire } from './helpers/ai-sdk-wire.ts';

const MODEL = 'claude-sonnet-4-5';
const message = (content: unknown[], stop: string, [input, output]: Tokens) => ({
  json: { id: 'msg_01', type: 'message', role: 'assistant', model: MODEL, content, stop_reason: stop, stop_sequence: null, usage: { input_tokens: input, output_tokens: output } },
});

/** A streamed message as Anthropic sends it: input tokens in message_start, the output count (cumulative) in message_delta. */
function stream(blocks: { start: unknown; deltas: unknown[] }[], stop: string, [input, output]: Tokens): string[] {
  const events: Record<string, unknown>[] = [
    { type: 'message_start', message: { id: 'msg_02', type: 'message', role: 'assistant', model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: input, output_tokens: 1 } } },
    { type: 'ping' },
  ];
  blocks.forEach(({ start, deltas }, index) => {
    events.push({ type: 'content_block_start', index, content_block: start });
    for (const delta of deltas) events.push({ type: 'content_block_delta', index, delta });
    events.push({ type: 'content_block_stop', index });
  });
  events.push({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: output } }, { type: 'message_stop' });
  return events.map((event) => sse(event, event.type as string));
}

const wire: Wire = {
  name: 'anthropic',
  model: (baseURL) => createAnthropic({ baseURL, apiKey: API_KEY })(MODEL),
  path: '/v1/messages',
  key: ['x-api-key', API_KEY],
  text: (text, tokens) => message([{ type: 'text', text }], 'end_turn', tokens),
  toolCall: (id, name, args, tokens) => message([{ type: 'tool_use', id, name, input: JSON.parse(args) }], 'tool_use', tokens),
  streamText: (pieces, tokens) => ({
    sse: stream([{ start: { type: 'text', text: '' }, deltas: pieces.map((text) => ({ type: 'text_delta', text })) }], 'end_turn', tokens),
    gate: 4,
  }),
  streamToolCall: (id, name, pieces, tokens) => ({
    sse: stream([{ start: { type: 'tool_use', id, name, input: {} }, deltas: ['', ...pieces].map((partial_json) => ({ type: 'input_json_delta', partial_json })) }], 'tool_use', tokens),
  }),
  error: (status, secret) => ({
    status,
    json: { type: 'error', error: { type: status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : 'api_error', message: `invalid x-api-key: ${secret}` } },
  }),
  read: (body) => {
    const messages = body.messages as { role: string; content: { type: string; content?: unknown }[] }[];
    const results = messages.flatMap((m) => m.content).filter((block) => block.type === 'tool_result');
    const output = results.at(-1)?.content;
    return {
      system: body.system,
      tools: ((body.tools ?? []) as { name: string }[]).map((t) => t.name),
      toolOutput: Array.isArray(output) ? (output as { text: string }[]).map((part) => part.text).join('') : (output as string | undefined),
      stream: body.stream === true,
      settings: { temperature: body.temperature, max_tokens: body.max_tokens, top_p: body.top_p, stop_sequences: body.stop_sequences },
    };
  },
  // Anthropic takes temperature or top_p, not both: the provider drops top_p when temperature is set.
  settings: { temperature: 0.25, max_tokens: 321, top_p: undefined, stop_sequences: ['END'] },
};

providerScenarios(wire);
