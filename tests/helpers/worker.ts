// Shared by the cloudflare-worker tests: a built worker.js run in workerd with its Durable
// Object (as wrangler.toml declares it), and a local server speaking OpenAI chat-completions.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startWorker, type RunningWorker } from './workerd.ts';

/**
 * Runs `<out>/worker.js` exactly as built (`bundle: false`) with the Durable Object bindings
 * the generated wrangler.toml declares (as the manifest lists them), SQLite-backed as its migrations say. With `persist`
 * (a folder), Durable Object storage is kept there, so a second worker on the same folder
 * is the same deployment after a restart.
 */
export function startBuiltWorker(
  out: string,
  bindings: Record<string, unknown>,
  persist?: string,
): Promise<RunningWorker> {
  // Every Durable Object the manifest names (the sessions', and the limits' when agentward.json has limits).
  const { durableObjects } = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as {
    durableObjects: Record<string, string>;
  };
  return startWorker({
    entry: join(out, 'worker.js'),
    bindings,
    esbuild: { bundle: false },
    miniflare: {
      durableObjects: Object.fromEntries(
        Object.entries(durableObjects).map(([binding, className]) => [binding, { className, useSQLite: true }]),
      ),
      ...(persist !== undefined && { durableObjectsPersist: persist }),
    } as never,
  });
}

/** One request the model server received. */
export interface ModelCall {
  headers: IncomingHttpHeaders;
  body: { model: string; stream?: boolean; messages: { role: string; content: string | null }[] };
}

export interface ModelServer {
  /** `http://127.0.0.1:<port>/v1` */
  baseURL: string;
  calls: ModelCall[];
  /** Holds the answer to the next request whose last message is `message` until `release()` is called. */
  hold(message: string): { received: Promise<void>; release(): void };
  close(): Promise<void>;
}

/** The reply of the model server: it names the model and quotes the last user message. */
export const modelReply = (model: string, message: string) => `${model} heard: ${message}`;

/**
 * A local OpenAI-compatible chat-completions server: `POST /v1/chat/completions`, JSON or (with
 * `stream: true`) server-sent events, one chunk per word, then a `finish_reason` and `[DONE]`.
 * It answers 401 when the `Authorization` header is not `Bearer <apiKey>` (when `apiKey` is given).
 */
export async function startModelServer(apiKey?: string): Promise<ModelServer> {
  const calls: ModelCall[] = [];
  const holds = new Map<string, { received: () => void; released: Promise<void> }>();
  const server = createServer(async (request, response) => {
    let text = '';
    for await (const chunk of request) text += chunk;
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      response.writeHead(404).end();
      return;
    }
    if (apiKey !== undefined && request.headers.authorization !== `Bearer ${apiKey}`) {
      response
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'bad key' } }));
      return;
    }
    const body = JSON.parse(text) as ModelCall['body'];
    calls.push({ headers: request.headers, body });
    const last = String(body.messages.at(-1)?.content ?? '');
    const held = holds.get(last);
    if (held !== undefined) {
      holds.delete(last);
      held.received();
      await held.released;
    }
    const reply = modelReply(body.model, last);
    if (!body.stream) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
        }),
      );
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (choice: unknown) =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [choice] })}\n\n`;
    response.write(chunk({ index: 0, delta: { role: 'assistant', content: '' } }));
    for (const word of reply.split(/(?<= )/)) {
      response.write(chunk({ index: 0, delta: { content: word } }));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    response.write(chunk({ index: 0, delta: {}, finish_reason: 'stop' }));
    response.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    calls,
    hold(message) {
      let received!: () => void;
      let release!: () => void;
      const receivedPromise = new Promise<void>((resolve) => (received = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.set(message, { received, released });
      return { received: receivedPromise, release };
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
