// Design §28 in workerd (Miniflare): the handler's and the run's spans through a structural
// tracer, nested through AsyncLocalStorage (nodejs_als), and no credential in any of them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startWorker, type RunningWorker } from '../helpers/workerd.ts';

const API_TOKEN = 'workerd-telemetry-token_0123456789';
let worker: RunningWorker;

before(async () => {
  worker = await startWorker({
    entry: 'tests/helpers/workerd/telemetry-worker.ts',
    bindings: { API_TOKEN },
    compatibilityFlags: ['nodejs_als'],
    esbuild: { external: ['node:async_hooks'] },
  });
});
after(async () => {
  await worker?.dispose();
});

const post = (path: string, body: unknown, authorization?: string) =>
  worker.fetch(`http://worker${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(authorization !== undefined && { authorization }),
    },
    body: JSON.stringify(body),
  });

interface Spans {
  tree: string[];
  spans: { name: string; attributes: Record<string, unknown>; links: unknown[] }[];
}
const spans = async (): Promise<Spans> => (await worker.fetch('http://worker/__spans')).json() as Promise<Spans>;

test('workerd: a send that pauses for an approval, a refused token and an MCP call, each in its spans, none holding the token', async () => {
  const sent = await post('/', { message: 'deploy' }, `Bearer ${API_TOKEN}`);
  assert.equal(sent.status, 200, await sent.clone().text());
  const sendSpans = await spans();
  assert.deepEqual(sendSpans.tree, [
    'agentward send < root',
    'invoke_agent edge < agentward send',
    'chat echo < invoke_agent edge',
  ]);
  const request = sendSpans.spans.find((span) => span.name === 'agentward send')!;
  assert.equal(request.attributes['agentward.auth.outcome'], 'accepted');
  assert.equal(request.attributes['agentward.auth.authenticator'], 'api-token');

  const refused = await post('/', { message: 'hi' }, `Bearer ${API_TOKEN}x`);
  assert.equal(refused.status, 401);
  const refusedSpans = await spans();
  assert.deepEqual(refusedSpans.tree, ['agentward send < root']);
  assert.equal(refusedSpans.spans[0]!.attributes['agentward.auth.refusal_reason'], 'mismatch');

  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const called = await post(
    '/mcp',
    {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'ask', arguments: { message: 'hi' }, _meta: { traceparent } },
    },
    `Bearer ${API_TOKEN}`,
  );
  assert.equal(called.status, 200, await called.clone().text());
  const mcpSpans = await spans();
  assert.deepEqual(mcpSpans.tree, [
    'agentward mcp < root',
    'tools/call ask < agentward mcp',
    'invoke_agent edge < tools/call ask',
    'chat echo < invoke_agent edge',
  ]);
  const call = mcpSpans.spans.find((span) => span.name === 'tools/call ask')!;
  assert.equal(call.attributes['jsonrpc.request.id'], '3');
  assert.equal(call.links.length, 1);

  const text = JSON.stringify([sendSpans, refusedSpans, mcpSpans]);
  assert.ok(!text.includes(API_TOKEN), 'no span holds the token');
});
