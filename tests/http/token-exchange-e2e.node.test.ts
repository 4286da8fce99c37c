// Calls on the caller's behalf, end to end (design §27): a real authorization server
// (oidc-provider, with RFC 8693 added through registerGrantType: tests/helpers/token-exchange-server.ts)
// issues a user's token for the agent; an MCP client (the MCP TypeScript SDK's) calls the agent's MCP
// route (agentHandler with mcp and oidc()) with it; the agent's tool exchanges it with
// tokenExchange() and calls a second MCP server (the SDK's McpServer over Streamable HTTP behind
// jwt()), whose jwt() accepts the new token (its own audience, `act` naming the agent's client) and
// refuses the original. Once with client_secret_basic and the token endpoint discovered from
// `issuer`, once with private_key_jwt and the token endpoint configured.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { tool as aiTool } from 'ai';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { jwt, oidc, routeAuth, tokenExchange, type Exchange, type Principal } from '../../src/auth/index.ts';
import { agentHandler, createAgent, type Agent, type Model } from '../../src/index.ts';
import { toNodeListener } from '../../src/node.ts';
import { startTokenExchangeServer, type TokenExchangeServer } from '../helpers/token-exchange-server.ts';
import { readDocs } from '../helpers/docs.ts';

const BASIC_CLIENT = { id: 'support-agent', secret: 'support-agent-secret-0123456789' };
const KEY_CLIENT = 'support-agent-jwt';

type Handler = (request: Request) => Promise<Response>;
/** A node:http server on 127.0.0.1 whose handler is set once the URLs are known. */
async function listening(): Promise<{ server: Server; origin: string; serve(handler: Handler): void }> {
  let current: Handler = async () => new Response(null, { status: 503 });
  const server = createServer(toNodeListener((request) => current(request)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    server,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve: (handler) => void (current = handler),
  };
}

const close = (server: Server | undefined) =>
  new Promise<void>((resolve) => {
    if (server === undefined) return resolve();
    server.closeAllConnections();
    server.close(() => resolve());
  });

/** A model that asks the CRM about Acme, then answers with what the CRM said. */
const asksCrm: Model = {
  async generate({ messages }) {
    const last = messages.at(-1)!;
    if (last.role === 'tool') return { text: last.content };
    return { toolCalls: [{ id: 'call_crm', name: 'crm', arguments: { name: 'Acme' } }] };
  },
};

const root = fileURLToPath(new URL('../..', import.meta.url));
let authServer: TokenExchangeServer;
let agentSide: Awaited<ReturnType<typeof listening>>;
let crmSide: Awaited<ReturnType<typeof listening>>;
/** An HTTP API on the caller's behalf, for the README's example: GET /customers?name= behind jwt(). */
let apiSide: Awaited<ReturnType<typeof listening>>;
let agentUrl: string;
let crmUrl: string;
let privateJwk: JsonWebKey;
/** The exchange the agent's tool uses: each test sets its own. */
let exchange: Exchange;
/** What the CRM's jwt() accepted: the principal of each call. */
const crmSaw: Principal[] = [];

before(async () => {
  agentSide = await listening();
  crmSide = await listening();
  apiSide = await listening();
  agentUrl = `${agentSide.origin}/agent/mcp`;
  crmUrl = `${crmSide.origin}/mcp`;
  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const { key_ops: _o, ext: _e, ...publicJwk } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  const { key_ops: _po, ext: _pe, ...secret } = await crypto.subtle.exportKey('jwk', pair.privateKey);
  privateJwk = secret;
  authServer = await startTokenExchangeServer({
    agentResource: agentUrl,
    audiences: [crmUrl, apiSide.origin],
    agentClients: { basic: BASIC_CLIENT, privateKeyJwt: { id: KEY_CLIENT, publicJwk } },
  });
  const { issuer } = authServer;

  // The second service: the MCP SDK's own server, behind this library's jwt() for its own audience.
  const authenticate = routeAuth([jwt({ jwksUrl: `${issuer}/jwks`, issuer, audience: crmUrl })]);
  crmSide.serve(async (request) => {
    const result = await authenticate(request);
    if (!result.ok) return result.response;
    crmSaw.push(result.principal);
    const mcp = new McpServer({ name: 'crm', version: '1.0.0' });
    mcp.registerTool(
      'find_customer',
      { description: 'Finds a customer', inputSchema: { name: z.string() } },
      async ({ name }) => ({
        content: [{ type: 'text', text: `${name}: a customer of ${result.principal.id}` }],
      }),
    );
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await mcp.connect(transport);
    return transport.handleRequest(request);
  });

  const api = routeAuth([jwt({ jwksUrl: `${issuer}/jwks`, issuer, audience: apiSide.origin })]);
  apiSide.serve(async (request) => {
    const result = await api(request);
    if (!result.ok) return result.response;
    const name = new URL(request.url).searchParams.get('name');
    return Response.json({ name, for: result.principal.id, actor: result.principal.claims?.act });
  });

  // The agent: its tools are made per run, closing over the principal; the tool exchanges the
  // caller's token for one of the CRM's audience and calls the CRM's MCP server with it.
  const agent = createAgent({
    name: 'support',
    model: asksCrm,
    tools: ({ principal }) => ({
      crm: aiTool({
        description: 'Asks the CRM about a customer',
        inputSchema: z.object({ name: z.string() }),
        execute: async ({ name }) => {
          const { accessToken } = await exchange(principal, { audience: crmUrl });
          const client = new Client({ name: 'support-agent', version: '1.0.0' });
          await client.connect(
            new StreamableHTTPClientTransport(new URL(crmUrl), {
              requestInit: { headers: { authorization: `Bearer ${accessToken}` } },
            }),
          );
          try {
            const answer = await client.callTool({ name: 'find_customer', arguments: { name } });
            return (answer.content as { text: string }[])[0]!.text;
          } finally {
            await client.close();
          }
        },
      }),
    }),
  });
  agentSide.serve(agentHandler(agent, { basePath: '/agent', mcp: true, auth: [oidc({ issuer, audience: agentUrl })] }));
});

after(async () => {
  await close(agentSide?.server);
  await close(crmSide?.server);
  await close(apiSide?.server);
  await authServer?.close();
});

/** The MCP host: the SDK's client calls the agent's `ask` tool with the user's token. */
async function ask(userToken: string, message: string): Promise<{ text: string }> {
  const client = new Client({ name: 'mcp-host', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(agentUrl), {
      requestInit: { headers: { authorization: `Bearer ${userToken}` } },
    }),
  );
  try {
    const result = await client.callTool({ name: 'ask', arguments: { message } });
    assert.equal(result.isError, false, JSON.stringify(result.content));
    return result.structuredContent as { text: string };
  } finally {
    await client.close();
  }
}

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

const bearerTo = (url: string, token: string) =>
  fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });

test("client_secret_basic, the token endpoint discovered from issuer: the agent's tool exchanges the caller's token, and the CRM's jwt() accepts the new one (its audience, act naming the agent's client) and refuses the original", async () => {
  exchange = tokenExchange({ issuer: authServer.issuer, clientId: BASIC_CLIENT.id, clientSecret: BASIC_CLIENT.secret });
  const userToken = await authServer.userToken('ada');
  assert.equal(claimsOf(userToken).aud, agentUrl);
  const answer = await ask(userToken, 'Who is Acme?');
  assert.equal(answer.text, 'Acme: a customer of ada');
  const [seen] = authServer.exchanges.slice(-1);
  assert.deepEqual(seen, { clientId: BASIC_CLIENT.id, subjectToken: userToken, audience: [crmUrl] });
  const principal = crmSaw.at(-1)!;
  assert.equal(principal.id, 'ada');
  assert.equal(principal.issuer, authServer.issuer);
  assert.equal(principal.claims?.aud, crmUrl);
  assert.deepEqual(principal.claims?.act, { sub: BASIC_CLIENT.id });
  assert.equal(principal.claims?.client_id, BASIC_CLIENT.id);
  // The original token opens nothing at the CRM; the exchanged one nothing at the agent.
  const refused = await bearerTo(crmUrl, userToken);
  assert.equal(refused.status, 401);
  await refused.body?.cancel();
  const exchanged = await exchange(
    (await routeAuth([oidc({ issuer: authServer.issuer, audience: agentUrl })])(
      new Request(agentUrl, { headers: { authorization: `Bearer ${userToken}` } }),
    ).then((result) => (result.ok ? result.principal : undefined)))!,
    { audience: crmUrl },
  );
  assert.equal(claimsOf(exchanged.accessToken).aud, crmUrl);
  const atAgent = await bearerTo(agentUrl, exchanged.accessToken);
  assert.equal(atAgent.status, 401);
  await atAgent.body?.cancel();
});

test('private_key_jwt (an ES256 client assertion) with the token endpoint configured: the same exchange, authenticated by the key', async () => {
  exchange = tokenExchange({
    tokenEndpoint: `${authServer.issuer}/token`,
    clientId: KEY_CLIENT,
    privateKey: privateJwk,
  });
  const userToken = await authServer.userToken('grace');
  const answer = await ask(userToken, 'Who is Acme?');
  assert.equal(answer.text, 'Acme: a customer of grace');
  assert.deepEqual(authServer.exchanges.at(-1), { clientId: KEY_CLIENT, subjectToken: userToken, audience: [crmUrl] });
  assert.deepEqual(crmSaw.at(-1)!.claims?.act, { sub: KEY_CLIENT });
});

test("the authorization server's refusal reaches the tool as TokenExchangeError with its code and status; the model sees that the tool failed", async () => {
  exchange = tokenExchange({
    issuer: authServer.issuer,
    clientId: BASIC_CLIENT.id,
    clientSecret: 'a-wrong-secret-0123',
  });
  const original = console.error;
  const logged: unknown[][] = [];
  console.error = (...args: unknown[]) => void logged.push(args);
  try {
    const answer = await ask(await authServer.userToken('ada'), 'Who is Acme?');
    assert.equal(answer.text, 'Error: tool "crm" failed');
  } finally {
    console.error = original;
  }
  const error = logged.flat().find((value) => value instanceof Error) as { code?: string; status?: number } | undefined;
  assert.deepEqual([error?.code, error?.status], ['invalid_client', 401]);
});

test("the README's example of calling a service on the caller's behalf runs against this authorization server: its agentHandler, oidc(), the tools function and tokenExchange()", async () => {
  const readme = readDocs();
  const section = readme.slice(readme.indexOf("## Calling services on the caller's behalf"));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, "the README has a ts block in its section on calls on the caller's behalf");
  const source = pathToFileURL(join(root, 'src')).href;
  // Its hosts pointed at this test's servers, agentward at the repository's source, the OpenAI model at echoModel.
  const code = block
    .replaceAll('https://id.example.com', authServer.issuer)
    .replaceAll('https://crm.example.com', apiSide.origin)
    .replaceAll('https://agent.example.com/agent', agentUrl)
    .replaceAll("from 'agentward'", `from '${source}/index.ts'`)
    .replaceAll("from 'agentward/auth'", `from '${source}/auth/index.ts'`)
    .replaceAll(
      "import { openai } from '@ai-sdk/openai';",
      `import { echoModel } from '${source}/index.ts';\nconst openai = { chat: () => echoModel() };`,
    );
  const dir = join(root, '.tmp', `readme-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'on-behalf.ts');
  writeFileSync(file, code);
  process.env.AGENT_CLIENT_SECRET = BASIC_CLIENT.secret;
  try {
    const { handler } = (await import(pathToFileURL(file).href)) as { handler: Handler; agent: Agent };
    const userToken = await authServer.userToken('ada');
    const response = await handler(
      new Request(agentUrl.replace(/\/mcp$/, ''), {
        method: 'POST',
        headers: { authorization: `Bearer ${userToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: '/tool crm {"name":"Acme"}' }),
      }),
    );
    assert.equal(response.status, 200);
    const { text } = (await response.json()) as { text: string };
    assert.equal(text, `Tool results: crm: {"name":"Acme","for":"ada","actor":{"sub":"${BASIC_CLIENT.id}"}}`);
    assert.deepEqual(authServer.exchanges.at(-1), {
      clientId: BASIC_CLIENT.id,
      subjectToken: userToken,
      audience: [apiSide.origin],
    });
  } finally {
    delete process.env.AGENT_CLIENT_SECRET;
    rmSync(dir, { recursive: true, force: true });
  }
});
