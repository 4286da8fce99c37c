// The MCP route's wire at the 2026-07-28 specification (design §29): ids echoed as written, the
// JSON-RPC body of a 429, and what clients parse of it, through agentHandler() on every runtime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { idSource } from '../../src/http/json-rpc.ts';

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
