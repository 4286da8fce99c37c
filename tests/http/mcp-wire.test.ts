// The MCP route's wire at the 2026-07-28 specification (design §29): ids echoed as written, the
// JSON-RPC body of a 429, and what clients parse of it, through agentHandler() on every runtime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import type { Model } from '../../src/agent/types.ts';
import { apiToken } from '../../src/auth/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { idSource } from '../../src/http/json-rpc.ts';
import type { Principal } from '../../src/agent/types.ts';
import { principalAgent } from '../helpers/http-agent.ts';

const alice: Principal = { type: 'user', id: 'alice', authenticator: 'test' };

const URL_MCP = 'https://agent.example.com/agent/mcp';
type Handler = (request: Request) => Promise<Response>;

async function postText(handler: Handler, body: string, headers: Record<string, string> = {}) {
  const response = await handler(
    new Request(URL_MCP, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body,
    }),
  );
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const open = () => agentHandler(createAgent({ name: 'echo', model: echoModel() }), { basePath: '/agent', mcp: true });

test('JSON-RPC ids are echoed as written: an integer beyond 2^53, an exponent, an escaped string (results and errors)', async () => {
  const handler = open();
  for (const id of [
    '9007199254740993',
    '-9007199254740993',
    '1e3',
    '10.0',
    '"\\u0041b"',
    '"a\\"b"',
    '123456789012345678901234567890',
  ]) {
    const ping = await postText(handler, `{"jsonrpc":"2.0","id":${id},"method":"ping"}`);
    assert.equal(ping.status, 200, id);
    assert.equal(ping.text, `{"jsonrpc":"2.0","id":${id},"result":{}}`);
    const unknown = await postText(handler, `{ "method" : "nope", "id" :\n ${id} , "jsonrpc":"2.0"}`);
    assert.equal(unknown.text, `{"jsonrpc":"2.0","id":${id},"error":{"code":-32601,"message":"Method not found"}}`);
    const version = await postText(handler, `{"jsonrpc":"2.0","id":${id},"method":"ping"}`, {
      'mcp-protocol-version': '2024-11-05',
    });
    assert.equal(version.status, 400);
    assert.ok(version.text.startsWith(`{"jsonrpc":"2.0","id":${id},"error":{"code":-32022`), version.text);
    const badVersion = await postText(handler, `{"jsonrpc":"1.0","id":${id},"method":"ping"}`);
    assert.ok(badVersion.text.startsWith(`{"jsonrpc":"2.0","id":${id},"error":{"code":-32600`), badVersion.text);
  }
});

test('the id echoed is the one JSON.parse keeps: the last of repeated members, never one nested deeper', async () => {
  const handler = open();
  const cases: [string, string][] = [
    ['{"jsonrpc":"2.0","id":1,"id":9007199254740993,"method":"ping"}', '9007199254740993'],
    ['{"jsonrpc":"2.0","params":{"id":5,"x":[{"id":6}]},"id":"top","method":"ping"}', '"top"'],
    ['{"params":{"_meta":{"id":"{"}},"\\u0069d":7,"jsonrpc":"2.0","method":"ping"}', '7'],
    ['{"jsonrpc":"2.0","method":"ping","params":{"a":"\\"id\\":3,"},"id":4}', '4'],
  ];
  for (const [body, id] of cases) {
    const answer = await postText(handler, body);
    assert.equal(answer.text, `{"jsonrpc":"2.0","id":${id},"result":{}}`, body);
  }
  assert.equal(idSource('{"id":{"a":1}}'), undefined);
  assert.equal(idSource('{"id":[1],"b":2}'), undefined);
  assert.equal(idSource('{"x":{"id":1}}'), undefined);
});

/** A handler whose every caller is one principal, with `limits`. */
const limited = (limits: Record<string, unknown>, agent = createAgent({ name: 'echo', model: echoModel() })) =>
  agentHandler(agent, { basePath: '/agent', mcp: true, auth: apiToken(TOKEN), limits: limits as never });
const TOKEN = 'tok-0123456789abcdef';
const ask = (id: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"ask","arguments":{"message":"hi"}}}`;

test("a 429 on the MCP route is a JSON-RPC error with the request's id (-32000, Too Many Requests, data.retryAfter) beside Retry-After and the RateLimit fields", async () => {
  const auth = { authorization: `Bearer ${TOKEN}` };
  const requests = limited({ requests: { limit: 1, windowSec: 60 } });
  assert.equal((await postText(requests, ask('1'), auth)).status, 200);
  for (const id of ['9007199254740993', '"req-2"']) {
    const refused = await postText(requests, ask(id), auth);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('content-type'), 'application/json');
    assert.equal(refused.headers.get('cache-control'), 'no-store');
    assert.equal(refused.headers.get('ratelimit-policy'), '"requests";q=1;w=60');
    assert.match(refused.headers.get('ratelimit')!, /^"requests";r=0;t=\d+$/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60);
    assert.equal(
      refused.text,
      `{"jsonrpc":"2.0","id":${id},"error":{"code":-32000,"message":"Too Many Requests","data":{"retryAfter":${retryAfter}}}}`,
    );
  }
  // A spent tokens window refuses the call before it runs (the first spends "hi", "[]" and its answer: 4 of 3).
  const tokens = limited({ tokens: { limit: 3, windowSec: 60 } });
  assert.equal((await postText(tokens, ask('1'), auth)).status, 200);
  const spent = await postText(tokens, ask('"t"'), auth);
  assert.equal(spent.status, 429);
  assert.deepEqual(JSON.parse(spent.text).id, 't');
  assert.deepEqual(JSON.parse(spent.text).error.code, -32000);
  assert.match(spent.headers.get('agentward-tokens-policy')!, /"tokens"/);
});

test('a 429 of limits.concurrent on the MCP route is a JSON-RPC error too, retryAfter 1', async () => {
  let release: () => void = () => {};
  let started: () => void = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const running = new Promise<void>((resolve) => (started = resolve));
  const echo = echoModel();
  const slow: Model = { generate: async (request) => (started(), await gate, echo.generate(request)) };
  const handler = limited({ concurrent: 1 }, createAgent({ name: 'slow', model: slow }));
  const auth = { authorization: `Bearer ${TOKEN}` };
  const first = postText(handler, ask('1'), auth);
  await running;
  const refused = await postText(handler, ask('2'), auth);
  release();
  assert.equal((await first).status, 200);
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), '1');
  assert.equal(
    refused.text,
    '{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Too Many Requests","data":{"retryAfter":1}}}',
  );
});

/** Every schema below `schema` (itself included) with its path: properties, items, and the keywords that combine schemas. */
function* schemas(schema: Record<string, unknown>, path: string): Generator<[string, Record<string, unknown>]> {
  yield [path, schema];
  const { properties, items, additionalProperties, anyOf, oneOf, allOf } = schema as Record<string, never>;
  for (const [name, sub] of Object.entries((properties ?? {}) as Record<string, Record<string, unknown>>))
    yield* schemas(sub, `${path}.properties.${name}`);
  if (items !== undefined) yield* schemas(items, `${path}.items`);
  if (typeof additionalProperties === 'object') yield* schemas(additionalProperties, `${path}.additionalProperties`);
  for (const [keyword, list] of Object.entries({ anyOf, oneOf, allOf }))
    for (const [i, sub] of ((list ?? []) as Record<string, unknown>[]).entries())
      yield* schemas(sub, `${path}.${keyword}.${i}`);
}

test("every property at every depth of every tool's inputSchema and outputSchema has a type (the Inspector's --strict check)", async () => {
  const { agent } = principalAgent();
  const handler = agentHandler(agent, { basePath: '/agent', mcp: true, auth: () => alice });
  const listed = await postText(handler, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
  const { tools } = JSON.parse(listed.text).result as { tools: Record<string, Record<string, unknown>>[] };
  assert.deepEqual(
    tools.map((tool) => tool.name),
    ['ask', 'decide', 'read'],
  );
  const JSON_TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
  let checked = 0;
  for (const tool of tools) {
    for (const which of ['inputSchema', 'outputSchema']) {
      for (const [path, schema] of schemas(tool[which]!, `${tool.name}.${which}`)) {
        const types = [schema.type].flat();
        assert.ok(
          schema.type !== undefined && types.length > 0 && types.every((type) => JSON_TYPES.has(type as string)),
          `${path} has no JSON Schema type`,
        );
        checked++;
      }
    }
  }
  assert.ok(checked >= 20, `${checked} schemas checked`);
  const args = JSON.parse(listed.text).result.tools[0].outputSchema.properties.approvals.items.properties.arguments;
  assert.equal(typeof args.description, 'string');
});

test("the protected resource document is also at RFC 9728 §3.1's path for the MCP endpoint, without auth; the resource's own path stays", async () => {
  const make = (resource: string, mcp = true) =>
    agentHandler(createAgent({ name: 'echo', model: echoModel() }), {
      basePath: '/agent',
      mcp,
      auth: apiToken(TOKEN),
      protectedResource: {
        resource,
        authorizationServers: ['https://id.example.com'],
        scopesSupported: ['agent:chat'],
      },
    });
  const get = (handler: Handler, path: string, method = 'GET') =>
    handler(new Request(`https://agent.example.com${path}`, { method }));
  const handler = make('https://agent.example.com/agent');
  for (const path of [
    '/.well-known/oauth-protected-resource/agent',
    '/.well-known/oauth-protected-resource/agent/mcp',
  ]) {
    const response = await get(handler, path);
    assert.equal(response.status, 200, path);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
    assert.deepEqual(await response.json(), {
      resource: 'https://agent.example.com/agent',
      authorization_servers: ['https://id.example.com'],
      scopes_supported: ['agent:chat'],
      bearer_methods_supported: ['header'],
    });
    assert.equal((await get(handler, path, 'POST')).status, 405, path);
  }
  // Nothing else under the well-known prefix is the document.
  for (const path of ['/.well-known/oauth-protected-resource/agent/chat', '/.well-known/oauth-protected-resource/mcp'])
    assert.equal((await get(handler, path)).status, 401, path);
  // Without the MCP route, or for a resource that does not cover the endpoint, the path is not the document's.
  assert.equal(
    (await get(make('https://agent.example.com/agent', false), '/.well-known/oauth-protected-resource/agent/mcp'))
      .status,
    401,
  );
  assert.equal(
    (await get(make('https://agent.example.com/other'), '/.well-known/oauth-protected-resource/agent/mcp')).status,
    401,
  );
  assert.equal(
    (await get(make('https://agent.example.com/ag'), '/.well-known/oauth-protected-resource/agent/mcp')).status,
    401,
  );
  // A resource at the origin's root covers every path: its document is at the root form and at the endpoint's.
  const root = make('https://agent.example.com');
  assert.equal((await get(root, '/.well-known/oauth-protected-resource')).status, 200);
  assert.equal((await get(root, '/.well-known/oauth-protected-resource/agent/mcp')).status, 200);
  // A resource that is the endpoint itself: its own path is the endpoint's.
  const endpoint = make('https://agent.example.com/agent/mcp');
  assert.equal((await get(endpoint, '/.well-known/oauth-protected-resource/agent/mcp')).status, 200);
});

test('the 429 of limits.failures on the MCP route, before auth and before the body is read, is a JSON-RPC error with id null', async () => {
  const handler = agentHandler(createAgent({ name: 'echo', model: echoModel() }), {
    basePath: '/agent',
    mcp: true,
    auth: apiToken(TOKEN),
    limits: { failures: { limit: 1, windowSec: 60 }, clientAddress: () => '192.0.2.7' },
  });
  const wrong = { authorization: 'Bearer wrong-token-0123456789' };
  assert.equal((await postText(handler, ask('1'), wrong)).status, 401);
  const refused = await postText(handler, ask('2'), wrong);
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('ratelimit-policy'), '"failures";q=1;w=60');
  const retryAfter = Number(refused.headers.get('retry-after'));
  assert.equal(
    refused.text,
    `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Too Many Requests","data":{"retryAfter":${retryAfter}}}}`,
  );
  // Other routes keep their body.
  const chat = await handler(
    new Request('https://agent.example.com/agent', { method: 'POST', headers: wrong, body: '{}' }),
  );
  assert.deepEqual(await chat.json(), { error: 'Too Many Requests' });
});
