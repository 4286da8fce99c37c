// Remote MCP tools through @ai-sdk/mcp (design §27): `(await createMCPClient({ transport })).tools()`
// is a ToolSet, and it is an agent's tools as it is, against a real MCP server: the MCP TypeScript
// SDK's McpServer over Streamable HTTP, behind this library's jwt() (through routeAuth). §21's
// validation and §26's argument rule stand before the server; an approval wraps a remote tool. The
// documented recipe (one record per source, the remote tools prefixed) runs in remote-tools-mcp.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { createMCPClient } from '@ai-sdk/mcp';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { jwt, routeAuth } from '../../src/auth/index.ts';
import { createAgent, echoModel, type Agent } from '../../src/index.ts';
import { toNodeListener } from '../../src/node.ts';
import { SECRET, hmacSigner, signToken } from '../helpers/jwt.ts';

const _root = fileURLToPath(new URL('../..', import.meta.url));
const ISSUER = 'https://id.example.com';
let server: Server;
let url: string;
/** The calls the MCP server ran: tool name, arguments, the caller its jwt() accepted. */
const ran: { tool: string; args: unknown; caller: string }[] = [];

const sign = await hmacSigner(SECRET);
/** A token for `audience` (the MCP server's URL), valid now. */
async function tokenFor(audience: string, sub = 'support-agent'): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signToken(
    { alg: 'HS256', typ: 'at+jwt' },
    { sub, iss: ISSUER, aud: audience, iat: now, exp: now + 600 },
    sign,
  );
}

before(async () => {
  let authenticate: ReturnType<typeof routeAuth> | undefined;
  server = createServer(
    toNodeListener(async (request) => {
      const result = await (authenticate as ReturnType<typeof routeAuth>)(request);
      if (!result.ok) return result.response;
      const caller = result.principal.id;
      const mcp = new McpServer({ name: 'crm', version: '1.0.0' });
      mcp.registerTool(
        'find_customer',
        { description: 'Finds a customer by name', inputSchema: { name: z.string() } },
        async (args) => {
          ran.push({ tool: 'find_customer', args, caller });
          return { content: [{ type: 'text', text: `${args.name}: customer since 2019` }] };
        },
      );
      mcp.registerTool(
        'close_account',
        { description: 'Closes an account', inputSchema: { name: z.string() } },
        async (args) => {
          ran.push({ tool: 'close_account', args, caller });
          return { content: [{ type: 'text', text: `closed ${args.name}` }] };
        },
      );
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await mcp.connect(transport);
      return transport.handleRequest(request);
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  authenticate = routeAuth([jwt({ secret: SECRET, issuer: ISSUER, audience: url })]);
});

after(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const connect = async (token: string) =>
  createMCPClient({ transport: { type: 'http', url, headers: { authorization: `Bearer ${token}` } } });

/** Sends `message` (echoModel: a line `/tool NAME {json}` calls the tool) and answers the run. */
const run = (agent: Agent, message: string) => agent.send(message);

test("@ai-sdk/mcp's client.tools() against the MCP SDK's McpServer over Streamable HTTP behind jwt(): a ToolSet that is the agent's tools as it is", async () => {
  const client = await connect(await tokenFor(url));
  try {
    const tools = await client.tools();
    assert.deepEqual(Object.keys(tools).sort(), ['close_account', 'find_customer']);
    let sent: unknown;
    const model = echoModel();
    const agent = createAgent({
      name: 'support',
      model: { generate: (request) => ((sent ??= request.tools), model.generate(request)) },
      tools,
    });
    const before = ran.length;
    const result = await run(agent, '/tool find_customer {"name":"Acme"}');
    assert.equal(result.text, 'Tool results: find_customer: Acme: customer since 2019');
    assert.deepEqual(ran.slice(before), [{ tool: 'find_customer', args: { name: 'Acme' }, caller: 'support-agent' }]);
    const spec = (sent as { name: string; description: string; parameters: Record<string, unknown> }[]).find(
      (tool) => tool.name === 'find_customer',
    );
    assert.equal(spec?.description, 'Finds a customer by name');
    assert.deepEqual(spec?.parameters.required, ['name']);
    assert.equal(spec?.parameters.additionalProperties, false);
  } finally {
    await client.close();
  }
});

test("arguments the MCP tool's schema refuses (a wrong type, an unknown key, a __proto__ key) never reach the MCP server; the model is told the paths", async () => {
  const client = await connect(await tokenFor(url));
  try {
    const agent = createAgent({ name: 'support', model: echoModel(), tools: await client.tools() });
    const before = ran.length;
    const told = [];
    for (const args of ['{"name":7}', '{"name":"Acme","limit":3}', '{"name":"Acme","__proto__":{"admin":true}}'])
      told.push((await run(agent, `/tool find_customer ${args}`)).text);
    assert.deepEqual(told, [
      'Tool results: find_customer: Error: tool "find_customer": invalid arguments: name: expected string',
      'Tool results: find_customer: Error: tool "find_customer": invalid arguments: limit: is not allowed',
      'Tool results: find_customer: Error: tool "find_customer": invalid arguments: __proto__: is not allowed',
    ]);
    assert.equal(ran.length, before, 'the server ran nothing');
  } finally {
    await client.close();
  }
});

test('a remote tool given needsApproval waits for a person; the decision calls the server', async () => {
  const client = await connect(await tokenFor(url));
  try {
    const tools = await client.tools();
    const agent = createAgent({
      name: 'support',
      model: echoModel(),
      tools: { ...tools, close_account: { ...tools.close_account!, needsApproval: true } },
    });
    const before = ran.length;
    const paused = await run(agent, '/tool close_account {"name":"Acme"}');
    assert.equal(paused.status, 'awaiting-approval');
    assert.equal(ran.length, before);
    const resumed = await agent.decide(paused.approvals[0]!.id, { approved: true });
    assert.equal(resumed.text, 'Tool results: close_account: closed Acme');
    assert.deepEqual(ran.at(-1), { tool: 'close_account', args: { name: 'Acme' }, caller: 'support-agent' });
  } finally {
    await client.close();
  }
});

test("the MCP server's jwt() is the wall: no token, or a token for another audience, and the client cannot connect", async () => {
  for (const token of ['', await tokenFor('https://another.example.com/mcp')])
    await assert.rejects(
      createMCPClient({
        transport: { type: 'http', url, headers: token === '' ? {} : { authorization: `Bearer ${token}` } },
      }),
    );
});
