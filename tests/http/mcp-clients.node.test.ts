// The MCP TypeScript clients against the agent's MCP route (design §18) and against a server made
// with the MCP SDK's own server guarded by routeAuth (design §15, §16), with OAuth from a real
// oidc-provider: RFC 9728 discovery through our document, dynamic registration, PKCE, a token
// for the resource, a step-up from the 403 insufficient_scope challenge, and DPoP (the current
// client binds its token to a key).
import assert from 'node:assert/strict';
import { createServer as createNetServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError as UnauthorizedV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  Client as ClientV2,
  DpopSession,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError as UnauthorizedV2,
} from '@modelcontextprotocol/client';
import { jwt, oidc, protectedResourceMetadata, routeAuth } from '../../src/auth/index.ts';
import type { Principal, Tool } from '../../src/agent/types.ts';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { serve, toNodeListener, type AgentServer } from '../../src/node.ts';
import { createServer } from 'node:http';
import { principalAgent, DEPLOY_MESSAGE } from '../helpers/http-agent.ts';
import {
  MCP_REDIRECT_URI,
  MCP_SCOPES,
  startMcpAuthorizationServer,
  type McpAuthorizationServer,
} from '../helpers/mcp-authorization-server.ts';

async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** An OAuth client provider as a host keeps one: registration, tokens, PKCE verifier; the "browser" is the authorization server's authorize(). */
class HostProvider {
  client: Record<string, unknown> | undefined;
  saved: Record<string, unknown> | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly #dpop: Promise<DpopSession> | undefined;
  constructor(dpop = false) {
    this.#dpop = dpop ? DpopSession.create({ alg: 'ES256' }) : undefined;
  }
  get redirectUrl() {
    return MCP_REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: 'agentward MCP test host',
      redirect_uris: [MCP_REDIRECT_URI],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client as never;
  }
  saveClientInformation(information: Record<string, unknown>) {
    this.client = information;
  }
  tokens() {
    return this.saved as never;
  }
  saveTokens(tokens: Record<string, unknown>) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  discovery: unknown;
  saveDiscoveryState(state: unknown) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery as never;
  }
  dpopSession() {
    return this.#dpop;
  }
}

interface AuthTransport {
  finishAuth(params: never): Promise<void>;
}

/** Plays the user for the authorization the client asked for, and hands the redirect to the transport (v1 takes the code, the current client the whole callback). */
async function finish(
  server: McpAuthorizationServer,
  provider: HostProvider,
  transport: AuthTransport,
  v1: boolean,
): Promise<void> {
  const url = provider.authorizationUrl;
  assert.ok(url, 'the client asked the user to authorize');
  provider.authorizationUrl = undefined;
  const params = await server.authorize(url);
  await transport.finishAuth((v1 ? params.get('code') : params) as never);
}

const isUnauthorized = (error: unknown) =>
  error instanceof UnauthorizedV1 || error instanceof UnauthorizedV2 || (error as Error)?.name === 'UnauthorizedError';

/** Connects the way a host does: the first attempt sends the user to authorize; after that, a new transport connects with the token. */
async function connect<T extends AuthTransport>(
  server: McpAuthorizationServer,
  provider: HostProvider,
  client: { connect(transport: never): Promise<void> },
  make: () => T,
  v1: boolean,
): Promise<T> {
  const first = make();
  try {
    await client.connect(first as never);
    return first;
  } catch (error) {
    if (!isUnauthorized(error)) throw error;
  }
  await finish(server, provider, first, v1);
  const transport = make();
  await client.connect(transport as never);
  return transport;
}

/** A call that may need a step-up: on the client's UnauthorizedError, the user authorizes the new scope and the call runs again. */
async function steppingUp<T>(
  server: McpAuthorizationServer,
  provider: HostProvider,
  transport: AuthTransport,
  v1: boolean,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!isUnauthorized(error)) throw error;
  }
  await finish(server, provider, transport, v1);
  return call();
}

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

describe('MCP clients against serve({ mcp }) with OAuth from oidc-provider', () => {
  let authServer: McpAuthorizationServer;
  let agentServer: AgentServer;
  let url: string;
  let saw: (Principal | undefined)[] = [];
  before(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}/agent/mcp`;
    authServer = await startMcpAuthorizationServer([url]);
    // The document names the scope every caller needs; decide's scope is asked for when decide is called.
    const metadata = protectedResourceMetadata({
      resource: url,
      authorizationServers: [authServer.issuer],
      scopesSupported: ['agent:ask'],
      resourceName: 'route-test agent',
    });
    const { agent, modelSaw } = principalAgent();
    agentServer = await serve({
      agent,
      port,
      host: '127.0.0.1',
      basePath: '/agent',
      log: 'off',
      auth: [oidc({ issuer: authServer.issuer, audience: url, resourceMetadata: metadata })],
      protectedResource: metadata,
      mcp: { scopes: { ask: ['agent:ask'], decide: ['agent:approve'] } },
    });
    saw = modelSaw;
  });
  after(async () => {
    await agentServer?.close();
    await authServer?.close();
  });

  test('v1 SDK (@modelcontextprotocol/sdk): 401 → our document → registration → PKCE → ask; decide steps up from the 403 to agent:approve', async () => {
    const provider = new HostProvider();
    const client = new ClientV1({ name: 'v1-host', version: '1.0.0' });
    const transport = await connect(
      authServer,
      provider,
      client as never,
      () => new TransportV1(new URL(url), { authProvider: provider as never }),
      true,
    );
    t_assertToken(provider, ['agent:ask']);
    assert.equal(authServer.requests.at(-1)?.get('resource'), url, 'the token is asked for this resource (RFC 8707)');
    assert.deepEqual(client.getServerVersion()?.name, 'route-test');
    const tools = await client.listTools();
    assert.deepEqual(
      tools.tools.map((tool) => tool.name),
      ['ask', 'decide', 'read'],
    );
    const asked = await client.callTool({ name: 'ask', arguments: { message: DEPLOY_MESSAGE } });
    const content = asked.structuredContent as {
      status: string;
      sessionId: string;
      approvals: { id: string; tool: string }[];
    };
    assert.equal(content.status, 'awaiting-approval');
    assert.equal(content.approvals[0]!.tool, 'deploy');
    // The run is the token's principal, as on POST <base>.
    assert.deepEqual(
      [saw.at(-1)?.id, saw.at(-1)?.authenticator, saw.at(-1)?.issuer],
      ['mcp-user', 'oidc', authServer.issuer],
    );
    const decided = await steppingUp(authServer, provider, transport, true, () =>
      client.callTool({ name: 'decide', arguments: { approvalId: content.approvals[0]!.id, approved: true } }),
    );
    assert.equal((decided.structuredContent as { status: string }).status, 'completed');
    assert.ok(
      String(authServer.requests.at(-1)?.get('scope')).split(' ').includes('agent:approve'),
      'the step-up asked for the scope of the 403',
    );
    t_assertToken(provider, ['agent:approve']);
    await client.close();
  });

  test('current client (@modelcontextprotocol/client) with DPoP: a bound token (cnf.jkt = its key), every call with a proof; step-up keeps the scopes it had', async () => {
    const provider = new HostProvider(true);
    const dpopProvider = Object.assign(provider, { dpop: () => provider.dpopSession() });
    const client = new ClientV2({ name: 'v2-host', version: '1.0.0' });
    const transport = await connect(
      authServer,
      provider,
      client as never,
      () => new TransportV2(new URL(url), { authProvider: dpopProvider as never }),
      false,
    );
    const saved = provider.saved as { access_token: string; token_type: string };
    assert.equal(saved.token_type, 'DPoP');
    assert.deepEqual(claimsOf(saved.access_token).cnf, { jkt: (await provider.dpopSession()!).thumbprint });
    const asked = await client.callTool({ name: 'ask', arguments: { message: DEPLOY_MESSAGE } });
    const content = asked.structuredContent as { status: string; approvals: { id: string }[] };
    assert.equal(content.status, 'awaiting-approval');
    const decided = await steppingUp(authServer, provider, transport, false, () =>
      client.callTool({
        name: 'decide',
        arguments: { approvalId: content.approvals[0]!.id, approved: false, reason: 'not today' },
      }),
    );
    assert.equal(decided.isError, false);
    assert.equal((decided.structuredContent as { status: string }).status, 'completed');
    t_assertToken(provider, ['agent:ask', 'agent:approve']);
    assert.equal((provider.saved as { token_type: string }).token_type, 'DPoP');
    // A bound token is only ever accepted with a valid proof of its key: every call above carried one.
    // The same token presented as a bearer token is refused (no downgrade, RFC 9449 §7.2).
    const stolen = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${(provider.saved as { access_token: string }).access_token}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(stolen.status, 401);
    await stolen.body?.cancel();
    await client.close();
  });
});

describe("the v1 SDK against the README's recommended setup: oidc() with scopes ['agent:chat'], scopes.approve ['agent:approve']", () => {
  let authServer: McpAuthorizationServer;
  let agentServer: AgentServer;
  let url: string;
  before(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}/agent/mcp`;
    authServer = await startMcpAuthorizationServer([url], ['agent:chat', 'agent:approve']);
    // As the README's "MCP and other OAuth clients" setup, with the MCP route on.
    const metadata = protectedResourceMetadata({
      resource: url,
      authorizationServers: [authServer.issuer],
      scopesSupported: ['agent:chat', 'agent:approve'],
    });
    agentServer = await serve({
      agent: principalAgent().agent,
      port,
      host: '127.0.0.1',
      basePath: '/agent',
      log: 'off',
      auth: [
        oidc({
          issuer: authServer.issuer,
          audience: metadata.resource,
          typ: 'at+jwt',
          scopes: ['agent:chat'],
          resourceMetadata: metadata,
          dpop: 'allowed',
          cache: true,
        }),
      ],
      protectedResource: metadata,
      scopes: { approve: ['agent:approve'] },
      mcp: true,
    });
  });
  after(async () => {
    await agentServer?.close();
    await authServer?.close();
  });

  test('v1 SDK 1.x: decide steps up once, to the whole union the 403 names, and every call after it succeeds without asking again', async () => {
    const provider = new HostProvider();
    const client = new ClientV1({ name: 'v1-host', version: '1.0.0' });
    const transport = await connect(
      authServer,
      provider,
      client as never,
      () => new TransportV1(new URL(url), { authProvider: provider as never }),
      true,
    );
    assert.equal(authServer.requests.length, 1);
    assert.equal(authServer.requests[0]!.get('scope'), 'agent:chat', 'the 401 named the entry’s scope');
    const ask = async () => {
      const asked = await client.callTool({ name: 'ask', arguments: { message: DEPLOY_MESSAGE } });
      const content = asked.structuredContent as { status: string; approvals: { id: string }[] };
      assert.equal(content.status, 'awaiting-approval');
      return content.approvals[0]!.id;
    };
    const decide = (approvalId: string) =>
      client.callTool({ name: 'decide', arguments: { approvalId, approved: true } });
    const first = await ask();
    // The 403 names agent:chat and agent:approve; the SDK takes them as its scopes and asks once.
    const decided = await steppingUp(authServer, provider, transport, true, () => decide(first));
    assert.equal(decided.isError, false);
    assert.equal((decided.structuredContent as { status: string }).status, 'completed');
    assert.equal(authServer.requests.length, 2, 'one step-up');
    assert.deepEqual(authServer.requests[1]!.get('scope')!.split(' ').sort(), ['agent:approve', 'agent:chat']);
    // The new token is enough for both groups: no call asks again (no alternation between them).
    const second = await ask();
    assert.equal(((await decide(second)).structuredContent as { status: string }).status, 'completed');
    assert.equal(authServer.requests.length, 2, 'no further authorization');
    await client.close();
  });
});

describe("MCP clients against a server made with the MCP SDK's own server, guarded by routeAuth", () => {
  let authServer: McpAuthorizationServer;
  let server: ReturnType<typeof createServer>;
  let url: string;
  before(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}/mcp`;
    authServer = await startMcpAuthorizationServer([url]);
    const metadata = protectedResourceMetadata({
      resource: url,
      authorizationServers: [authServer.issuer],
      scopesSupported: ['agent:ask'],
    });
    const authenticate = routeAuth([
      jwt({
        jwksUrl: `${authServer.issuer}/jwks`,
        issuer: authServer.issuer,
        audience: url,
        resourceMetadata: metadata,
      }),
    ]);
    // What a user of another MCP SDK writes: the document, the auth list, a step-up for one tool, then the SDK's transport.
    const handler = async (request: Request): Promise<Response> => {
      const document = metadata.respond(request);
      if (document !== undefined) return document;
      const result = await authenticate(request);
      if (!result.ok) return result.response;
      const body =
        request.method === 'POST'
          ? ((await request.clone().json()) as { method?: string; params?: { name?: string } })
          : undefined;
      const granted = String(result.principal.claims?.scope ?? '').split(' ');
      if (body?.method === 'tools/call' && body.params?.name === 'approve' && !granted.includes('agent:approve'))
        return authenticate.insufficientScope(request, ['agent:approve']);
      const mcp = new McpServer({ name: 'sdk-server', version: '1.0.0' });
      mcp.registerTool('whoami', { description: 'Who the caller is', inputSchema: {} }, async () => ({
        content: [{ type: 'text', text: result.principal.id }],
      }));
      mcp.registerTool('approve', { description: 'Needs agent:approve', inputSchema: {} }, async () => ({
        content: [{ type: 'text', text: `approved by ${result.principal.id}` }],
      }));
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await mcp.connect(transport);
      return transport.handleRequest(request);
    };
    server = createServer(toNodeListener(handler));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  });
  after(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await authServer?.close();
  });

  for (const [name, v1] of [
    ['v1 SDK', true],
    ['current client with DPoP', false],
  ] as const) {
    test(`${name}: connects through our document, calls a tool as the token's principal, steps up from the 403 for the other`, async () => {
      const provider = new HostProvider(!v1);
      const withDpop = v1 ? provider : Object.assign(provider, { dpop: () => provider.dpopSession() });
      const client = v1
        ? new ClientV1({ name: 'v1-host', version: '1.0.0' })
        : new ClientV2({ name: 'v2-host', version: '1.0.0' });
      const make = () =>
        v1
          ? new TransportV1(new URL(url), { authProvider: withDpop as never })
          : new TransportV2(new URL(url), { authProvider: withDpop as never });
      const transport = await connect(authServer, provider, client as never, make as never, v1);
      assert.equal((provider.saved as { token_type: string }).token_type, v1 ? 'Bearer' : 'DPoP');
      const who = await (client as ClientV1).callTool({ name: 'whoami', arguments: {} });
      assert.deepEqual(who.content, [{ type: 'text', text: 'mcp-user' }]);
      const approved = await steppingUp(authServer, provider, transport as AuthTransport, v1, () =>
        (client as ClientV1).callTool({ name: 'approve', arguments: {} }),
      );
      assert.deepEqual(approved.content, [{ type: 'text', text: 'approved by mcp-user' }]);
      t_assertToken(provider, ['agent:approve']);
      await client.close();
    });
  }
});

describe('MCP clients against an oidc() entry with DPoP server nonces (dpop: { nonce: true }, design §29)', () => {
  let authServer: McpAuthorizationServer;
  let agentServer: AgentServer;
  let url: string;
  const reasons: string[] = [];
  before(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}/agent/mcp`;
    authServer = await startMcpAuthorizationServer([url]);
    const metadata = protectedResourceMetadata({
      resource: url,
      authorizationServers: [authServer.issuer],
      scopesSupported: ['agent:ask'],
    });
    agentServer = await serve({
      agent: principalAgent().agent,
      port,
      host: '127.0.0.1',
      basePath: '/agent',
      log: 'off',
      auth: [oidc({ issuer: authServer.issuer, audience: url, resourceMetadata: metadata, dpop: { nonce: true } })],
      onRefused: ({ reason }) => void reasons.push(reason),
      protectedResource: metadata,
      mcp: { scopes: { ask: ['agent:ask'] } },
    });
  });
  after(async () => {
    await agentServer?.close();
    await authServer?.close();
  });

  test('current client (@modelcontextprotocol/client) with DPoP: its first proof has no nonce, the 401 use_dpop_nonce gives one, it retries with it and every call succeeds', async () => {
    reasons.length = 0;
    const provider = new HostProvider(true);
    const dpopProvider = Object.assign(provider, { dpop: () => provider.dpopSession() });
    const client = new ClientV2({ name: 'v2-host', version: '1.0.0' });
    await connect(
      authServer,
      provider,
      client as never,
      () => new TransportV2(new URL(url), { authProvider: dpopProvider as never }),
      false,
    );
    assert.equal((provider.saved as { token_type: string }).token_type, 'DPoP');
    const asked = await client.callTool({ name: 'ask', arguments: { message: DEPLOY_MESSAGE } });
    assert.equal((asked.structuredContent as { status: string }).status, 'awaiting-approval');
    assert.ok(reasons.includes('dpop-nonce'), `the server asked for a nonce (refusals: ${reasons.join(', ')})`);
    const session = await provider.dpopSession()!;
    assert.match(String(session.nonceFor(url)), /^[\w-]{22}$/, 'the client keeps the nonce the server gave');
    // Every call after the first retry carried the nonce: no further use_dpop_nonce.
    const refusedBefore = reasons.filter((reason) => reason === 'dpop-nonce').length;
    await client.listTools();
    await client.callTool({ name: 'ask', arguments: { message: 'hello' } });
    assert.equal(reasons.filter((reason) => reason === 'dpop-nonce').length, refusedBefore);
    await client.close();
  });

  test('v1 SDK (@modelcontextprotocol/sdk 1.x) has no DPoP support at all: it takes a Bearer token, which the entry accepts (nonces apply to DPoP proofs only)', async () => {
    reasons.length = 0;
    const provider = new HostProvider();
    const client = new ClientV1({ name: 'v1-host', version: '1.0.0' });
    await connect(
      authServer,
      provider,
      client as never,
      () => new TransportV1(new URL(url), { authProvider: provider as never }),
      true,
    );
    assert.equal((provider.saved as { token_type: string }).token_type, 'Bearer');
    assert.equal(claimsOf((provider.saved as { access_token: string }).access_token).cnf, undefined);
    const asked = await client.callTool({ name: 'ask', arguments: { message: DEPLOY_MESSAGE } });
    assert.equal((asked.structuredContent as { status: string }).status, 'awaiting-approval');
    assert.equal(reasons.includes('dpop-nonce'), false);
    await client.close();
  });
});

function t_assertToken(provider: HostProvider, scopes: readonly string[]): void {
  const token = (provider.saved as { access_token?: string } | undefined)?.access_token;
  assert.ok(token, 'the client holds an access token');
  const granted = String(claimsOf(token).scope ?? '').split(' ');
  for (const scope of scopes)
    assert.ok(granted.includes(scope), `the token grants ${scope} (it grants ${granted.join(' ')})`);
  assert.ok(
    granted.every((scope) => (MCP_SCOPES as readonly string[]).includes(scope) || scope === 'openid'),
    granted.join(' '),
  );
}

describe('four current clients with DPoP behind one address, with server nonces and limits.failures { limit: 3 } (design §25)', () => {
  let authServer: McpAuthorizationServer;
  let agentServer: AgentServer;
  let url: string;
  const reasons: string[] = [];
  before(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}/agent/mcp`;
    authServer = await startMcpAuthorizationServer([url]);
    const metadata = protectedResourceMetadata({
      resource: url,
      authorizationServers: [authServer.issuer],
      scopesSupported: ['agent:ask'],
    });
    agentServer = await serve({
      agent: principalAgent().agent,
      port,
      host: '127.0.0.1',
      basePath: '/agent',
      log: 'off',
      auth: [oidc({ issuer: authServer.issuer, audience: url, resourceMetadata: metadata, dpop: { nonce: true } })],
      onRefused: ({ reason }) => void reasons.push(reason),
      protectedResource: metadata,
      mcp: { scopes: { ask: ['agent:ask'] } },
      limits: { failures: { limit: 3, windowSec: 60 } },
    });
  });
  after(async () => {
    await agentServer?.close();
    await authServer?.close();
  });

  test('each connects (its nonce 401 gives its failure slot back) and calls a tool; none gets 429', async () => {
    for (let n = 0; n < 4; n++) {
      const provider = new HostProvider(true);
      const dpopProvider = Object.assign(provider, { dpop: () => provider.dpopSession() });
      const client = new ClientV2({ name: `v2-host-${n}`, version: '1.0.0' });
      await connect(
        authServer,
        provider,
        client as never,
        () => new TransportV2(new URL(url), { authProvider: dpopProvider as never }),
        false,
      );
      assert.equal((provider.saved as { token_type: string }).token_type, 'DPoP');
      const asked = await client.callTool({ name: 'ask', arguments: { message: 'hello' } });
      assert.equal((asked.structuredContent as { status: string }).status, 'completed', `client ${n}`);
      await client.close();
    }
    // A client that met a 429 throws above: each connected and called.
    assert.equal(reasons.filter((reason) => reason === 'dpop-nonce').length, 4, 'each client met the nonce');
  });
});

describe("the agent's own tools (mcp.tools, design §36) through the v1 SDK and the current client, with oidc-provider", () => {
  let authServer: McpAuthorizationServer;
  let agentServer: AgentServer;
  let url: string;
  let deployed: unknown[];
  before(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}/agent/mcp`;
    authServer = await startMcpAuthorizationServer([url], [...MCP_SCOPES, 'ops:deploy']);
    const metadata = protectedResourceMetadata({
      resource: url,
      authorizationServers: [authServer.issuer],
      scopesSupported: ['agent:ask'],
    });
    const made = principalAgent();
    deployed = made.deployed;
    agentServer = await serve({
      agent: made.agent,
      port,
      host: '127.0.0.1',
      basePath: '/agent',
      log: 'off',
      auth: [oidc({ issuer: authServer.issuer, audience: url, resourceMetadata: metadata })],
      protectedResource: metadata,
      mcp: { tools: 'agent', scopes: { ask: ['agent:ask'], decide: ['agent:approve'], deploy: ['ops:deploy'] } },
    });
  });
  after(async () => {
    await agentServer?.close();
    await authServer?.close();
  });

  for (const v1 of [true, false]) {
    test(`${v1 ? 'v1 SDK' : 'current client'}: lists and calls an agent tool, steps up to its scope, and completes its approval through decide`, async () => {
      const provider = new HostProvider();
      const client = v1
        ? new ClientV1({ name: 'v1-host', version: '1.0.0' })
        : new ClientV2({ name: 'v2-host', version: '1.0.0' });
      const transport = await connect(
        authServer,
        provider,
        client as never,
        () =>
          v1
            ? new TransportV1(new URL(url), { authProvider: provider as never })
            : new TransportV2(new URL(url), { authProvider: provider as never }),
        v1,
      );
      const callTool = (name: string, args: Record<string, unknown>) =>
        (client as ClientV1).callTool({ name, arguments: args }) as Promise<{
          structuredContent?: Record<string, unknown>;
          content: { type: string; text?: string }[];
          isError?: boolean;
        }>;
      const listed = await (client as ClientV1).listTools();
      assert.deepEqual(
        listed.tools.map((tool) => tool.name),
        ['ask', 'decide', 'read', 'deploy', 'lookup'],
      );
      const looked = await callTool('lookup', { key: 'region' });
      assert.equal(looked.isError, false);
      assert.deepEqual(JSON.parse(looked.content[0]!.text!), { value: 'value of region' });
      const before = deployed.length;
      // deploy needs ops:deploy: the 403 names it, the user authorizes it, the call runs again and waits for approval.
      const waiting = await steppingUp(authServer, provider, transport, v1, () => callTool('deploy', { env: 'prod' }));
      const scopeAsked = String(authServer.requests.at(-1)?.get('scope')).split(' ');
      assert.ok(scopeAsked.includes('ops:deploy'), `the step-up asked for ops:deploy (${scopeAsked.join(' ')})`);
      // The client checked this against the outputSchema the tool lists.
      const content = waiting.structuredContent as { status: string; approvalId: string; sessionId: string };
      assert.equal(content.status, 'awaiting-approval');
      assert.equal(deployed.length, before, 'nothing ran before the decision');
      const decided = await steppingUp(authServer, provider, transport, v1, () =>
        callTool('decide', { approvalId: content.approvalId, approved: true }),
      );
      assert.equal((decided.structuredContent as { status: string }).status, 'completed');
      assert.equal((decided.structuredContent as { sessionId: string }).sessionId, content.sessionId);
      assert.deepEqual(deployed.at(-1), { env: 'prod' });
      await client.close();
    });
  }
});

describe("an approver's MCP client under approvals.by 'approvers' (design §33): read lists the queue, decide acts on it", () => {
  let agentServer: AgentServer;
  let url: string;
  const deployed: unknown[] = [];
  before(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}/agent`;
    const deploy: Tool<{ env: string }> = {
      name: 'deploy',
      description: 'Deploys the app',
      parameters: { type: 'object', properties: { env: { type: 'string' } } },
      needsApproval: true,
      execute: (args) => (deployed.push(args), { deployed: args.env }),
    };
    const agent = createAgent({
      name: 'queue-test',
      model: echoModel(),
      tools: [deploy],
      store: memoryStore(),
      sessions: 'owned',
    });
    const people: Record<string, Principal> = {
      'Bearer alice': { type: 'user', id: 'alice', authenticator: 'custom', claims: { scope: 'agent:send' } },
      'Bearer bob': { type: 'user', id: 'bob', authenticator: 'custom', claims: { scope: 'agent:read agent:approve' } },
    };
    agentServer = await serve({
      agent,
      port,
      host: '127.0.0.1',
      basePath: '/agent',
      log: 'off',
      auth: (request) => people[request.headers.get('authorization') ?? ''] ?? null,
      scopes: { send: ['agent:send'], read: ['agent:read'], approve: ['agent:approve'] },
      approvals: { by: 'approvers' },
      mcp: true,
    });
  });
  after(async () => {
    await agentServer?.close();
  });

  for (const v1 of [true, false]) {
    test(`${v1 ? 'v1 SDK' : 'current client'}: read pages the approvals of Alice's runs, decide approves each, read then lists none`, async () => {
      // Alice's two runs wait for approval, each in a session of its own.
      const started: string[] = [];
      for (const sessionId of ['deploy-1', 'deploy-2'].map((id) => `${id}-${v1}`)) {
        const sent = await fetch(url, {
          method: 'POST',
          headers: { authorization: 'Bearer alice', 'content-type': 'application/json' },
          body: JSON.stringify({ message: DEPLOY_MESSAGE, sessionId }),
        });
        started.push(((await sent.json()) as { approvals: { id: string }[] }).approvals[0]!.id);
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
      const requestInit = { headers: { authorization: 'Bearer bob' } };
      const client = v1
        ? new ClientV1({ name: 'v1-approver', version: '1.0.0' })
        : new ClientV2({ name: 'v2-approver', version: '1.0.0' });
      await client.connect(
        (v1
          ? new TransportV1(new URL(`${url}/mcp`), { requestInit })
          : new TransportV2(new URL(`${url}/mcp`), { requestInit })) as never,
      );
      const callTool = (name: string, args: Record<string, unknown>) =>
        (client as ClientV1).callTool({ name, arguments: args }) as Promise<{
          structuredContent?: Record<string, unknown>;
          content: { type: string; text?: string }[];
          isError?: boolean;
        }>;
      const tools = await (client as ClientV1).listTools();
      assert.deepEqual(
        tools.tools.map((tool) => tool.name),
        ['ask', 'decide', 'read'],
      );
      // The client checks each answer against read's outputSchema.
      type Page = { approvals: { id: string; sessionId: string; tool: string }[]; nextCursor: string | null };
      const seen: Page['approvals'] = [];
      let cursor: string | null = null;
      do {
        const read = await callTool('read', { limit: 1, ...(cursor !== null && { cursor }) });
        assert.equal(read.isError, false, JSON.stringify(read.content));
        const page = read.structuredContent as Page;
        assert.deepEqual(JSON.parse(read.content[0]!.text!), page);
        seen.push(...page.approvals);
        cursor = page.nextCursor;
      } while (cursor !== null);
      assert.deepEqual(
        seen.map((approval) => approval.id),
        started,
      );
      assert.ok(seen.every((approval) => approval.tool === 'deploy'));
      const before = deployed.length;
      for (const approval of seen) {
        const decided = await callTool('decide', { approvalId: approval.id, approved: true });
        assert.equal((decided.structuredContent as { status: string }).status, 'completed');
        assert.equal((decided.structuredContent as { sessionId: string }).sessionId, approval.sessionId);
      }
      assert.equal(deployed.length, before + 2);
      const empty = await callTool('read', {});
      assert.deepEqual(empty.structuredContent, { approvals: [], nextCursor: null });
      await client.close();
    });
  }
});
