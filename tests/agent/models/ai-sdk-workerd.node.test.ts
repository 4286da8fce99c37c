// AI SDK models in workerd (design §21): a Worker that bundles agentHandler with @ai-sdk/openai
// and @ai-sdk/anthropic models (tests/helpers/workerd/ai-sdk-worker.ts) against local servers speaking
// their wire: generate, the useChat stream with usage, an approval and its resume, and a
// provider error whose body stays out of the answer and the Worker's log.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startWorker, type RunningWorker } from '../../helpers/workerd.ts';
import { SECRET, wireServer, type Reply, type Wire } from '../../helpers/ai-sdk-wire.ts';
import { anthropicWire, openAIChatWire } from '../../helpers/provider-wires.ts';

const API_TOKEN = 'workerd-ai-sdk-token-0123456789';
const wires: Record<string, Wire> = { openai: openAIChatWire, anthropic: anthropicWire };
const scripts: Record<string, Reply[]> = { openai: [], anthropic: [] };
const servers: Awaited<ReturnType<typeof wireServer>>[] = [];
let worker: RunningWorker;

before(async () => {
  for (const name of Object.keys(wires)) servers.push(await wireServer(scripts[name]!));
  worker = await startWorker({
    entry: 'tests/helpers/workerd/ai-sdk-worker.ts',
    bindings: { OPENAI_URL: servers[0]!.baseURL, ANTHROPIC_URL: servers[1]!.baseURL, API_TOKEN },
  });
});
after(async () => {
  await worker?.dispose();
  for (const server of servers) await server.close();
});

const post = (path: string, body: unknown) =>
  worker.fetch(`http://worker${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${API_TOKEN}` },
    body: JSON.stringify(body),
  });

for (const [index, name] of Object.keys(wires).entries()) {
  const wire = wires[name]!;
  const server = () => servers[index]!;

  test(`workerd, ${wire.name}: POST <base> generates (the provider's JSON) with the settings on the wire, and answers with the usage`, async () => {
    scripts[name]!.push(wire.text('Hello from workerd.', [21, 5]));
    const response = await post(`/${name}`, { message: 'hi' });
    assert.equal(response.status, 200, await response.clone().text());
    const result = (await response.json()) as { text: string; usage: unknown };
    assert.equal(result.text, 'Hello from workerd.');
    assert.deepEqual(result.usage, { inputTokens: 21, outputTokens: 5 });
    const sent = wire.read(server().seen.at(-1)!.body);
    assert.equal(sent.stream, false);
    assert.equal(sent.settings.temperature, 0.25);
  });

  test(`workerd, ${wire.name}: the useChat stream passes the provider's SSE deltas on and finishes with the usage`, async () => {
    const { sse } = wire.streamText(['Streamed ', 'from ', 'workerd.'], [30, 3]) as { sse: string[] };
    scripts[name]!.push({ sse });
    const response = await post(`/${name}/ui`, {
      id: `ui-${name}`,
      trigger: 'submit-message',
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'stream' }] }],
    });
    assert.equal(response.status, 200);
    const chunks = (await response.text())
      .split('\n\n')
      .filter((block) => block.startsWith('data: {'))
      .map((block) => JSON.parse(block.slice(6)));
    assert.deepEqual(
      chunks.filter((chunk) => chunk.type === 'text-delta').map((chunk) => chunk.delta),
      ['Streamed ', 'from ', 'workerd.'],
    );
    assert.deepEqual(chunks.at(-1), {
      type: 'finish',
      finishReason: 'stop',
      messageMetadata: { usage: { inputTokens: 30, outputTokens: 3 } },
    });
    assert.equal(wire.read(server().seen.at(-1)!.body).stream, true);
  });

  test(`workerd, ${wire.name}: a tool call that needs approval pauses the run; the decision resumes it`, async () => {
    scripts[name]!.push(
      wire.toolCall('call_w', 'deploy', '{"service":"edge"}', [9, 2]),
      wire.text('Deployed.', [12, 1]),
    );
    const paused = (await (await post(`/${name}`, { message: 'deploy the edge' })).json()) as {
      status: string;
      approvals: { id: string; arguments: unknown }[];
    };
    assert.equal(paused.status, 'awaiting-approval');
    assert.deepEqual(paused.approvals[0]!.arguments, { service: 'edge' });
    const resumed = (await (
      await post(`/${name}/approvals/${paused.approvals[0]!.id}`, { approved: true })
    ).json()) as { text: string; usage: unknown };
    assert.equal(resumed.text, 'Deployed.');
    assert.deepEqual(resumed.usage, { inputTokens: 12, outputTokens: 1 });
    assert.equal(wire.read(server().seen.at(-1)!.body).toolOutput, 'deployed edge');
  });

  test(`workerd, ${wire.name}: a provider's 401 is a 502 whose answer and log hold the status, never the provider's body`, async () => {
    scripts[name]!.push(wire.error(401, SECRET));
    const response = await post(`/${name}`, { message: 'hi' });
    assert.equal(response.status, 502);
    assert.equal(await response.text(), '{"error":"The model failed"}');
    await worker.waitForLog((log) => log.message.includes('HTTP 401'));
    assert.doesNotMatch(JSON.stringify(worker.logs), /SECRET/);
  });
}
