// The run's token usage on the routes (design §21): `usage` on POST <base>'s and /chat's JSON
// answers and on the /chat stream's finish result, `messageMetadata.usage` on the useChat
// stream's finish, with an AI SDK model streaming through /ui to the real `ai` client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AbstractChat, DefaultChatTransport, uiMessageChunkSchema, type ChatState, type UIMessage } from 'ai';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { agentHandler, createAgent } from '../../src/index.ts';
import type { Agent, Model, ModelDelta, RunResult } from '../../src/index.ts';

/** Answers with the user's text, reporting 10 input tokens per turn and 1 output token per word. */
const counting: Model = {
  async generate(request) {
    const text = request.messages.at(-1)!.content;
    return { text, usage: { inputTokens: 10, outputTokens: text.split(' ').length } };
  },
  async *stream(request): AsyncIterable<ModelDelta> {
    const text = request.messages.at(-1)!.content;
    for (const word of text.split(/(?<= )/)) yield { type: 'text', text: word };
    yield { type: 'usage', usage: { inputTokens: 10, outputTokens: text.split(' ').length } };
  },
};

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  new Request(`http://localhost/agent${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

test("POST <base> and POST <base>/chat answer with the run's usage; the /chat stream's finish result carries it", async () => {
  const handler = agentHandler(createAgent({ name: 't', model: counting }), { basePath: '/agent' });
  for (const path of ['', '/chat']) {
    const answer = (await (await handler(post(path, { message: 'three small words' }))).json()) as RunResult;
    assert.deepEqual(answer.usage, { inputTokens: 10, outputTokens: 3 });
    assert.deepEqual(answer.messages[1], {
      role: 'assistant',
      content: 'three small words',
      usage: { inputTokens: 10, outputTokens: 3 },
    });
  }
  const stream = await (await handler(post('/chat', { message: 'two words' }, { accept: 'text/event-stream' }))).text();
  const finish = stream.split('\n\n').find((event) => event.startsWith('event: finish\n'))!;
  const { result } = JSON.parse(finish.slice(finish.indexOf('data: ') + 6)) as { result: RunResult };
  assert.deepEqual(result.usage, { inputTokens: 10, outputTokens: 2 });
});

const uiRequest = (id: string, text: string) =>
  post('/ui', {
    id,
    messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text }] }],
    trigger: 'submit-message',
  });

async function uiChunks(response: Response): Promise<Record<string, unknown>[]> {
  const text = await response.text();
  const chunks = text
    .split('\n\n')
    .filter((block) => block.startsWith('data: {'))
    .map((block) => JSON.parse(block.slice(6)) as Record<string, unknown>);
  for (const chunk of chunks) assert.ok((await uiMessageChunkSchema().validate!(chunk)).success, JSON.stringify(chunk));
  return chunks;
}

test('the useChat stream finishes with messageMetadata.usage, and without it when no turn reported usage', async () => {
  const handler = agentHandler(createAgent({ name: 't', model: counting }), { basePath: '/agent' });
  assert.deepEqual((await uiChunks(await handler(uiRequest('u', 'four words right here')))).at(-1), {
    type: 'finish',
    finishReason: 'stop',
    messageMetadata: { usage: { inputTokens: 10, outputTokens: 4 } },
  });
  const silent = agentHandler(createAgent({ name: 't', model: { generate: async () => ({ text: 'no usage' }) } }), {
    basePath: '/agent',
  });
  assert.deepEqual((await uiChunks(await silent(uiRequest('s', 'hi')))).at(-1), {
    type: 'finish',
    finishReason: 'stop',
  });
});

test('several approvals decided in one useChat request finish with the usage of all their runs', async () => {
  const result = (usage: number): RunResult => ({
    sessionId: 's',
    status: 'completed',
    text: 'ok',
    messages: [],
    approvals: [],
    usage: { inputTokens: usage, outputTokens: 1 },
  });
  let decided = 0;
  const agent = {
    name: 'stub',
    sessions: 'shared',
    pendingApprovals: async () => [
      { id: 'a1', tool: 't', arguments: {}, toolCallId: 'c1' },
      { id: 'a2', tool: 't', arguments: {}, toolCallId: 'c2' },
    ],
    decide: async (_id: string, { onEvent }: { onEvent?: (event: unknown) => void }) => {
      onEvent?.({ type: 'start', sessionId: 's' });
      onEvent?.({ type: 'step-start' });
      return result(++decided * 100);
    },
  } as unknown as Agent;
  const handler = agentHandler(agent, { basePath: '/agent' });
  const part = (id: string, toolCallId: string) => ({
    type: 'tool-t',
    toolCallId,
    state: 'approval-responded',
    input: {},
    approval: { id, approved: true },
  });
  const response = await handler(
    post('/ui', {
      id: 's',
      messageId: 'm1',
      trigger: 'submit-message',
      messages: [{ id: 'm1', role: 'assistant', parts: [part('a1', 'c1'), part('a2', 'c2')] }],
    }),
  );
  assert.deepEqual((await uiChunks(response)).at(-1), {
    type: 'finish',
    finishReason: 'stop',
    messageMetadata: { usage: { inputTokens: 300, outputTokens: 2 } },
  });
});

class State implements ChatState<UIMessage> {
  status: ChatState<UIMessage>['status'] = 'ready';
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage) => void (this.messages = [...this.messages, message]);
  popMessage = () => void (this.messages = this.messages.slice(0, -1));
  replaceMessage = (index: number, message: UIMessage) =>
    void (this.messages = this.messages.map((m, i) => (i === index ? message : m)));
  snapshot = <T>(value: T): T => structuredClone(value);
}
class Chat extends AbstractChat<UIMessage> {}

test('an AI SDK model streams through /ui (doStream) to the real ai client, whose message metadata holds the usage', async () => {
  const model = new MockLanguageModelV4({
    doStream: async () => ({
      stream: convertArrayToReadableStream([
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hello ' },
        { type: 'text-delta', id: 't', delta: 'from the SDK' },
        { type: 'text-end', id: 't' },
        {
          type: 'finish',
          finishReason: { unified: 'stop', raw: 'stop' },
          usage: {
            inputTokens: { total: 12, noCache: 12, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 4, text: 4, reasoning: 0 },
          },
        },
      ] as never[]),
    }),
  });
  const handler = agentHandler(createAgent({ name: 't', model }), { basePath: '/agent' });
  const chat = new Chat({
    id: 'sdk',
    state: new State(),
    transport: new DefaultChatTransport({
      api: 'http://localhost/agent/ui',
      fetch: (url, init) => handler(new Request(url as string, init)),
    }),
  });
  await chat.sendMessage({ text: 'hi' });
  assert.equal(chat.error, undefined);
  const reply = chat.messages.at(-1)!;
  assert.deepEqual(
    reply.parts.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text),
    ['Hello from the SDK'],
  );
  assert.deepEqual(reply.metadata, { usage: { inputTokens: 12, outputTokens: 4 } });
  assert.equal(model.doStreamCalls.length, 1);
  assert.equal(model.doGenerateCalls.length, 0);
});
