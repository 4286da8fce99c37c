import { markEchoModel } from '../echo-mark.ts';
import { refuseOptions } from '../options.ts';
import type { Message, Model, ModelDelta, ModelRequest, ModelTurn, ToolCall } from '../types.ts';

const TOOL_LINE = /^\/tool\s+(\S+)(?:\s+([\s\S]*))?$/;

/**
 * A deterministic model for demos and tests. It replies with the user's last message. Each
 * line `/tool NAME {json}` of that message calls tool NAME with those arguments (all calls
 * in one turn); after tool results it replies with a short text holding each tool's output.
 * `stream` yields the reply word by word. It takes no options: given any, it throws `AuthConfigError`.
 * @example
 * const agent = createAgent({ name: 'demo', model: echoModel() });
 * (await agent.send('hello')).text; // 'hello'
 */
export function echoModel(options?: Readonly<Record<string, never>>): Model {
  refuseOptions('echoModel()', options);
  const model: Model = {
    provider: 'agentward',
    modelId: 'echo',
    async generate(request) {
      return answer(request);
    },
    async *stream(request): AsyncIterable<ModelDelta> {
      const turn = answer(request);
      for (const word of (turn.text ?? '').match(/\S+\s*|\s+/g) ?? []) yield { type: 'text', text: word };
      for (const call of turn.toolCalls ?? []) yield { type: 'tool-call', call };
    },
  };
  markEchoModel(model);
  return model;
}

function answer({ messages }: ModelRequest): ModelTurn {
  const last = messages[messages.length - 1];
  if (last === undefined || last.role === 'assistant') return { text: '' };
  if (last.role === 'tool') return { text: describeToolResults(messages) };
  const lines = last.content.split('\n').map((line) => line.trim());
  if (!lines.some((line) => TOOL_LINE.test(line))) return { text: last.content };
  const toolCalls: ToolCall[] = [];
  for (const line of lines) {
    const match = TOOL_LINE.exec(line);
    if (match === null) continue;
    const json = match[2]?.trim() || '{}';
    let args: unknown;
    try {
      args = JSON.parse(json);
    } catch {
      return { text: `The arguments of /tool ${match[1]} are not JSON: ${json}` };
    }
    toolCalls.push({ id: `call_${messages.length}_${toolCalls.length}`, name: match[1] as string, arguments: args });
  }
  return { toolCalls };
}

function describeToolResults(messages: Message[]): string {
  let start = messages.length;
  while (start > 0 && messages[start - 1]?.role === 'tool') start--;
  const caller = messages[start - 1];
  const calls = caller?.role === 'assistant' ? (caller.toolCalls ?? []) : [];
  const results = messages.slice(start).map((message) => {
    const id = message.role === 'tool' ? message.toolCallId : '';
    return `${calls.find((call) => call.id === id)?.name ?? 'tool'}: ${message.content}`;
  });
  return `Tool results: ${results.join('; ')}`;
}
