// @ai-sdk/openai's responses model (openai.responses(), POST /v1/responses) against a local server speaking its wire.
import { createOpenAI } from '@ai-sdk/openai';
import { API_KEY, providerScenarios, sse, type Tokens, type Wire } from './helpers/ai-sdk-wire.ts';

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
const functionCall = (callId: string, name: string, args: string, status = 'completed') => ({ type: 'function_call', id: 'fc_1', call_id: callId, name, arguments: args, status });

/** The events of one streamed response, named and numbered as OpenAI sends them. */
function events(items: Record<string, unknown>[], tokens: Tokens, output: unknown[]): string[] {
  const all = [{ type: 'response.created', response: response('in_progress', []) }, { type: 'response.in_progress', response: response('in_progress', []) }, ...items, { type: 'response.completed', response: response('completed', output, tokens) }];
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
      sse: events([
        { type: 'response.output_item.added', output_index: 0, item: message('', 'in_progress') },
        { type: 'response.content_part.added', ...at, part: { type: 'output_text', text: '', annotations: [] } },
        ...pieces.map((delta) => ({ type: 'response.output_text.delta', ...at, delta, logprobs: [] })),
        { type: 'response.output_text.done', ...at, text, logprobs: [] },
        { type: 'response.content_part.done', ...at, part: { type: 'output_text', text, annotations: [] } },
        { type: 'response.output_item.done', output_index: 0, item: message(text) },
      ], tokens, [message(text)]),
      gate: 5,
    };
  },
  streamToolCall: (id, name, pieces, tokens) => {
    const args = pieces.join('');
    return {
      sse: events([
        { type: 'response.output_item.added', output_index: 0, item: functionCall(id, name, '', 'in_progress') },
        ...pieces.map((delta) => ({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, delta })),
        { type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 0, arguments: args },
        { type: 'response.output_item.done', output_index: 0, item: functionCall(id, name, args) },
      ], tokens, [functionCall(id, name, args)]),
    };
  },
  error: (status, secret) => ({ status, json: { error: { message: `Incorrect API key provided: ${secret}`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } }),
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

providerScenarios(wire);
