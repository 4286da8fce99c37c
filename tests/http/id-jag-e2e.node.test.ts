// Enterprise-managed authorization, end to end (design §27; the Identity Assertion JWT
// Authorization Grant): two real authorization servers, one per leg. The company IdP
// (oidc-provider, tests/helpers/token-exchange-server.ts) signs the user in for the agent and,
// through its RFC 8693 grant, issues ID-JAGs; the CRM's authorization server (a second
// oidc-provider, tests/helpers/id-jag-grants.ts) takes an ID-JAG through its RFC 7523 jwt-bearer
// grant after verifying it against the IdP's key set. An MCP client calls the agent's MCP route
// with the user's token; the agent's tool gets a CRM token with idJag() and calls the CRM's MCP
// server (the SDK's McpServer behind oidc() for the CRM's authorization server), which accepts it
// and refuses the user's token and the ID-JAG. Once with client_secret_basic at both legs and the
// token endpoints discovered, once with private_key_jwt and the endpoints configured. The
// documentation's recipe (docs/auth.md) runs here as written, its hosts this test's: the agent's
// block against these two servers, then with its two oidc-provider configurations booted.
import assert from 'node:assert/strict';
import { createServer, type RequestListener, type Server } from 'node:http';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { tool as aiTool } from 'ai';
import { z } from 'zod';
import { importJWK, SignJWT } from 'jose';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  idJag,
  oidc,
  routeAuth,
  TokenExchangeError,
  type IdJagExchange,
  type Principal,
} from '../../src/auth/index.ts';
import { agentHandler, createAgent, type Model } from '../../src/index.ts';
import { toNodeListener } from '../../src/node.ts';
import { startTokenExchangeServer, type TokenExchangeServer } from '../helpers/token-exchange-server.ts';
import { signingKey, startIdJagAuthorizationServer, type IdJagAuthorizationServer } from '../helpers/id-jag-grants.ts';
import { readDocs } from '../helpers/docs.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The agent's clients at the IdP, and at the CRM's authorization server. */
const AT_IDP = { basic: { id: 'support-agent', secret: 'support-agent-idp-secret-0123' }, jwt: 'support-agent-jwt' };
const AT_CRM = {
  basic: { id: 'crm-support-agent', secret: 'crm-support-agent-secret-0123' },
  jwt: 'crm-support-agent-jwt',
};

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

/** The CRM's MCP server: the MCP SDK's own, behind this library's oidc() for `issuer`, the resource `url`. */
function crmRoute(issuer: string, url: string): Handler {
  const authenticate = routeAuth([oidc({ issuer, audience: url })]);
  return async (request) => {
    const result = await authenticate(request);
    if (!result.ok) return result.response;
    crmSaw.push(result.principal);
    const mcp = new McpServer({ name: 'crm', version: '1.0.0' });
    mcp.registerTool(
      'find_customer',
      { description: 'Finds a customer', inputSchema: { name: z.string() } },
      async ({ name }) => ({ content: [{ type: 'text', text: `${name}: a customer of ${result.principal.id}` }] }),
    );
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await mcp.connect(transport);
    return transport.handleRequest(request);
  };
}

let idp: TokenExchangeServer;
let crmAuth: IdJagAuthorizationServer;
let agentSide: Awaited<ReturnType<typeof listening>>;
let crmSide: Awaited<ReturnType<typeof listening>>;
let agentUrl: string;
let crmUrl: string;
let idpKey: Awaited<ReturnType<typeof signingKey>>;
let crmKey: Awaited<ReturnType<typeof signingKey>>;
/** The agent's route as this file builds it (the documented recipe's tests serve theirs in its place, then this again). */
let agentRoute: Handler;
/** The exchange the agent's tool uses: each test sets its own. */
let exchange: IdJagExchange;
/** What the CRM's oidc() accepted: the principal of each call. */
const crmSaw: Principal[] = [];

before(async () => {
  agentSide = await listening();
  crmSide = await listening();
  agentUrl = `${agentSide.origin}/agent/mcp`;
  crmUrl = `${crmSide.origin}/mcp`;
  idpKey = await signingKey('agent-at-idp');
  crmKey = await signingKey('agent-at-crm');
  // The CRM's authorization server trusts the IdP's issuer, so it starts second; the IdP's policy
  // (which authorization servers its clients may get ID-JAGs for) is filled in once it has.
  const crmAuthorizationServers: Record<string, Record<string, string>> = {};
  idp = await startTokenExchangeServer({
    agentResource: agentUrl,
    audiences: [],
    agentClients: { basic: AT_IDP.basic, privateKeyJwt: { id: AT_IDP.jwt, publicJwk: idpKey.publicJwk } },
    idJag: { authorizationServers: crmAuthorizationServers },
  });
  crmAuth = await startIdJagAuthorizationServer({
    idpIssuer: idp.issuer,
    resources: { [crmUrl]: ['crm:read', 'crm:write'] },
    clients: { basic: AT_CRM.basic, privateKeyJwt: { id: AT_CRM.jwt, publicJwk: crmKey.publicJwk } },
  });
  // The IdP's policy: its agent clients may ask for ID-JAGs for the CRM, each naming its own client there.
  crmAuthorizationServers[crmAuth.issuer] = { [AT_IDP.basic.id]: AT_CRM.basic.id, [AT_IDP.jwt]: AT_CRM.jwt };

  // The CRM: the MCP SDK's own server, behind this library's oidc() for the CRM's authorization server.
  crmSide.serve(crmRoute(crmAuth.issuer, crmUrl));

  // The agent: its tool gets a CRM token on the caller's behalf and calls the CRM's MCP server with it.
  const agent = createAgent({
    name: 'support',
    model: asksCrm,
    tools: ({ principal }) => ({
      crm: aiTool({
        description: 'Asks the CRM about a customer',
        inputSchema: z.object({ name: z.string() }),
        execute: async ({ name }) => {
          const { accessToken } = await exchange(principal, { resource: crmUrl, scope: 'crm:read' });
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
  agentRoute = agentHandler(agent, {
    basePath: '/agent',
    mcp: true,
    auth: [oidc({ issuer: idp.issuer, audience: agentUrl })],
  });
  agentSide.serve(agentRoute);
});

after(async () => {
  await close(agentSide?.server);
  await close(crmSide?.server);
  await crmAuth?.close();
  await idp?.close();
});

/** The MCP host: the SDK's client calls the agent's `ask` tool with the user's token. */
async function ask(userToken: string, message: string): Promise<{ text: string; isError: unknown }> {
  const client = new Client({ name: 'mcp-host', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(agentUrl), {
      requestInit: { headers: { authorization: `Bearer ${userToken}` } },
    }),
  );
  try {
    const result = await client.callTool({ name: 'ask', arguments: { message } });
    return { text: (result.structuredContent as { text: string }).text, isError: result.isError };
  } finally {
    await client.close();
  }
}

const partsOf = (token: string) =>
  token
    .split('.')
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>);

const pingWith = async (token: string, url = crmUrl) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  await response.body?.cancel();
  return response.status;
};

test("client_secret_basic at both legs, the token endpoints discovered: the IdP issues an ID-JAG for the CRM's authorization server from the caller's token, which gives a CRM token; the CRM's MCP server accepts it and refuses the user's token and the ID-JAG", async () => {
  exchange = idJag({
    idp: { issuer: idp.issuer, clientId: AT_IDP.basic.id, clientSecret: AT_IDP.basic.secret },
    authorizationServer: { issuer: crmAuth.issuer, clientId: AT_CRM.basic.id, clientSecret: AT_CRM.basic.secret },
  });
  const userToken = await idp.userToken('ada');
  const answer = await ask(userToken, 'Who is Acme?');
  assert.deepEqual(answer, { text: 'Acme: a customer of ada', isError: false });

  // Leg 1: the caller's own token, for an ID-JAG of the draft's shape.
  const issued = idp.idJags.at(-1)!;
  assert.deepEqual(
    [issued.clientId, issued.subjectToken, issued.audience],
    [AT_IDP.basic.id, userToken, crmAuth.issuer],
  );
  const [header, claims] = partsOf(issued.idJag);
  assert.equal(header!.typ, 'oauth-id-jag+jwt');
  assert.deepEqual(Object.keys(claims!).sort(), [
    'aud',
    'client_id',
    'exp',
    'iat',
    'iss',
    'jti',
    'resource',
    'scope',
    'sub',
  ]);
  assert.deepEqual(
    [claims!.iss, claims!.sub, claims!.aud, claims!.client_id, claims!.resource, claims!.scope],
    [idp.issuer, 'ada', crmAuth.issuer, AT_CRM.basic.id, crmUrl, 'crm:read'],
  );
  // Leg 2: that ID-JAG, for the CRM's token the CRM accepted.
  const granted = crmAuth.granted.at(-1)!;
  assert.deepEqual([granted.clientId, granted.idJag], [AT_CRM.basic.id, issued.idJag]);
  const principal = crmSaw.at(-1)!;
  assert.deepEqual(
    [principal.id, principal.issuer, principal.claims?.aud, principal.claims?.client_id, principal.claims?.scope],
    ['ada', crmAuth.issuer, crmUrl, AT_CRM.basic.id, 'crm:read'],
  );
  // Never passthrough: neither the user's token nor the ID-JAG opens the CRM.
  assert.equal(await pingWith(userToken), 401);
  assert.equal(await pingWith(issued.idJag), 401);
  assert.equal(await pingWith(granted.accessToken), 200);

  // A second question within the token's life uses the kept token: neither server is asked again.
  const counts = [idp.idJags.length, crmAuth.granted.length];
  assert.deepEqual(await ask(userToken, 'Who is Acme?'), { text: 'Acme: a customer of ada', isError: false });
  assert.deepEqual([idp.idJags.length, crmAuth.granted.length], counts);
  // Another caller is another pair of calls, with that caller's own token.
  const graceToken = await idp.userToken('grace');
  assert.deepEqual(await ask(graceToken, 'Who is Acme?'), { text: 'Acme: a customer of grace', isError: false });
  assert.equal(idp.idJags.at(-1)!.subjectToken, graceToken);
  assert.equal(crmSaw.at(-1)!.id, 'grace');
});

test('private_key_jwt at both legs (ES256 client assertions), the token endpoints configured: the same two legs, each authenticated by its own key', async () => {
  exchange = idJag({
    idp: {
      tokenEndpoint: `${idp.issuer}/token`,
      clientId: AT_IDP.jwt,
      privateKey: idpKey.privateJwk,
      keyId: idpKey.kid,
    },
    authorizationServer: {
      issuer: crmAuth.issuer,
      tokenEndpoint: `${crmAuth.issuer}/token`,
      clientId: AT_CRM.jwt,
      privateKey: crmKey.privateJwk,
      keyId: crmKey.kid,
    },
  });
  const userToken = await idp.userToken('grace');
  assert.deepEqual(await ask(userToken, 'Who is Acme?'), { text: 'Acme: a customer of grace', isError: false });
  assert.deepEqual([idp.idJags.at(-1)!.clientId, idp.idJags.at(-1)!.subjectToken], [AT_IDP.jwt, userToken]);
  assert.equal(partsOf(idp.idJags.at(-1)!.idJag)[1]!.client_id, AT_CRM.jwt);
  assert.equal(crmAuth.granted.at(-1)!.clientId, AT_CRM.jwt);
  assert.equal(crmSaw.at(-1)!.claims?.client_id, AT_CRM.jwt);
});

test("each server's refusal reaches the tool as TokenExchangeError naming its leg, code and status, with no token in it; the model sees that the tool failed", async () => {
  const userToken = await idp.userToken('ada');
  const cases = [
    // The IdP refuses an unknown client secret.
    [
      { issuer: idp.issuer, clientId: AT_IDP.basic.id, clientSecret: 'a-wrong-secret-0123' },
      { issuer: crmAuth.issuer, clientId: AT_CRM.basic.id, clientSecret: AT_CRM.basic.secret },
      ['invalid_client', 401, 'idp'],
    ],
    // The CRM's server refuses an ID-JAG issued for another of its clients.
    [
      { issuer: idp.issuer, clientId: AT_IDP.basic.id, clientSecret: AT_IDP.basic.secret },
      {
        issuer: crmAuth.issuer,
        clientId: AT_CRM.jwt,
        privateKey: crmKey.privateJwk,
        keyId: crmKey.kid,
      },
      ['invalid_grant', 400, 'authorization-server'],
    ],
  ] as const;
  for (const [idpOptions, serverOptions, expected] of cases) {
    exchange = idJag({ idp: { ...idpOptions }, authorizationServer: { ...serverOptions } });
    const original = console.error;
    const logged: unknown[][] = [];
    console.error = (...args: unknown[]) => void logged.push(args);
    try {
      const answer = await ask(userToken, 'Who is Acme?');
      assert.equal(answer.text, 'Error: tool "crm" failed');
    } finally {
      console.error = original;
    }
    const error = logged.flat().find((value) => value instanceof TokenExchangeError);
    assert.ok(error instanceof TokenExchangeError, `logged: ${logged.length}`);
    assert.deepEqual([error.code, error.status, error.leg], expected);
    const seen = JSON.stringify(logged, (_, value) =>
      value instanceof Error ? { ...value, message: value.message, stack: value.stack } : value,
    );
    for (const secret of [userToken, ...idp.idJags.map(({ idJag }) => idJag)])
      assert.equal(seen.includes(secret), false);
  }
});

/** The ts blocks of the documented ID-JAG section (docs/auth.md): the agent's recipe, the IdP's grant, the CRM authorization server's grant. */
function documented(): { agent: string; idp: string; authorizationServer: string } {
  const docs = readDocs();
  const heading = '\n## Enterprise-managed authorization (ID-JAG)\n';
  const at = docs.indexOf(heading);
  assert.notEqual(at, -1, 'the documentation has the ID-JAG section');
  // To the next section or page.
  const rest = docs.slice(at + heading.length);
  const next = rest.search(/^#{1,2} /m);
  const section = next === -1 ? rest : rest.slice(0, next);
  const blocks = [...section.matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((match) => match[1]!);
  assert.equal(blocks.length, 3, 'the section shows the agent, the IdP and the authorization server');
  const [agent, idp, authorizationServer] = blocks as [string, string, string];
  assert.ok(agent.includes('idJag({'), 'the first block is the agent with idJag()');
  assert.ok(idp.startsWith('// idp.ts\n') && idp.includes('registerGrantType<'), 'the second is the IdP');
  assert.ok(
    authorizationServer.startsWith('// crm-authorization-server.ts\n'),
    "the third is the CRM's authorization server",
  );
  return { agent, idp, authorizationServer };
}

const DOCUMENTED_HOSTS = [
  'https://login.example.com',
  'https://auth.crm.example.com',
  'https://crm.example.com',
  'https://agent.example.com',
] as const;

/**
 * Writes a documented block as a module of a temporary folder and imports it, as written but for
 * its hosts (each of DOCUMENTED_HOSTS to this test's origin), `agentward` (the repository's
 * source), the OpenAI model (echoModel, which calls the tool a message names) and the environment
 * it reads while it loads.
 */
async function load<T>(
  code: string,
  name: string,
  origins: Readonly<Record<(typeof DOCUMENTED_HOSTS)[number], string>>,
  env: Readonly<Record<string, string>>,
): Promise<T> {
  const index = JSON.stringify(pathToFileURL(join(root, 'src/index.ts')).href);
  let written = code
    .replaceAll("from 'agentward'", `from ${index}`)
    .replaceAll("from 'agentward/auth'", `from ${JSON.stringify(pathToFileURL(join(root, 'src/auth/index.ts')).href)}`)
    .replaceAll(
      "import { openai } from '@ai-sdk/openai';",
      `import { echoModel } from ${index};\nconst openai = { chat: () => echoModel() };`,
    );
  for (const host of DOCUMENTED_HOSTS) written = written.replaceAll(host, origins[host]);
  assert.equal(/https:\/\/[\w.-]*example\.com/.test(written), false, `${name}: every host is this test's`);
  const dir = join(root, '.tmp', `id-jag-docs-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}-${Math.random().toString(36).slice(2)}.ts`);
  writeFileSync(file, written);
  const before = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  Object.assign(process.env, env);
  try {
    return (await import(pathToFileURL(file).href)) as T;
  } finally {
    for (const [key, value] of Object.entries(before))
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    rmSync(file, { force: true });
  }
}

after(() => rmSync(join(root, '.tmp', `id-jag-docs-${process.pid}`), { recursive: true, force: true }));

test("docs/auth.md's idJag() recipe runs as written (its hosts this test's) against both servers: the tool gets a CRM token for the caller and the CRM answers", async () => {
  const { handler } = await load<{ handler: Handler }>(
    documented().agent,
    'agent',
    {
      'https://login.example.com': idp.issuer,
      'https://auth.crm.example.com': crmAuth.issuer,
      'https://crm.example.com': crmSide.origin,
      'https://agent.example.com': agentSide.origin,
    },
    { AGENT_IDP_SECRET: AT_IDP.basic.secret, AGENT_CRM_SECRET: AT_CRM.basic.secret },
  );
  agentSide.serve(handler);
  try {
    const userToken = await idp.userToken('ada');
    const answer = await ask(userToken, '/tool crm {"name":"Acme"}');
    assert.deepEqual(answer, { text: 'Tool results: crm: Acme: a customer of ada', isError: false });
    // The documented clients, the caller's own token at the IdP, only the ID-JAG at the CRM's server.
    const issued = idp.idJags.at(-1)!;
    assert.deepEqual(
      [issued.clientId, issued.subjectToken, issued.audience],
      [AT_IDP.basic.id, userToken, crmAuth.issuer],
    );
    assert.deepEqual(
      [partsOf(issued.idJag)[1]!.client_id, partsOf(issued.idJag)[1]!.resource, partsOf(issued.idJag)[1]!.scope],
      [AT_CRM.basic.id, crmUrl, 'crm:read'],
    );
    const granted = crmAuth.granted.at(-1)!;
    assert.deepEqual([granted.clientId, granted.idJag], [AT_CRM.basic.id, issued.idJag]);
    assert.deepEqual([crmSaw.at(-1)!.id, crmSaw.at(-1)!.issuer], ['ada', crmAuth.issuer]);
  } finally {
    agentSide.serve(agentRoute);
  }
});

/** A node:http server on 127.0.0.1 for an oidc-provider made once its URL is known. */
async function providerServer(): Promise<{
  server: Server;
  origin: string;
  use(provider: { callback(): RequestListener }): void;
}> {
  let provider: { callback(): RequestListener } | undefined;
  const server = createServer((request, response) => {
    if (provider === undefined) return void response.writeHead(503).end();
    provider.callback()(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    server,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    use: (made) => void (provider = made),
  };
}

test("docs/auth.md's oidc-provider configurations boot as written (hosts, keys and secrets this test's): the documented IdP issues the ID-JAG and the documented authorization server the CRM token the CRM accepts", async () => {
  const docs = documented();
  const idpSide = await providerServer();
  const asSide = await providerServer();
  const crm = await listening();
  const agentSideUrl = `${agentSide.origin}/agent/mcp`;
  const crmAt = `${crm.origin}/mcp`;
  crm.serve(crmRoute(asSide.origin, crmAt));
  const origins = {
    'https://login.example.com': idpSide.origin,
    'https://auth.crm.example.com': asSide.origin,
    'https://crm.example.com': crm.origin,
    'https://agent.example.com': agentSide.origin,
  };
  const idpKey = await signingKey('idp-es256');
  const asKey = await signingKey('crm-as-es256');
  const secrets = {
    AGENT_IDP_SECRET: 'support-agent-idp-secret-4567',
    AGENT_CRM_SECRET: 'crm-support-agent-secret-4567',
  };
  try {
    const { idp: documentedIdp } = await load<{ idp: { callback(): RequestListener } }>(docs.idp, 'idp', origins, {
      IDP_SIGNING_JWK: JSON.stringify(idpKey.privateJwk),
      ...secrets,
    });
    idpSide.use(documentedIdp);
    const { authorizationServer } = await load<{ authorizationServer: { callback(): RequestListener } }>(
      docs.authorizationServer,
      'crm-authorization-server',
      origins,
      { CRM_AS_SIGNING_JWK: JSON.stringify(asKey.privateJwk), ...secrets },
    );
    asSide.use(authorizationServer);
    const { handler } = await load<{ handler: Handler }>(docs.agent, 'agent', origins, secrets);
    agentSide.serve(handler);

    // The user's access token for the agent, as the IdP's resourceIndicators (elided in the
    // documentation, with findAccount and the interactions) would issue it: RFC 9068, its key.
    const userToken = await new SignJWT({ client_id: 'mcp-host', scope: 'agent:ask' })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: idpKey.kid })
      .setIssuer(idpSide.origin)
      .setSubject('ada')
      .setAudience(agentSideUrl)
      .setIssuedAt()
      .setExpirationTime('5m')
      .setJti(crypto.randomUUID())
      .sign(await importJWK(idpKey.privateJwk, 'ES256'));
    const answer = await ask(userToken, '/tool crm {"name":"Acme"}');
    assert.deepEqual(answer, { text: 'Tool results: crm: Acme: a customer of ada', isError: false });
    const principal = crmSaw.at(-1)!;
    assert.deepEqual(
      [principal.id, principal.issuer, principal.claims?.aud, principal.claims?.client_id, principal.claims?.scope],
      ['ada', asSide.origin, crmAt, 'crm-support-agent', 'crm:read'],
    );
    // The CRM refuses the user's token.
    assert.equal(await pingWith(userToken, crmAt), 401);
    // The documented IdP refuses a token it did not issue; the documented authorization server an
    // ID-JAG presented twice.
    const leg = (issuer: string, body: Record<string, string>, id: string, secret: string) =>
      fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams(body),
      }).then(async (response) => ({
        status: response.status,
        body: (await response.json()) as Record<string, string>,
      }));
    const exchangeFor = (subjectToken: string) =>
      leg(
        idpSide.origin,
        {
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token: subjectToken,
          subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
          audience: asSide.origin,
          resource: crmAt,
          scope: 'crm:read',
        },
        'support-agent',
        secrets.AGENT_IDP_SECRET,
      );
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: idpKey.kid })
      .setIssuer(idpSide.origin)
      .setSubject('ada')
      .setAudience(agentSideUrl)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(await importJWK(asKey.privateJwk, 'ES256'));
    assert.deepEqual(await exchangeFor(forged), { status: 400, body: { error: 'invalid_grant' } });
    const issued = await exchangeFor(userToken);
    assert.equal(issued.status, 200);
    assert.deepEqual(
      [issued.body.issued_token_type, issued.body.token_type, partsOf(issued.body.access_token!)[0]!.typ],
      ['urn:ietf:params:oauth:token-type:id-jag', 'N_A', 'oauth-id-jag+jwt'],
    );
    const present = () =>
      leg(
        asSide.origin,
        { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: issued.body.access_token! },
        'crm-support-agent',
        secrets.AGENT_CRM_SECRET,
      );
    const first = await present();
    assert.equal(first.status, 200);
    assert.equal(await pingWith(first.body.access_token!, crmAt), 200);
    assert.equal(await pingWith(issued.body.access_token!, crmAt), 401);
    assert.deepEqual(await present(), { status: 400, body: { error: 'invalid_grant' } });
  } finally {
    agentSide.serve(agentRoute);
    await close(crm.server);
    await close(idpSide.server);
    await close(asSide.server);
  }
});
