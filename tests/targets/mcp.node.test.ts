// "mcp": true in agentward.json (design §18): the route on every build target that serves the
// agent's routes, run for real: the cloudflare-worker build inside workerd, the node-server
// build as `node server.js`, and `agentward start` on the directory.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { build } from '../../src/targets/build.ts';
import { readAgentDir } from '../../src/agent-dir/agent-dir.ts';
import {
  BAKED_TOKEN,
  ENV_TOKEN,
  bearer,
  fixture,
  root,
  startBuiltServer,
  startNodeServer,
  tempFolder,
  writeDir,
} from '../helpers/build.ts';
import { startBuiltWorker } from '../helpers/worker.ts';

const settings = (extra: Record<string, unknown>) =>
  JSON.stringify({ ...JSON.parse(readFileSync(join(fixture('plain'), 'agentward.json'), 'utf8')), ...extra });

function mcpDir(t: Parameters<typeof tempFolder>[0], mcp: unknown = true): string {
  return writeDir(tempFolder(t), { 'agentward.json': settings({ mcp }) }, fixture('plain'));
}

const rpc = (id: number, method: string, params?: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params && { params }) });

async function call(
  fetcher: (url: string, init: RequestInit) => Promise<Response>,
  url: string,
  token: string | undefined,
  body: string,
  headers: Record<string, string> = {},
) {
  const response = await fetcher(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token && { authorization: bearer(token) }),
      ...headers,
    },
    body,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}

/** The same conversation against any target: list, ask, continue, and the refusals around it. */
async function converse(
  fetcher: (url: string, init: RequestInit) => Promise<Response>,
  url: string,
  token: string,
  reply: RegExp,
) {
  const refused = await call(fetcher, url, undefined, rpc(1, 'tools/list'));
  assert.equal(refused.status, 401, 'behind the same auth as every route');
  const list = await call(fetcher, url, token, rpc(2, 'tools/list'));
  assert.equal(list.status, 200);
  // The plain agent has no tool that waits for approval: decide is not offered.
  assert.deepEqual(
    list.body.result.tools.map((tool: { name: string }) => tool.name),
    ['ask'],
  );
  const first = await call(
    fetcher,
    url,
    token,
    rpc(3, 'tools/call', { name: 'ask', arguments: { message: 'hello over MCP' } }),
  );
  assert.equal(first.status, 200);
  const { structuredContent, content, isError } = first.body.result;
  assert.equal(isError, false);
  assert.equal(structuredContent.status, 'completed');
  assert.equal(content[0].type, 'text');
  assert.equal(content[0].text, structuredContent.text);
  assert.match(structuredContent.text, reply);
  const second = await call(
    fetcher,
    url,
    token,
    rpc(4, 'tools/call', { name: 'ask', arguments: { message: 'again', sessionId: structuredContent.sessionId } }),
  );
  assert.equal(
    second.body.result.structuredContent.sessionId,
    structuredContent.sessionId,
    'the conversation continues',
  );
  const get = await fetcher(url, { headers: { authorization: bearer(token) } });
  assert.equal(get.status, 405);
  assert.equal(get.headers.get('allow'), 'POST');
  await get.body?.cancel();
  const foreign = await call(fetcher, url, token, rpc(5, 'ping'), { origin: 'https://evil.example' });
  assert.equal(foreign.status, 403, 'a page of another origin is refused');
}

describe('"mcp": true in agentward.json', () => {
  test('is a boolean: anything else is an error naming the field', async (t) => {
    await assert.rejects(readAgentDir(mcpDir(t, 'yes')), /"mcp" must be true or false/);
    assert.equal((await readAgentDir(mcpDir(t))).settings.mcp, true);
  });

  test('cloudflare-worker: POST <base>/mcp inside workerd, behind AGENT_API_TOKEN, each ask in its session Durable Object', async (t) => {
    const out = join(tempFolder(t), 'out');
    const lines: string[] = [];
    await build(mcpDir(t), { target: 'cloudflare-worker', out, log: (line) => lines.push(line) });
    assert.match(lines.join('\n'), /POST \/agent\/mcp \(MCP: the tool ask\)/);
    const worker = await startBuiltWorker(out, { AGENT_API_TOKEN: ENV_TOKEN });
    t.after(() => worker.dispose());
    await converse((url, init) => worker.fetch(url, init), 'http://worker/agent/mcp', ENV_TOKEN, /hello over MCP/);
  });

  test('cloudflare-worker without "mcp": no such route', async (t) => {
    const out = join(tempFolder(t), 'out');
    await build(fixture('plain'), { target: 'cloudflare-worker', out, log: () => {} });
    const worker = await startBuiltWorker(out, { AGENT_API_TOKEN: ENV_TOKEN });
    t.after(() => worker.dispose());
    assert.equal(
      (await call((url, init) => worker.fetch(url, init), 'http://worker/agent/mcp', ENV_TOKEN, rpc(1, 'ping'))).status,
      404,
    );
  });

  test('node-server: the built server.js serves the route', async (t) => {
    const out = join(tempFolder(t), 'out');
    await build(mcpDir(t), { target: 'node-server', out, log: () => {} });
    const server = await startBuiltServer(out);
    t.after(() => server.stop());
    // The plain agent answers with the principal it runs as: the same one POST <base> gives it.
    await converse(fetch, `${server.agentUrl}/mcp`, BAKED_TOKEN, /^api-token:api-token$/);
  });

  test('agentward start on the directory serves the route', async (t) => {
    const server = await startNodeServer([join(root, 'src', 'cli', 'main.ts'), 'start', mcpDir(t), '--quiet']);
    t.after(() => server.stop());
    // The plain agent answers with the principal it runs as: the same one POST <base> gives it.
    await converse(fetch, `${server.agentUrl}/mcp`, BAKED_TOKEN, /^api-token:api-token$/);
  });
});
