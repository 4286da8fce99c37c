// The route handler in Deno.serve, for tests/http/deno-serve.node.test.ts: `deno run -A` on this file.
// API token from AGENT_API_TOKEN; the message `wait` makes the model wait until the run's signal
// aborts and print `run aborted: <name>`; any other message is echoed.
import { agentHandler, createAgent, echoModel, memoryStore } from '../../../src/index.ts';
import type { Model } from '../../../src/index.ts';

declare const Deno: {
  env: { get(name: string): string | undefined };
  serve(
    options: { port: number; hostname: string; onListen(address: { hostname: string; port: number }): void },
    handler: (request: Request) => Promise<Response>,
  ): unknown;
};

const echo = echoModel();
const model: Model = {
  generate(request) {
    const last = request.messages[request.messages.length - 1];
    if (last?.role !== 'user' || last.content !== 'wait') return echo.generate(request);
    const { signal } = request;
    return new Promise((_, reject) => {
      signal?.addEventListener(
        'abort',
        () => {
          console.log(`run aborted: ${(signal.reason as Error | undefined)?.name}`);
          reject(signal.reason);
        },
        { once: true },
      );
      console.log('run waiting');
    });
  },
};

const agent = createAgent({ name: 'deno', model, store: memoryStore() });
Deno.serve(
  {
    port: 0,
    hostname: '127.0.0.1',
    onListen: ({ hostname, port }) => console.log(`agent listening on http://${hostname}:${port}/agent`),
  },
  agentHandler(agent, { basePath: '/agent', auth: Deno.env.get('AGENT_API_TOKEN') ?? [] }),
);
