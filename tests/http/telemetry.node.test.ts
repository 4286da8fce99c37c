// Design §28 with the real OpenTelemetry SDK: the route handler's span of each request (the
// operation, the auth outcome, the refusing limit, the principal), the MCP tools/call span with
// its _meta.traceparent link, and never a credential in any attribute or event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Model, Store, Tool } from '../../src/agent/index.ts';
import { apiToken, basic } from '../../src/auth/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { parseTraceparent } from '../../src/http/telemetry.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { sdkTracer, spanNamed, spanTree, withActiveSpan } from '../helpers/otel.ts';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

const otel = sdkTracer();
const TOKEN = 'tel-3f9a0c2d7b1e4a5f8c6d0e2b4a7f9c1d';
const PASSWORD = 'correct-horse-battery-staple-42';
const BASIC = `Basic ${btoa(`ada:${PASSWORD}`)}`;
const BASE = 'https://agent.example.com/agent';

const deploy: Tool<{ env: string }> = {
  name: 'deploy',
  description: 'Deploys the app',
  parameters: { type: 'object', properties: { env: { type: 'string' } } },
  needsApproval: true,
  execute: (args) => ({ deployed: args.env }),
};

function setup(
  options: { recordContent?: boolean; recordPrincipal?: boolean; limits?: unknown; model?: Model; store?: Store } = {},
) {
  const telemetry = {
    tracer: otel.tracer,
    ...(options.recordContent !== undefined && { recordContent: options.recordContent }),
    ...(options.recordPrincipal !== undefined && { recordPrincipal: options.recordPrincipal }),
  };
  const agent = createAgent({
    name: 'ops',
    model: options.model ?? echoModel(),
    tools: [deploy],
    store: options.store ?? memoryStore(),
    telemetry,
  });
  return agentHandler(agent, {
    basePath: '/agent',
    auth: [apiToken(TOKEN, { id: 'ci-bot' }), basic({ users: { ada: PASSWORD } })],
    mcp: true,
    telemetry,
    ...(options.limits !== undefined && { limits: options.limits as never }),
  });
}

const post = (handler: (r: Request) => Promise<Response>, path: string, body: unknown, authorization?: string) =>
  handler(
    new Request(`${BASE}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(authorization !== undefined && { authorization }),
      },
      body: JSON.stringify(body),
    }),
  );

/** Every attribute, event (with its attributes), link and status message of `spans`, as text. */
const exported = (spans: readonly ReadableSpan[]) =>
  JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events, span.links, span.status]));

test('agentHandler({ telemetry }) is checked like every option: AuthConfigError naming the key', () => {
  const agent = createAgent({ name: 't', model: echoModel() });
  assertConfigError(
    () => agentHandler(agent, { telemetry: { tracer: otel.tracer, recordPrincipals: false } as never }),
    'agentHandler(): telemetry',
    'misspelled recordPrincipal',
  );
  assertConfigError(() => agentHandler(agent, { telemetry: { tracer: null } as never }), 'agentHandler()', 'no tracer');
});

test('a send with a tool call and an approval: agentward send and agentward decide parent the runs', async () => {
  otel.reset();
  const handler = setup();
  const sent = await post(handler, '', { message: '/tool deploy {"env":"prod"}' }, `Bearer ${TOKEN}`);
  assert.equal(sent.status, 200);
  const paused = (await sent.json()) as { sessionId: string; approvals: { id: string }[] };
  const first = otel.spans();
  assert.deepEqual(spanTree(first), [
    'agentward send < root',
    'invoke_agent ops < agentward send',
    'chat echo < invoke_agent ops',
  ]);
  const request = spanNamed(first, 'agentward send');
  assert.deepEqual(request.attributes, {
    'agentward.operation': 'send',
    'agentward.auth.outcome': 'accepted',
    'agentward.auth.authenticator': 'api-token',
    'enduser.id': 'ci-bot',
    'http.response.status_code': 200,
  });
  assert.equal(spanNamed(first, 'invoke_agent ops').attributes['gen_ai.conversation.id'], paused.sessionId);

  otel.reset();
  const decided = await post(handler, `/approvals/${paused.approvals[0]!.id}`, { approved: true }, BASIC);
  assert.equal(decided.status, 200);
  const second = otel.spans();
  assert.deepEqual(spanTree(second), [
    'agentward decide < root',
    'invoke_agent ops < agentward decide',
    'execute_tool deploy < invoke_agent ops',
    'chat echo < invoke_agent ops',
  ]);
  const decide = spanNamed(second, 'agentward decide');
  assert.equal(decide.attributes['agentward.operation'], 'decide');
  assert.equal(decide.attributes['agentward.auth.authenticator'], 'basic');
  assert.equal(decide.attributes['enduser.id'], 'ada');
  assert.equal(spanNamed(second, 'execute_tool deploy').attributes['agentward.approval.outcome'], 'approved');
});

test('a refused request (401): auth outcome refused, with the onRefused reason and the entry, no principal', async () => {
  otel.reset();
  const heard: unknown[] = [];
  const agent = createAgent({ name: 'ops', model: echoModel() });
  const handler = agentHandler(agent, {
    auth: apiToken(TOKEN),
    onRefused: (refusal) => heard.push(refusal),
    telemetry: { tracer: otel.tracer },
  });
  const response = await handler(
    new Request('https://agent.example.com/', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN.replace('3f', '4f')}`, 'content-type': 'application/json' },
      body: '{"message":"hi"}',
    }),
  );
  assert.equal(response.status, 401);
  const [span] = otel.spans();
  assert.deepEqual(span!.attributes, {
    'agentward.operation': 'send',
    'agentward.auth.outcome': 'refused',
    'agentward.auth.entry': 'apiToken',
    'agentward.auth.refusal_reason': 'mismatch',
    'http.response.status_code': 401,
  });
  assert.equal(span!.status.code, 0, 'a 4xx is the caller’s, not an error of the server');
  assert.deepEqual(heard, [{ entry: 'apiToken', reason: 'mismatch' }], 'the operator’s listener still hears it');
});

test('a refused request without any credential: refused, without a reason (no entry refused a token)', async () => {
  otel.reset();
  const response = await post(setup(), '', { message: 'hi' });
  assert.equal(response.status, 401);
  const span = spanNamed(otel.spans(), 'agentward send');
  assert.equal(span.attributes['agentward.auth.outcome'], 'refused');
  assert.equal(span.attributes['agentward.auth.refusal_reason'], undefined);
});

test('a 429 names the limit policy that refused it', async () => {
  otel.reset();
  const handler = setup({ limits: { requests: { limit: 1, windowSec: 60 } } });
  assert.equal((await post(handler, '', { message: 'one' }, `Bearer ${TOKEN}`)).status, 200);
  otel.reset();
  const refused = await post(handler, '', { message: 'two' }, `Bearer ${TOKEN}`);
  assert.equal(refused.status, 429);
  const span = spanNamed(otel.spans(), 'agentward send');
  assert.equal(span.attributes['agentward.limit.policy'], 'requests');
  assert.equal(span.attributes['agentward.auth.outcome'], 'accepted');
  assert.equal(span.attributes['http.response.status_code'], 429);
  assert.deepEqual(spanTree(otel.spans()), ['agentward send < root'], 'no run started');
});

test('limits.failures: the 429 before auth names the policy failures and no auth outcome', async () => {
  otel.reset();
  const agent = createAgent({ name: 'ops', model: echoModel() });
  const handler = agentHandler(agent, {
    auth: apiToken(TOKEN),
    limits: { failures: { limit: 1, windowSec: 60 }, clientAddress: () => '203.0.113.9' },
    telemetry: { tracer: otel.tracer },
  });
  const wrong = () =>
    handler(
      new Request('https://agent.example.com/', {
        method: 'POST',
        headers: { authorization: 'Bearer wrong-token-wrong-token-wrong' },
        body: '{"message":"hi"}',
      }),
    );
  assert.equal((await wrong()).status, 401);
  otel.reset();
  assert.equal((await wrong()).status, 429);
  const [span] = otel.spans();
  assert.equal(span!.attributes['agentward.limit.policy'], 'failures');
  assert.equal(span!.attributes['agentward.auth.outcome'], undefined);
});

test('recordPrincipal: false leaves out enduser.id and the issuer, not the outcome', async () => {
  otel.reset();
  await post(setup({ recordPrincipal: false }), '', { message: 'hi' }, `Bearer ${TOKEN}`);
  const span = spanNamed(otel.spans(), 'agentward send');
  assert.equal(span.attributes['enduser.id'], undefined);
  assert.equal(span.attributes['agentward.principal.issuer'], undefined);
  assert.equal(span.attributes['agentward.auth.outcome'], 'accepted');
  assert.equal(span.attributes['agentward.auth.authenticator'], 'api-token');
});

test('an MCP tools/call: a SERVER span with the MCP attributes, its _meta.traceparent a link', async () => {
  otel.reset();
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const spanId = '00f067aa0ba902b7';
  const response = await post(
    setup(),
    '/mcp',
    {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'ask', arguments: { message: 'hi' }, _meta: { traceparent: `00-${traceId}-${spanId}-01` } },
    },
    `Bearer ${TOKEN}`,
  );
  assert.equal(response.status, 200);
  const spans = otel.spans();
  assert.deepEqual(spanTree(spans), [
    'agentward mcp < root',
    'tools/call ask < agentward mcp',
    'invoke_agent ops < tools/call ask',
    'chat echo < invoke_agent ops',
  ]);
  const call = spanNamed(spans, 'tools/call ask');
  assert.equal(call.kind, 1);
  assert.deepEqual(call.attributes, {
    'mcp.method.name': 'tools/call',
    'network.transport': 'tcp',
    'jsonrpc.request.id': '7',
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'ask',
  });
  assert.equal(call.links.length, 1);
  assert.deepEqual(
    { traceId: call.links[0]!.context.traceId, spanId: call.links[0]!.context.spanId },
    { traceId, spanId },
  );
  assert.notEqual(call.spanContext().traceId, traceId, 'a link, not a parent: the handler’s trace goes on');
});

test('an MCP span carries mcp.protocol.version, the revision the request names (its MCP-Protocol-Version header, or 2026-07-28 in _meta), and network.transport tcp (design §28)', async () => {
  for (const [version, meta] of [
    ['2025-11-25', undefined],
    ['2025-06-18', undefined],
    ['2026-07-28', { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }],
  ] as const) {
    otel.reset();
    const response = await setup()(
      new Request(`${BASE}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${TOKEN}`,
          'mcp-protocol-version': version,
          ...(meta && { 'mcp-method': 'tools/call', 'mcp-name': 'ask' }),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'ask', arguments: { message: 'hi' }, ...(meta && { _meta: meta }) },
        }),
      }),
    );
    assert.equal(response.status, 200, await response.clone().text());
    const { attributes } = spanNamed(otel.spans(), 'tools/call ask');
    assert.equal(attributes['mcp.protocol.version'], version);
    assert.equal(attributes['network.transport'], 'tcp');
  }
});

test('an MCP span names the JSON-RPC id as the request wrote it: a string without its quotes, an integer past 2^53 exactly', async () => {
  for (const [id, expected] of [
    ['"call-1"', 'call-1'],
    ['"a\\"b"', 'a"b'],
    ['9007199254740993', '9007199254740993'],
  ]) {
    otel.reset();
    const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"ask","arguments":{"message":"hi"}}}`;
    const response = await setup()(
      new Request(`${BASE}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${TOKEN}`,
        },
        body,
      }),
    );
    assert.equal(response.status, 200);
    assert.equal(spanNamed(otel.spans(), 'tools/call ask').attributes['jsonrpc.request.id'], expected, id);
  }
});

test('an MCP call with a traceparent that is not one (bad version, zero ids, wrong type) gets no link', async () => {
  for (const traceparent of [
    `ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`,
    `00-00000000000000000000000000000000-00f067aa0ba902b7-01`,
    `00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01`,
    `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra`,
    `00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01`,
    42,
  ]) {
    assert.equal(parseTraceparent(traceparent), undefined, String(traceparent));
    otel.reset();
    await post(
      setup(),
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 'x',
        method: 'tools/call',
        params: { name: 'ask', arguments: { message: 'hi' }, _meta: { traceparent } },
      },
      `Bearer ${TOKEN}`,
    );
    assert.equal(spanNamed(otel.spans(), 'tools/call ask').links.length, 0, String(traceparent));
  }
  assert.deepEqual(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later'), {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    traceFlags: 1,
    isRemote: true,
  });
});

test('a model failure through the handler: ERROR with error.type MODEL_ERROR on chat and the run', async () => {
  otel.reset();
  const failing: Model = {
    modelId: 'broken',
    async generate() {
      throw new Error('provider down');
    },
  };
  const response = await post(setup({ model: failing }), '', { message: 'hi' }, `Bearer ${TOKEN}`);
  assert.equal(response.status, 502);
  const spans = otel.spans();
  for (const name of ['chat broken', 'invoke_agent ops']) {
    assert.equal(spanNamed(spans, name).status.code, 2, name);
    assert.equal(spanNamed(spans, name).attributes['error.type'], 'MODEL_ERROR', name);
  }
  const request = spanNamed(spans, 'agentward send');
  assert.equal(request.attributes['http.response.status_code'], 502);
  assert.equal(request.status.code, 2);
});

test('a failure the handler answers itself (a store that is down) still ends the request’s span, ERROR with the status', async () => {
  otel.reset();
  const down = Object.assign(new Error('connection refused'), { code: 'STORE_UNAVAILABLE' });
  const store = {
    ...memoryStore(),
    withSession: undefined,
    saveSession: async () => {
      throw down;
    },
  };
  const response = await post(setup({ store }), '', { message: 'hi' }, `Bearer ${TOKEN}`);
  assert.equal(response.status, 503);
  const spans = otel.spans();
  assert.deepEqual(spanTree(spans), [
    'agentward send < root',
    'invoke_agent ops < agentward send',
    'chat echo < invoke_agent ops',
  ]);
  const request = spanNamed(spans, 'agentward send');
  assert.equal(request.attributes['http.response.status_code'], 503);
  assert.equal(request.status.code, 2);
  assert.equal(spanNamed(spans, 'invoke_agent ops').attributes['error.type'], 'STORE_UNAVAILABLE');
});

test('with an HTTP instrumentation’s span active, the handler’s span nests under it', async () => {
  otel.reset();
  const handler = setup();
  await withActiveSpan(otel.tracer, 'POST', () => post(handler, '', { message: 'hi' }, `Bearer ${TOKEN}`));
  assert.deepEqual(spanTree(otel.spans()).slice(0, 2), ['POST < root', 'agentward send < POST']);
});

test('no span attribute or event ever holds the bearer token, the Basic password or an Authorization value', async () => {
  const values = [TOKEN, PASSWORD, `Bearer ${TOKEN}`, BASIC, btoa(`ada:${PASSWORD}`)];
  const wrongToken = `${TOKEN}x`;
  const wrongBasic = `Basic ${btoa(`ada:${PASSWORD}!`)}`;
  const all: ReadableSpan[] = [];
  for (const recordContent of [false, true]) {
    otel.reset();
    const handler = setup({ recordContent, limits: { requests: { limit: 3, windowSec: 60 } } });
    const sent = await post(handler, '', { message: '/tool deploy {"env":"prod"}' }, `Bearer ${TOKEN}`);
    const { approvals } = (await sent.json()) as { approvals: { id: string }[] };
    await post(handler, `/approvals/${approvals[0]!.id}`, { approved: true }, BASIC);
    await post(handler, '', { message: 'hi' }, `Bearer ${wrongToken}`);
    await post(handler, '', { message: 'hi' }, wrongBasic);
    await post(
      handler,
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask', arguments: { message: 'hi' } } },
      BASIC,
    );
    for (let i = 0; i < 3; i++) await post(handler, '', { message: 'again' }, `Bearer ${TOKEN}`);
    all.push(...otel.spans());
  }
  assert.ok(
    all.some((span) => span.attributes['agentward.limit.policy'] === 'requests'),
    'a 429 was traced',
  );
  assert.ok(
    all.some((span) => span.attributes['agentward.auth.outcome'] === 'refused'),
    'refusals were traced',
  );
  const text = exported(all);
  for (const value of [...values, wrongToken, wrongBasic, btoa(`ada:${PASSWORD}!`)])
    assert.ok(!text.includes(value), `no span holds ${value.slice(0, 12)}…`);
  assert.ok(!/authorization|cookie|password/i.test(text), 'no attribute named after a credential');
});

test('a streamed send (/chat, server-sent events): the run’s spans end under the request’s, after the answer began', async () => {
  otel.reset();
  const handler = setup();
  const response = await handler(
    new Request(`${BASE}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ message: 'hello there' }),
    }),
  );
  assert.equal(response.status, 200);
  assert.match(await response.text(), /"hello /, "the stream carries the run's text");
  assert.deepEqual(spanTree(otel.spans()), [
    'agentward send < root',
    'invoke_agent ops < agentward send',
    'chat echo < invoke_agent ops',
  ]);
  assert.equal(spanNamed(otel.spans(), 'invoke_agent ops').attributes['agentward.run.status'], 'completed');
});

test('the useChat endpoint (/ui): a send’s span, its agentward.operation what the body asked for', async () => {
  otel.reset();
  const handler = setup();
  const response = await handler(
    new Request(`${BASE}/ui`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'ui-telemetry',
        trigger: 'submit-message',
        messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi there' }] }],
      }),
    }),
  );
  assert.equal(response.status, 200);
  await response.text();
  assert.deepEqual(spanTree(otel.spans()), [
    'agentward send < root',
    'invoke_agent ops < agentward send',
    'chat echo < invoke_agent ops',
  ]);
  assert.equal(spanNamed(otel.spans(), 'agentward send').attributes['agentward.operation'], 'send');
});
