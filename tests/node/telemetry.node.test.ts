// Design §28 on the node server: serve({ telemetry }) traces each request as agentHandler does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { apiToken, AuthConfigError } from '../../src/auth/index.ts';
import { serve } from '../../src/node/index.ts';
import { sdkTracer, spanNamed, spanTree } from '../helpers/otel.ts';

const TOKEN = 'serve-telemetry-token-0123456789';

test('serve({ telemetry }): each request in its agentward span, the run under it, the principal on it', async () => {
  const otel = sdkTracer();
  const telemetry = { tracer: otel.tracer };
  const server = await serve({
    agent: createAgent({ name: 'srv', model: echoModel(), telemetry }),
    auth: apiToken(TOKEN, { id: 'bot' }),
    telemetry,
    port: 0,
    log: 'off',
  });
  try {
    const response = await fetch(`${server.url}/agent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{"message":"hi"}',
    });
    assert.equal(response.status, 200);
    await response.text();
    assert.deepEqual(spanTree(otel.spans()), [
      'agentward send < root',
      'invoke_agent srv < agentward send',
      'chat echo < invoke_agent srv',
    ]);
    const span = spanNamed(otel.spans(), 'agentward send');
    assert.equal(span.attributes['enduser.id'], 'bot');
    assert.equal(span.attributes['http.response.status_code'], 200);
    assert.ok(!JSON.stringify(otel.spans().map((s) => s.attributes)).includes(TOKEN));
  } finally {
    await server.close();
  }
});

test('serve(): a telemetry option that cannot work is AuthConfigError naming serve()', async () => {
  await assert.rejects(
    serve({ agent: createAgent({ name: 'srv', model: echoModel() }), telemetry: { tracer: 1 } as never, port: 0 }),
    (error: unknown) =>
      error instanceof AuthConfigError &&
      error.message ===
        'serve(): telemetry.tracer must be an OpenTelemetry Tracer (startActiveSpan or startSpan); got a number',
  );
});

test('serve({ agent: options, telemetry }): the agent it creates traces its runs with the same tracer', async () => {
  const otel = sdkTracer();
  const server = await serve({
    agent: { name: 'made', model: echoModel(), store: memoryStore() },
    telemetry: { tracer: otel.tracer },
    port: 0,
    log: 'off',
  });
  try {
    const response = await fetch(`${server.url}/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"message":"hi"}',
    });
    assert.equal(response.status, 200);
    await response.text();
    assert.deepEqual(spanTree(otel.spans()), [
      'agentward send < root',
      'invoke_agent made < agentward send',
      'chat echo < invoke_agent made',
    ]);
  } finally {
    await server.close();
  }
});
