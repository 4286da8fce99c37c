/**
 * The real AI SDK providers (`@ai-sdk/openai` chat and responses, `@ai-sdk/anthropic`) pointed
 * (baseURL) at a local server that speaks the provider's wire, and the scenarios every one of
 * them passes (design §21): generate (JSON) and stream (SSE) with a tool call, settings and
 * headers on the wire, usage, an approval and its resume, 401/429/500 whose body (a secret)
 * never surfaces, and an abort that reaches the provider's request. A provider's test file
 * describes its wire (`Wire`) and calls `providerScenarios(wire)`. Portable: node:http serves on
 * Node, Bun and Deno.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { agentHandler, AgentError, createAgent, tool } from '../../src/index.ts';
import type { AiSdkLanguageModel, ModelSettings, RunEvent } from '../../src/index.ts';
import { onProviderFailure, providerDetail, type ProviderDetail } from '../../src/agent/provider-detail.ts';

export const API_KEY = 'sk-test-provider-key-0123456789';
/** What a provider's error body quotes: it must never reach an error, a result, an event or a log. */
export const SECRET = 'sk-live-SECRET-9f8e7d6c5b4a39281706';

export type Tokens = readonly [input: number, output: number];
/** One answer of the local server: JSON, a server-sent-event stream (`gate`: wait after that many events for the client), or none (a request left hanging). */
export type Reply = { status?: number; json: unknown } | { sse: string[]; gate?: number } | { hang: true };

/** What a provider's request body says, read the same way for every wire. */
export interface WireRequest {
  system: unknown;
  tools: string[];
  /** The output of the last tool result in the prompt. */
  toolOutput: string | undefined;
  stream: boolean;
  settings: Record<string, unknown>;
}

export interface Wire {
  name: string;
  /** The real provider's model, its baseURL the local server's (`http://127.0.0.1:<port>/v1`). */
  model(baseURL: string): AiSdkLanguageModel;
  path: string;
  /** The request header that carries the key, and its value. */
  key: [string, string];
  text(text: string, tokens: Tokens): Reply;
  toolCall(id: string, name: string, args: string, tokens: Tokens): Reply;
  streamText(pieces: string[], tokens: Tokens): Reply;
  streamToolCall(id: string, name: string, pieces: string[], tokens: Tokens): Reply;
  error(status: number, secret: string): Reply;
  read(body: Record<string, unknown>): WireRequest;
  /** How `SETTINGS` appear in `read(body).settings`. */
  settings: Record<string, unknown>;
}

export const SETTINGS: ModelSettings = {
  temperature: 0.25,
  maxOutputTokens: 321,
  topP: 0.5,
  stopSequences: ['END'],
  headers: { 'x-trace': 'trace-1' },
};

export const sse = (data: unknown, event?: string) =>
  `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

interface Seen {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** A server answering each request with the next reply; `gate()` lets a gated stream go on; `disconnected` resolves when a hanging request's client went away. */
export async function wireServer(script: Reply[]) {
  const seen: Seen[] = [];
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  let gateOpenedByClient = false;
  let disconnected!: () => void;
  const gone = new Promise<void>((resolve) => (disconnected = resolve));
  const server = createServer((request, response) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', async () => {
      seen.push({ path: request.url ?? '', headers: request.headers, body: JSON.parse(text) });
      const reply = script.shift() ?? { status: 500, json: { error: { message: 'script exhausted' } } };
      if ('hang' in reply) {
        response.on('close', () => disconnected());
        return;
      }
      if ('json' in reply) {
        response.writeHead(reply.status ?? 200, { 'content-type': 'application/json', connection: 'close' });
        response.end(JSON.stringify(reply.json));
        return;
      }
      response.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'close',
      });
      for (const [index, event] of reply.sse.entries()) {
        if (index === reply.gate) {
          // The client must have passed the first deltas on before the stream goes on.
          let timer: ReturnType<typeof setTimeout> | undefined;
          gateOpenedByClient = await Promise.race([
            gate.then(() => true),
            new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 5000))),
          ]);
          clearTimeout(timer);
        }
        response.write(event);
      }
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    seen,
    gate: () => openGate(),
    gateOpenedByClient: () => gateOpenedByClient,
    disconnected: gone,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

const weather = tool({
  name: 'weather',
  description: 'Current weather of a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  execute: ({ city }) => ({ city, celsius: 21 }),
});

const deploy = tool({
  name: 'deploy',
  description: 'Deploys a service',
  parameters: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
  needsApproval: true,
  execute: ({ service }) => `deployed ${service}`,
});

const usage = ([inputTokens, outputTokens]: Tokens) => ({ inputTokens, outputTokens });
const isModelError = (status: number) => (error: unknown) =>
  error instanceof AgentError &&
  error.code === 'MODEL_ERROR' &&
  error.message === `the model answered with HTTP ${status}`;

/** Every console line written while `body` runs, as one inspected string (and still written). */
async function consoleOf(body: () => Promise<void>): Promise<string> {
  const lines: string[] = [];
  const originals = { error: console.error, warn: console.warn, log: console.log, info: console.info };
  for (const level of Object.keys(originals) as (keyof typeof originals)[]) {
    console[level] = (...args: unknown[]) => void lines.push(args.map((arg) => inspect(arg, { depth: 10 })).join(' '));
  }
  try {
    await body();
  } finally {
    Object.assign(console, originals);
  }
  return lines.join('\n');
}

export function providerScenarios(wire: Wire): void {
  test(`${wire.name}: generate (JSON): the instructions as the system message, function tools, the settings and headers reach the wire; a tool call runs; usage is kept per turn and added up`, async () => {
    const server = await wireServer([
      wire.toolCall('call_1', 'weather', '{"city":"Paris"}', [11, 7]),
      wire.text('It is 21 °C in Paris.', [30, 9]),
    ]);
    try {
      const agent = createAgent({
        name: 't',
        model: wire.model(server.baseURL),
        instructions: 'Be brief.',
        tools: [weather],
        settings: SETTINGS,
      });
      const result = await agent.send('Weather in Paris?');
      assert.equal(result.text, 'It is 21 °C in Paris.');
      assert.deepEqual(result.usage, { inputTokens: 41, outputTokens: 16 });
      assert.deepEqual(
        result.messages.map((m) => m.role),
        ['user', 'assistant', 'tool', 'assistant'],
      );
      assert.deepEqual(result.messages[1], {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call_1', name: 'weather', arguments: { city: 'Paris' } }],
        usage: usage([11, 7]),
      });
      assert.deepEqual(result.messages[3], {
        role: 'assistant',
        content: 'It is 21 °C in Paris.',
        usage: usage([30, 9]),
      });
      assert.deepEqual((await agent.transcript(result.sessionId)).messages, result.messages);
      assert.equal(server.seen.length, 2);
      for (const { path, headers, body } of server.seen) {
        assert.equal(path, wire.path);
        assert.equal(headers[wire.key[0]], wire.key[1]);
        assert.equal(headers['x-trace'], 'trace-1');
        const request = wire.read(body);
        assert.equal(request.stream, false);
        assert.deepEqual(request.tools, ['weather']);
        assert.deepEqual(request.settings, wire.settings);
        assert.match(JSON.stringify(request.system), /Be brief\./);
      }
      assert.equal(wire.read(server.seen[1]!.body).toolOutput, '{"city":"Paris","celsius":21}');
    } finally {
      await server.close();
    }
  });

  test(`${wire.name}: stream (SSE): text deltas are passed on as they come, a streamed tool call is put together, usage is read`, async () => {
    const toolStream = wire.streamToolCall('call_s', 'weather', ['{"ci', 'ty":"Os', 'lo"}'], [12, 5]);
    const textStream = wire.streamText(['Mild ', 'in ', 'Oslo.'], [40, 3]);
    const server = await wireServer([toolStream, textStream]);
    try {
      const agent = createAgent({ name: 't', model: wire.model(server.baseURL), tools: [weather] });
      const events: RunEvent[] = [];
      const result = await agent.send('Oslo?', {
        onEvent: (event) => {
          events.push(event);
          if (event.type === 'text-delta') server.gate();
        },
      });
      assert.equal(
        server.gateOpenedByClient(),
        true,
        'the first text delta reached the caller while the provider still streamed',
      );
      assert.deepEqual(
        events.filter((e) => e.type === 'tool-call').map((e) => (e as { call: unknown }).call),
        [{ id: 'call_s', name: 'weather', arguments: { city: 'Oslo' } }],
      );
      assert.deepEqual(
        events.filter((e) => e.type === 'text-delta').map((e) => (e as { text: string }).text),
        ['Mild ', 'in ', 'Oslo.'],
      );
      assert.equal(result.text, 'Mild in Oslo.');
      assert.deepEqual(result.usage, { inputTokens: 52, outputTokens: 8 });
      assert.deepEqual(
        result.messages.map((m) => (m.role === 'assistant' ? m.usage : undefined)),
        [undefined, usage([12, 5]), undefined, usage([40, 3])],
      );
      assert.deepEqual(
        server.seen.map(({ body }) => wire.read(body).stream),
        [true, true],
      );
      assert.equal(wire.read(server.seen[1]!.body).toolOutput, '{"city":"Oslo","celsius":21}');
    } finally {
      await server.close();
    }
  });

  test(`${wire.name}: a tool that needs approval pauses the run; the decision resumes it with the tool's output on the wire`, async () => {
    const { sse: resumed } = wire.streamText(['Deployed.'], [16, 2]) as { sse: string[] };
    const server = await wireServer([wire.toolCall('call_d', 'deploy', '{"service":"api"}', [8, 4]), { sse: resumed }]);
    try {
      const agent = createAgent({ name: 't', model: wire.model(server.baseURL), tools: [deploy] });
      const paused = await agent.send('Deploy the api');
      assert.equal(paused.status, 'awaiting-approval');
      assert.deepEqual(
        paused.approvals.map(({ tool, arguments: args, toolCallId }) => ({ tool, args, toolCallId })),
        [{ tool: 'deploy', args: { service: 'api' }, toolCallId: 'call_d' }],
      );
      assert.deepEqual(paused.usage, usage([8, 4]));
      const events: RunEvent[] = [];
      const resumed = await agent.decide(paused.approvals[0]!.id, {
        approved: true,
        onEvent: (event) => events.push(event),
      });
      assert.equal(resumed.status, 'completed');
      assert.equal(resumed.text, 'Deployed.');
      assert.deepEqual(resumed.usage, usage([16, 2]));
      assert.ok(events.some((e) => e.type === 'tool-result' && e.output === 'deployed api'));
      assert.equal(wire.read(server.seen[1]!.body).toolOutput, 'deployed api');
    } finally {
      await server.close();
    }
  });

  test(`${wire.name}: HTTP 401, 429 and 500 are MODEL_ERROR naming the status; the provider's body (a secret) reaches no error, result, event, answer or log`, async () => {
    for (const status of [401, 429, 500]) {
      const server = await wireServer([
        wire.error(status, SECRET),
        wire.error(status, SECRET),
        wire.error(status, SECRET),
      ]);
      try {
        const agent = createAgent({ name: 't', model: wire.model(server.baseURL) });
        const caught: unknown[] = [];
        const events: RunEvent[] = [];
        let answer = '';
        const logged = await consoleOf(async () => {
          await assert.rejects(agent.send('hi'), (error: unknown) => (caught.push(error), isModelError(status)(error)));
          await assert.rejects(
            agent.send('hi', { onEvent: (event) => events.push(event) }),
            (error: unknown) => (caught.push(error), isModelError(status)(error)),
          );
          const handler = agentHandler(agent, { basePath: '/agent' });
          const response = await handler(
            new Request('http://localhost/agent', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: '{"message":"hi"}',
            }),
          );
          assert.equal(response.status, 502);
          answer = await response.text();
        });
        assert.equal(answer, '{"error":"The model failed"}');
        assert.equal(server.seen.length, 3, 'one request each, no retry');
        for (const error of caught) {
          assert.equal((error as Error).cause, undefined);
          assert.doesNotMatch(
            inspect(error, { depth: 10 }) + JSON.stringify(error, Object.getOwnPropertyNames(error)),
            /SECRET/,
          );
        }
        assert.deepEqual(events.at(-1), {
          type: 'error',
          error: `the model answered with HTTP ${status}`,
          code: 'MODEL_ERROR',
        });
        assert.doesNotMatch(JSON.stringify(events), /SECRET/);
        assert.match(logged, new RegExp(`HTTP ${status}`), 'the route logs the failure');
        assert.doesNotMatch(logged, /SECRET/);
      } finally {
        await server.close();
      }
    }
  });

  test(`${wire.name}: what the provider said (status, error type, message) reaches the listener agentward dev installs, the key redacted; the error's message stays the status alone (design §31)`, async () => {
    const server = await wireServer([wire.error(400, API_KEY), wire.error(400, API_KEY)]);
    const heard: ProviderDetail[] = [];
    onProviderFailure((detail) => heard.push(detail));
    try {
      const agent = createAgent({ name: 't', model: wire.model(server.baseURL) });
      for (const streaming of [false, true]) {
        await assert.rejects(agent.send('hi', streaming ? { onEvent: () => {} } : {}), (error: unknown) => {
          assert.ok(isModelError(400)(error));
          assert.equal(providerDetail(error)?.status, 400);
          assert.doesNotMatch(
            JSON.stringify(error, Object.getOwnPropertyNames(error)) + String(error),
            /provider said|sk-test/,
          );
          return true;
        });
      }
      assert.equal(heard.length, 2);
      for (const detail of heard) {
        assert.equal(detail.status, 400);
        assert.match(detail.type ?? '', /^(?:invalid_request_error|api_error)$/, 'the type the body names');
        assert.match(detail.message ?? '', /^(?:Incorrect API key provided|invalid x-api-key): \[redacted\]$/);
        assert.match(detail.provider ?? '', /\S+ \S+/);
        assert.doesNotMatch(JSON.stringify(detail), /sk-test/);
      }
    } finally {
      onProviderFailure(undefined);
      await server.close();
    }
  });

  test(`${wire.name}: aborting the run aborts the provider's request (the signal reaches its fetch)`, async () => {
    for (const streaming of [false, true]) {
      const server = await wireServer([{ hang: true }]);
      try {
        const agent = createAgent({ name: 't', model: wire.model(server.baseURL) });
        const controller = new AbortController();
        const run = agent.send('hi', { signal: controller.signal, ...(streaming && { onEvent: () => {} }) });
        while (server.seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        controller.abort();
        // Both within 5 s: a provider that never got the signal leaves its request, and the run, hanging.
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<never>(
          (_, reject) => (timer = setTimeout(() => reject(new Error("the provider's request was not aborted")), 5000)),
        );
        await Promise.race([
          Promise.all([
            assert.rejects(run, (error: unknown) => (error as Error).name === 'AbortError'),
            server.disconnected,
          ]),
          late,
        ]).finally(() => clearTimeout(timer));
      } finally {
        await server.close();
      }
    }
  });
}
