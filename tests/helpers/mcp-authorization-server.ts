/**
 * The authorization server an MCP client meets: `oidc-provider` 9 on 127.0.0.1 with dynamic
 * client registration (RFC 7591), the authorization-code flow with PKCE through its own login
 * and consent pages, resource indicators (RFC 8707) for one MCP server URL, JWT access tokens
 * (ES256, `typ: at+jwt`) carrying the granted `scope`, and DPoP (RFC 9449): a proof at the token
 * endpoint binds the access token (`cnf.jkt`). `authorize(url)` plays the user: it logs in as
 * `accountId` and consents to what is asked, and answers the code the client's redirect would get.
 */
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { browserSession, form } from './authorization-server.ts';

export const MCP_SCOPES = ['agent:ask', 'agent:approve'] as const;
export const MCP_REDIRECT_URI = 'https://mcp-client.example/callback';

export interface McpAuthorizationServer {
  readonly issuer: string;
  /** Logs in and consents for the authorization request at `url`; the redirect's parameters (`code`, `state`, `iss`). */
  authorize(url: URL | string, accountId?: string): Promise<URLSearchParams>;
  /** The authorization requests the clients made, in order (their `scope` and `resource`). */
  readonly requests: URLSearchParams[];
  close(): Promise<void>;
}

/**
 * `resources`: the MCP servers' URLs, the resource indicators (and audiences) this server issues
 * tokens for; `scopes`: the scopes it grants (default `MCP_SCOPES`).
 */
export async function startMcpAuthorizationServer(
  resources: readonly string[],
  scopes: readonly string[] = MCP_SCOPES,
): Promise<McpAuthorizationServer> {
  // Its registration policy: a client may ask for any of the server's scopes later (a step-up),
  // whatever scope it named when it registered (the MCP SDK registers with its first request's).
  const server = createServer((request, response) => {
    if (request.method !== 'POST' || request.url !== '/reg') return void provider.callback()(request, response);
    const chunks: Buffer[] = [];
    request
      .on('data', (chunk: Buffer) => chunks.push(chunk))
      .on('end', () => {
        const text = JSON.stringify({
          ...JSON.parse(Buffer.concat(chunks).toString('utf8')),
          scope: scopes.join(' '),
        });
        const body = Readable.from([Buffer.from(text)]);
        const headers = { ...request.headers, 'content-length': String(Buffer.byteLength(text)) };
        provider.callback()(
          Object.assign(body, {
            method: request.method,
            url: request.url,
            headers,
            socket: request.socket,
            connection: request.socket,
            httpVersion: request.httpVersion,
          }) as never,
          response,
        );
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const { key_ops: _ops, ext: _ext, ...jwk } = await crypto.subtle.exportKey('jwk', pair.privateKey);
  const provider: Provider = new Provider(issuer, {
    jwks: { keys: [{ ...jwk, kid: 'mcp-es256', alg: 'ES256', use: 'sig' }] as never },
    cookies: { keys: ['test-cookie-key-for-the-mcp-provider'] },
    ttl: { AccessToken: 3600, AuthorizationCode: 600, IdToken: 3600, Interaction: 600, Session: 3600, Grant: 3600 },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    scopes: ['openid', 'offline_access', ...scopes],
    enabledJWA: { dPoPSigningAlgValues: ['ES256', 'EdDSA'], idTokenSigningAlgValues: ['ES256'] },
    clientDefaults: {
      id_token_signed_response_alg: 'ES256',
      grant_types: ['authorization_code'],
      response_types: ['code'],
    },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      dPoP: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resources[0],
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (!resources.includes(indicator)) throw new Error(`unknown resource ${indicator}`);
          return {
            scope: scopes.join(' '),
            audience: indicator,
            accessTokenFormat: 'jwt',
            accessTokenTTL: 3600,
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    pkce: { required: () => true },
  } as never);
  const requests: URLSearchParams[] = [];

  return {
    issuer,
    requests,
    async authorize(url, accountId = 'mcp-user') {
      requests.push(new URL(url).searchParams);
      const browser = browserSession(issuer);
      const send = async (target: string, init?: RequestInit) => {
        const location = await browser.send(target, init);
        if (location === '') throw new Error(`the provider did not redirect from ${target}`);
        return location;
      };
      // Authorize, log in on the provider's page, consent (once per new scope), and come back with a code.
      let location = await send(String(url));
      for (let step = 0; step < 6 && !location.startsWith(MCP_REDIRECT_URI); step++) {
        if (!location.includes('/interaction/')) {
          location = await send(location);
          continue;
        }
        const page = await browser.page(location);
        const fields: Record<string, string> = page.includes('name="login"')
          ? { prompt: 'login', login: accountId, password: 'any' }
          : { prompt: 'consent' };
        location = await send(await send(location, form(fields)));
      }
      const redirect = new URL(location);
      if (!redirect.searchParams.has('code'))
        throw new Error(
          `no code in the redirect: ${redirect.searchParams.get('error')} ${redirect.searchParams.get('error_description')}`,
        );
      return redirect.searchParams;
    },
    close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return closed;
    },
  };
}
