// Suite `ai-sdk`: what the AI SDK adapter (src/agent/models/ai-sdk.ts) adds to a send (design §21,
// target: no more than 5%). `echo` is agent.send('hello') with the built-in echo model; `ai-sdk-v4`
// is the same echo behaviour exposed as an AI SDK LanguageModelV4 (doGenerate answers the last
// user text; doStream streams it word by word as text-delta parts, then finish), so the
// difference is the adapter: the prompt it builds, the result or stream parts it reads. The
// `-stream` cases send with onEvent (a streaming route), which streams the model; a doStream
// answers with a ReadableStream, whose own cost `readable-stream` (a Model streaming out of the
// same ReadableStream) takes out of the comparison. The store keeps nothing
// (bench/http-shared.ts), so the send itself is all that is measured.
import { createAgent, echoModel } from '../../src/agent/index.ts';
import type { AiSdkLanguageModel, Model, ModelDelta } from '../../src/agent/index.ts';
import { discardStore } from '../http-shared.ts';
import type { SuiteSpec } from '../lib.ts';

const NO_USAGE = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};
const STOP = { unified: 'stop', raw: 'stop' };

/** The echo model's reply (the last user message's text) from an AI SDK prompt. */
function lastUserText(prompt: readonly { readonly role: string; readonly content: unknown }[]): string {
  const last = prompt[prompt.length - 1];
  const parts = last?.role === 'user' ? (last.content as { type: string; text?: string }[]) : [];
  return parts.map((part) => part.text ?? '').join('');
}

/** The parts of an echo reply as a doStream ReadableStream, word by word. */
function partStream(text: string): ReadableStream<{ type: string }> {
  const words = text.match(/\S+\s*|\s+/g) ?? [];
  const parts = [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: '0' },
    ...words.map((delta) => ({ type: 'text-delta', id: '0', delta })),
    { type: 'text-end', id: '0' },
    { type: 'finish', finishReason: STOP, usage: NO_USAGE },
  ];
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

/**
 * The control of the stream cases: this library's Model streaming the echo reply out of the same
 * ReadableStream of parts, so that `ai-sdk-v4-stream` against it is the adapter alone, without
 * the cost of the ReadableStream every AI SDK doStream returns.
 */
const readableEcho: Model = {
  generate: (request) => echoModel().generate(request),
  async *stream(request): AsyncIterable<ModelDelta> {
    const last = request.messages[request.messages.length - 1];
    const reader = partStream(last?.role === 'user' ? last.content : '').getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      const part = value as { type: string; delta?: string };
      if (part.type === 'text-delta') yield { type: 'text', text: part.delta! };
    }
  },
};

/** The echo model as an AI SDK v4 language model. */
const aiSdkEcho: AiSdkLanguageModel & { supportedUrls: Record<string, RegExp[]> } = {
  specificationVersion: 'v4',
  provider: 'bench',
  modelId: 'echo',
  supportedUrls: {},
  async doGenerate({ prompt }) {
    return {
      content: [{ type: 'text', text: lastUserText(prompt) }],
      finishReason: STOP,
      usage: NO_USAGE,
      warnings: [],
    };
  },
  async doStream({ prompt }) {
    return { stream: partStream(lastUserText(prompt)) };
  },
};

const sender = (model: Parameters<typeof createAgent>[0]['model'], streamed: boolean) => {
  const agent = createAgent({ name: 'bench', model, store: discardStore() });
  const principal = { id: 'bench-user', type: 'user' as const, authenticator: 'api-token' };
  const onEvent = () => {};
  return streamed ? () => agent.send('hello', { principal, onEvent }) : () => agent.send('hello', { principal });
};

export default async function suites(): Promise<SuiteSpec[]> {
  const ratio = (ops: Readonly<Record<string, number>>, over: string, under: string) => {
    const value = ops[over]! / ops[under]!;
    return `${over}/${under} ${value.toFixed(3)}x (target ≥ 0.95: ${value >= 0.95 ? 'met' : 'MISSED'})`;
  };
  return [
    {
      suite: 'ai-sdk',
      baseline: 'echo',
      cases: {
        echo: sender(echoModel(), false),
        'ai-sdk-v4': sender(aiSdkEcho, false),
        'echo-stream': sender(echoModel(), true),
        'ai-sdk-v4-stream': sender(aiSdkEcho, true),
        'readable-stream': sender(readableEcho, true),
      },
      note: "each case: agent.send('hello') to a new session, store discarding; -stream: with onEvent (the model streams)",
      verdict: (ops) =>
        `${ratio(ops, 'ai-sdk-v4', 'echo')} (the adapter on a send); ${ratio(ops, 'ai-sdk-v4-stream', 'readable-stream')} (the adapter on a streamed send); ` +
        `ai-sdk-v4-stream/echo-stream ${(ops['ai-sdk-v4-stream']! / ops['echo-stream']!).toFixed(3)}x (the adapter and the ReadableStream every doStream returns)`,
    },
  ];
}
