// openAICompatible against a local server that speaks the chat-completions protocol (node:http, which Bun and Deno serve too).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentError, createAgent, openAICompatible } from '../../../src/agent/index.ts';
import { AuthConfigError } from '../../../src/auth/index.ts';
import { onProviderFailure, providerDetail, type ProviderDetail } from '../../../src/agent/provider-detail.ts';
import type { RunEvent, Tool } from '../../../src/agent/index.ts';

const API_KEY = 'sk-test-0123456789abcdef';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  headers: Record<string, unknown>;
  body: Record<string, unknown>;
}
type Reply = { status?: number; json?: unknown; chunks?: string[] };

/** A chat-completions server answering each request with the next reply of the script (no keep-alive, so `close` never waits). */
async function chatServer(script: Reply[]) {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', () => {
      seen.push({
        method: request.method ?? '',
        url: request.url ?? '',
        authorization: request.headers.authorization,
        headers: request.headers,
        body: JSON.parse(text),
      });
      const reply = script.shift() ?? { status: 500, json: { error: 'script exhausted' } };
      if (reply.chunks) {
        response.writeHead(reply.status ?? 200, { 'content-type': 'text/event-stream', connection: 'close' });
        for (const chunk of reply.chunks) response.write(chunk);
        response.end();
      } else {
        response.writeHead(reply.status ?? 200, { 'content-type': 'application/json', connection: 'close' });
        response.end(JSON.stringify(reply.json));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const weather: Tool<{ city: string }> = {
  name: 'weather',
  description: 'Current weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  execute: ({ city }) => ({ city, celsius: 21 }),
};

const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const isModelError = (error: unknown) => error instanceof AgentError && error.code === 'MODEL_ERROR';

test('openAICompatible posts to ${baseURL}/chat/completions with the bearer key, maps messages and tools, and parses tool calls', async () => {
  const server = await chatServer([
    {
      json: {
        choices: [
          {
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
              ],
            },
          },
        ],
      },
    },
    { json: { choices: [{ message: { role: 'assistant', content: 'It is 21 °C in Paris.' } }] } },
  ]);
  try {
    const model = openAICompatible({ baseURL: `${server.baseURL}/`, apiKey: API_KEY, model: 'gpt-test' });
    const agent = createAgent({
      name: 't',
      model: { generate: (request) => model.generate(request) },
      instructions: 'Be brief.',
      tools: [weather],
    });
    const result = await agent.send('Weather in Paris?');
    assert.equal(result.text, 'It is 21 °C in Paris.');
    assert.equal(server.seen.length, 2);
    for (const request of server.seen) {
      assert.equal(request.method, 'POST');
      assert.equal(request.url, '/v1/chat/completions');
      assert.equal(request.authorization, `Bearer ${API_KEY}`);
      assert.equal(request.body.model, 'gpt-test');
      assert.equal('stream' in request.body, false);
      assert.deepEqual(request.body.tools, [
        {
          type: 'function',
          function: { name: 'weather', description: 'Current weather of a city', parameters: weather.parameters },
        },
      ]);
    }
    assert.deepEqual(server.seen[1]!.body.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '{"city":"Paris","celsius":21}' },
    ]);
  } finally {
    await server.close();
  }
});

test('openAICompatible streams: text arrives as several deltas and tool-call deltas are accumulated by index', async () => {
  const chunk = (delta: unknown, finish: string | null = null) =>
    sse({ choices: [{ index: 0, delta, finish_reason: finish }] });
  const toolStream = [
    chunk({
      role: 'assistant',
      content: null,
      tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { name: 'weather', arguments: '' } }],
    }),
    chunk({
      tool_calls: [{ index: 1, id: 'call_y', type: 'function', function: { name: 'weather', arguments: '{"ci' } }],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
    chunk({ tool_calls: [{ index: 1, function: { arguments: 'ty":"Rome"}' } }] }),
    chunk({}, 'tool_calls'),
    'data: [DONE]\n\n',
  ];
  // The text stream is cut at awkward places: inside a line, between \r and \n.
  const text = [
    chunk({ role: 'assistant', content: '' }),
    chunk({ content: 'Mild ' }),
    chunk({ content: 'in both' }),
    chunk({ content: ' cities.' }, 'stop'),
    'data: [DONE]\n\n',
  ]
    .join('')
    .replace(/\n\n/g, '\r\n\r\n');
  const cr = text.indexOf('\r', 60) + 1;
  const server = await chatServer([
    { chunks: toolStream },
    { chunks: [text.slice(0, 7), text.slice(7, cr), text.slice(cr, cr + 1), text.slice(cr + 1)] },
  ]);
  try {
    const agent = createAgent({
      name: 't',
      model: openAICompatible({ baseURL: server.baseURL, apiKey: API_KEY, model: 'gpt-test' }),
      tools: [weather],
    });
    const events: RunEvent[] = [];
    const result = await agent.send('Oslo and Rome?', { onEvent: (e) => events.push(e) });
    assert.equal(server.seen[0]!.body.stream, true);
    assert.deepEqual(
      events.filter((e) => e.type === 'tool-call').map((e) => (e as { call: unknown }).call),
      [
        { id: 'call_x', name: 'weather', arguments: { city: 'Oslo' } },
        { id: 'call_y', name: 'weather', arguments: { city: 'Rome' } },
      ],
    );
    assert.deepEqual(
      events.filter((e) => e.type === 'text-delta').map((e) => (e as { text: string }).text),
      ['Mild ', 'in both', ' cities.'],
    );
    assert.equal(result.text, 'Mild in both cities.');
    assert.deepEqual(
      result.messages.filter((m) => m.role === 'tool').map((m) => m.content),
      ['{"city":"Oslo","celsius":21}', '{"city":"Rome","celsius":21}'],
    );
  } finally {
    await server.close();
  }
});

test('openAICompatible: an HTTP error is MODEL_ERROR naming the status, never the key the provider quoted', async () => {
  const server = await chatServer([
    { status: 401, json: { error: { message: `Incorrect API key provided: ${API_KEY}` } } },
  ]);
  try {
    const agent = createAgent({
      name: 't',
      model: openAICompatible({ baseURL: server.baseURL, apiKey: API_KEY, model: 'gpt-test' }),
    });
    const events: RunEvent[] = [];
    await assert.rejects(agent.send('hi', { onEvent: (e) => events.push(e) }), (error: unknown) => {
      assert.ok(isModelError(error));
      assert.equal((error as Error).message, 'the model answered with HTTP 401');
      assert.doesNotMatch(JSON.stringify(error, Object.getOwnPropertyNames(error)), /sk-test/);
      assert.doesNotMatch(String((error as Error).cause ?? ''), /sk-test/);
      return true;
    });
    assert.doesNotMatch(JSON.stringify(events), /sk-test/);
  } finally {
    await server.close();
  }
});

test('openAICompatible: a baseURL with a user name or password is AuthConfigError at creation ("put credentials in apiKey or headers"), never quoting them (design §26)', () => {
  for (const baseURL of [
    'https://user:hunter2-password@api.example/v1',
    'https://user@api.example/v1',
    'https://:hunter2-password@api.example/v1',
  ]) {
    assert.throws(
      () => openAICompatible({ baseURL, model: 'm' }),
      (e: unknown) =>
        e instanceof AuthConfigError &&
        e.code === 'AGENT_AUTH_CONFIG_INVALID' &&
        /put credentials in apiKey or headers/.test(e.message) &&
        !e.message.includes('hunter2') &&
        !e.message.includes('user@'),
    );
  }
});

test("openAICompatible: what the provider's error body says (status, type, message) is kept off the error's message for agentward dev, the key and header values redacted (design §31)", async () => {
  const CUSTOM = 'custom-header-secret-value-42';
  const said = `Unsupported parameter: 'temperature' is not supported with this model. (key ${API_KEY}, ${CUSTOM})`;
  const error400 = {
    error: { message: said, type: 'invalid_request_error', param: 'temperature', code: 'unsupported_parameter' },
  };
  const server = await chatServer([
    { status: 400, json: error400 },
    { status: 400, json: error400 },
    { chunks: [sse({ error: { message: `overloaded ${API_KEY}`, type: 'server_error' } })] },
  ]);
  const heard: ProviderDetail[] = [];
  onProviderFailure((detail) => heard.push(detail));
  try {
    const model = openAICompatible({
      baseURL: server.baseURL,
      apiKey: API_KEY,
      model: 'gpt-test',
      headers: { 'x-custom-key': CUSTOM },
    });
    const agent = createAgent({ name: 't', model, settings: { temperature: 0.2 } });
    const events: RunEvent[] = [];
    await assert.rejects(agent.send('hi'), (error: unknown) => {
      assert.equal((error as Error).message, 'the model answered with HTTP 400');
      assert.deepEqual(providerDetail(error), {
        provider: `${new URL(server.baseURL).host} gpt-test`,
        status: 400,
        type: 'invalid_request_error',
        message: "Unsupported parameter: 'temperature' is not supported with this model. (key [redacted], [redacted])",
      });
      const shown =
        JSON.stringify(error, Object.getOwnPropertyNames(error)) + String(error) + Object.keys(error as object);
      assert.doesNotMatch(shown, /temperature|sk-test|custom-header/, 'nothing of it on the error as callers see it');
      return true;
    });
    await assert.rejects(agent.send('hi', { onEvent: (event) => events.push(event) }), isModelError);
    await assert.rejects(agent.send('hi', { onEvent: (event) => events.push(event) }), (error: unknown) => {
      assert.equal((error as Error).message, 'the model reported an error in its stream');
      assert.deepEqual(providerDetail(error), {
        provider: `${new URL(server.baseURL).host} gpt-test`,
        type: 'server_error',
        message: 'overloaded [redacted]',
      });
      return true;
    });
    assert.doesNotMatch(JSON.stringify(events), /temperature|overloaded|sk-test/, 'the events carry the status alone');
    assert.deepEqual(
      heard.map(({ status, type }) => [status, type]),
      [
        [400, 'invalid_request_error'],
        [400, 'invalid_request_error'],
        [undefined, 'server_error'],
      ],
    );
  } finally {
    onProviderFailure(undefined);
    await server.close();
  }
});

test('openAICompatible: a stream that ends before it finished, or reports an error, is MODEL_ERROR', async () => {
  const cut = sse({ choices: [{ index: 0, delta: { content: 'Half a' }, finish_reason: null }] });
  const failed = sse({ error: { message: 'overloaded' } });
  const server = await chatServer([{ chunks: [cut] }, { chunks: [cut, failed] }, { json: { nope: true } }]);
  try {
    const model = openAICompatible({ baseURL: server.baseURL, model: 'local' });
    const agent = createAgent({ name: 't', model });
    await assert.rejects(agent.send('hi', { sessionId: 'cut', onEvent: () => {} }), isModelError);
    await assert.rejects(agent.send('hi', { sessionId: 'cut', onEvent: () => {} }), isModelError);
    await assert.rejects(
      model.generate({ instructions: '', messages: [{ role: 'user', content: 'hi' }], tools: [] }),
      isModelError,
    );
    await assert.rejects(
      agent.transcript('cut'),
      (e: unknown) => e instanceof AgentError && e.code === 'SESSION_NOT_FOUND',
    );
    assert.equal(server.seen[0]!.authorization, undefined);
  } finally {
    await server.close();
  }
});

test('openAICompatible: an unreachable server is MODEL_ERROR', async () => {
  const server = await chatServer([]);
  await server.close();
  const model = openAICompatible({ baseURL: server.baseURL, apiKey: API_KEY, model: 'gpt-test' });
  await assert.rejects(
    model.generate({ instructions: '', messages: [], tools: [] }),
    (error: unknown) => isModelError(error) && !String((error as Error).message).includes(API_KEY),
  );
});

test('openAICompatible: tool arguments that are not JSON become a recorded tool failure the model can correct', async () => {
  const server = await chatServer([
    {
      json: {
        choices: [
          {
            message: {
              content: '',
              tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city": Par' } }],
            },
          },
        ],
      },
    },
    { json: { choices: [{ message: { content: 'Sorry.' } }] } },
  ]);
  try {
    const model = openAICompatible({ baseURL: server.baseURL, apiKey: API_KEY, model: 'gpt-test' });
    const agent = createAgent({ name: 't', model: { generate: (r) => model.generate(r) }, tools: [weather] });
    const result = await agent.send('Paris?');
    assert.deepEqual(result.messages[2], {
      role: 'tool',
      toolCallId: 'c1',
      content: 'Error: tool "weather": invalid arguments: expected object',
    });
    assert.equal(result.text, 'Sorry.');
  } finally {
    await server.close();
  }
});

test('openAICompatible rejects options that cannot work with AuthConfigError, without echoing the key', () => {
  const invalid = (options: unknown) =>
    assert.throws(
      () => openAICompatible(options as never),
      (e: unknown) =>
        e instanceof AuthConfigError && e.code === 'AGENT_AUTH_CONFIG_INVALID' && !e.message.includes(API_KEY),
    );
  invalid({ baseURL: 'not a url', apiKey: API_KEY, model: 'm' });
  invalid({ baseURL: 'file:///etc', apiKey: API_KEY, model: 'm' });
  invalid({ baseURL: 'https://api.example/v1', apiKey: API_KEY, model: '' });
  invalid({ baseURL: 'https://api.example/v1', apiKey: 42, model: 'm' });
});

test('openAICompatible reads server-sent events split anywhere: inside a line, between \\r and \\n, inside a UTF-8 character', async () => {
  const body = [
    sse({ choices: [{ index: 0, delta: { content: 'Grüß ' }, finish_reason: null }] }),
    sse({ choices: [{ index: 0, delta: { content: 'dich' }, finish_reason: 'stop' }] }),
    'data: [DONE]\n\n',
  ]
    .join('')
    .replace(/\n\n/g, '\r\n\r\n');
  const bytes = new TextEncoder().encode(body);
  const u = bytes.indexOf(0xc3); // the first byte of "ü"
  const cr = bytes.indexOf(0x0d) + 1;
  const cuts = [0, 5, u + 1, cr, cr + 1, bytes.length];
  let sent: Request | undefined;
  const fakeFetch: typeof fetch = async (input, init) => {
    sent = new Request(input, init);
    return new Response(
      new ReadableStream({
        start(controller) {
          for (let i = 1; i < cuts.length; i++) controller.enqueue(bytes.slice(cuts[i - 1], cuts[i]));
          controller.close();
        },
      }),
      { headers: { 'content-type': 'text/event-stream' } },
    );
  };
  const model = openAICompatible({ baseURL: 'https://llm.example/v1', apiKey: API_KEY, model: 'm', fetch: fakeFetch });
  const deltas: unknown[] = [];
  for await (const delta of model.stream!({
    instructions: '',
    messages: [{ role: 'user', content: 'hallo' }],
    tools: [],
  }))
    deltas.push(delta);
  assert.deepEqual(deltas, [
    { type: 'text', text: 'Grüß ' },
    { type: 'text', text: 'dich' },
  ]);
  assert.equal(sent?.url, 'https://llm.example/v1/chat/completions');
  assert.equal(sent?.headers.get('authorization'), `Bearer ${API_KEY}`);
  assert.deepEqual(await sent?.json(), {
    model: 'm',
    messages: [{ role: 'user', content: 'hallo' }],
    stream: true,
    stream_options: { include_usage: true },
  });
});

test('openAICompatible maps the settings to its wire: temperature, max_tokens, top_p, stop, and settings.headers over its own headers', async () => {
  const server = await chatServer([
    { json: { choices: [{ message: { content: 'ok' } }] } },
    { json: { choices: [{ message: { content: 'ok' } }] } },
  ]);
  try {
    const model = openAICompatible({
      baseURL: server.baseURL,
      apiKey: API_KEY,
      model: 'gpt-test',
      headers: { 'X-Org': 'org-1', 'X-Trace': 'model' },
    });
    const settings = {
      temperature: 0.3,
      maxOutputTokens: 256,
      topP: 0.9,
      stopSequences: ['END', 'STOP'],
      headers: { 'x-trace': 'run' },
    };
    await createAgent({ name: 't', model, settings }).send('hi');
    await createAgent({ name: 't', model }).send('hi');
    const [withSettings, without] = server.seen;
    assert.deepEqual(withSettings!.body, {
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.3,
      max_tokens: 256,
      top_p: 0.9,
      stop: ['END', 'STOP'],
    });
    assert.equal(withSettings!.headers['x-org'], 'org-1');
    assert.equal(withSettings!.headers['x-trace'], 'run');
    assert.equal(withSettings!.authorization, `Bearer ${API_KEY}`);
    assert.deepEqual(without!.body, { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(without!.headers['x-trace'], 'model');
  } finally {
    await server.close();
  }
});

test('openAICompatible reads usage: from the answer, and, streaming, from the last chunk it asks for with stream_options.include_usage', async () => {
  const chunk = (delta: unknown, finish: string | null = null) =>
    sse({ choices: [{ index: 0, delta, finish_reason: finish }], usage: null });
  const server = await chatServer([
    {
      json: {
        choices: [
          {
            message: {
              content: null,
              tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }],
            },
          },
        ],
        usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 },
      },
    },
    {
      json: {
        choices: [{ message: { content: 'Cold.' } }],
        usage: { prompt_tokens: 50, completion_tokens: 3, total_tokens: 53 },
      },
    },
    {
      chunks: [
        chunk({ content: 'Still ' }),
        chunk({ content: 'cold.' }),
        chunk({}, 'stop'),
        sse({ choices: [], usage: { prompt_tokens: 70, completion_tokens: 4, total_tokens: 74 } }),
        'data: [DONE]\n\n',
      ],
    },
    { json: { choices: [{ message: { content: 'no usage' } }] } },
  ]);
  try {
    const agent = createAgent({
      name: 't',
      model: openAICompatible({ baseURL: server.baseURL, model: 'local' }),
      tools: [weather],
    });
    const first = await agent.send('Oslo?', { sessionId: 'u' });
    assert.deepEqual(first.usage, { inputTokens: 80, outputTokens: 15 });
    assert.deepEqual(
      first.messages.flatMap((m) => (m.role === 'assistant' ? [m.usage] : [])),
      [
        { inputTokens: 30, outputTokens: 12 },
        { inputTokens: 50, outputTokens: 3 },
      ],
    );
    const streamed = await agent.send('And now?', { sessionId: 'u', onEvent: () => {} });
    assert.deepEqual(server.seen[2]!.body.stream_options, { include_usage: true });
    assert.equal(streamed.text, 'Still cold.');
    assert.deepEqual(streamed.usage, { inputTokens: 70, outputTokens: 4 });
    const none = await agent.send('?');
    assert.equal('usage' in none, false);
    assert.equal('usage' in none.messages[1]!, false);
  } finally {
    await server.close();
  }
});

test('openAICompatible: headers of its own are checked (closed options, header names, no line breaks)', () => {
  const invalid = (options: Record<string, unknown>, pattern: RegExp) =>
    assert.throws(
      () => openAICompatible({ baseURL: 'https://llm.example/v1', model: 'm', ...options } as never),
      (e: unknown) => e instanceof AuthConfigError && pattern.test(e.message) && !e.message.includes('sk-'),
    );
  invalid({ header: { a: 'b' } }, /unknown option "header" \(did you mean "headers"\?\)/);
  invalid({ headers: { 'a b': 'c' } }, /openAICompatible\(\): headers: "a b" must be a header name/);
  invalid({ headers: { 'x-key': 'sk-1\nx' } }, /openAICompatible\(\): headers: "x-key" must be/);
  invalid({ headers: 'x' }, /openAICompatible\(\): headers must be an object/);
});
