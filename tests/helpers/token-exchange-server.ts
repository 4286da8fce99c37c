/**
 * An authorization server that exchanges tokens (RFC 8693), for tests/http/token-exchange-e2e.node.test.ts:
 * `oidc-provider` 9 on 127.0.0.1 issuing ES256 JWT access tokens for the agent (RFC 9068, through
 * the authorization-code flow driven through its own login and consent pages), with the token
 * exchange grant added through its `registerGrantType` extension point. The grant takes a subject
 * token this server issued for the agent, from the agent's own client (client_secret_basic or
 * private_key_jwt, authenticated by the provider), and answers a JWT access token for the asked
 * `audience`: the same `sub`, `client_id` the agent's client, and `act: { sub: <agent's client> }`
 * (RFC 8693 §4.1), signed with the provider's key, so any `jwt()` reading its key set verifies it.
 * Given `idJag`, the same grant also answers `requested_token_type` id-jag as an enterprise IdP
 * does (tests/helpers/id-jag-grants.ts): an ID-JAG for a resource authorization server.
 *
 * @example
 * const server = await startTokenExchangeServer({ agentResource, audiences: [crmUrl], agentClients });
 * const userToken = await server.userToken('ada');
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, SignJWT, importJWK } from 'jose';
import Provider from 'oidc-provider';
import { browserSession, form } from './authorization-server.ts';
import { ID_JAG_TYPE, issueIdJag, type GrantContext, type IssuedIdJag } from './id-jag-grants.ts';

export const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const REDIRECT_URI = 'https://mcp-host.example/callback';
const HOST = { id: 'mcp-host', secret: 'mcp-host-secret-0123456789' };

export interface AgentClients {
  /** The agent's client with client_secret_basic. */
  readonly basic: { readonly id: string; readonly secret: string };
  /** The agent's client with private_key_jwt: its public JWK (ES256). */
  readonly privateKeyJwt: { readonly id: string; readonly publicJwk: JsonWebKey };
}

/** One exchange the grant answered: who asked, with which subject token, for which audience. */
export interface SeenExchange {
  readonly clientId: string;
  readonly subjectToken: string;
  readonly audience: readonly string[];
}

export interface TokenExchangeServer {
  /** `http://127.0.0.1:<port>`, as its discovery document states it. */
  readonly issuer: string;
  /** The access token user `accountId` gets for the agent (`agentResource`), through the authorization-code flow with PKCE. */
  userToken(accountId: string): Promise<string>;
  readonly exchanges: SeenExchange[];
  /** The ID-JAGs it issued (with `idJag`). */
  readonly idJags: IssuedIdJag[];
  close(): Promise<void>;
}

export async function startTokenExchangeServer(options: {
  agentResource: string;
  audiences: readonly string[];
  agentClients: AgentClients;
  /** ID-JAGs too: for each resource authorization server's issuer, the agent's client there by its client here. */
  idJag?: { authorizationServers: Readonly<Record<string, Readonly<Record<string, string>>>> };
}): Promise<TokenExchangeServer> {
  const { agentResource, audiences, agentClients } = options;
  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const { key_ops: _ops, ext: _ext, ...privateJwk } = await crypto.subtle.exportKey('jwk', pair.privateKey);
  const { key_ops: _pops, ext: _pext, ...publicJwk } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  const kid = 'exchange-es256';
  const signingKey = await importJWK({ ...privateJwk, alg: 'ES256' }, 'ES256');
  const keySet = createLocalJWKSet({ keys: [{ ...publicJwk, kid, alg: 'ES256' }] });
  const exchanges: SeenExchange[] = [];
  const idJags: IssuedIdJag[] = [];

  let provider: Provider | undefined;
  const server = createServer((request, response) => (provider as Provider).callback()(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const exchanging = [GRANT_TYPE];
  provider = new Provider(issuer, {
    clients: [
      {
        client_id: HOST.id,
        client_secret: HOST.secret,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [REDIRECT_URI],
        scope: 'openid agent:ask',
      },
      {
        client_id: agentClients.basic.id,
        client_secret: agentClients.basic.secret,
        grant_types: exchanging,
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        client_id: agentClients.privateKeyJwt.id,
        grant_types: exchanging,
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'private_key_jwt',
        token_endpoint_auth_signing_alg: 'ES256',
        jwks: { keys: [{ ...agentClients.privateKeyJwt.publicJwk, use: 'sig' }] },
      },
    ],
    jwks: { keys: [{ ...privateJwk, kid, alg: 'ES256', use: 'sig' }] },
    cookies: { keys: ['test-cookie-key-for-the-exchange-provider'] },
    ttl: { AccessToken: 3600, AuthorizationCode: 600, IdToken: 3600, Interaction: 600, Session: 3600, Grant: 3600 },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    scopes: ['openid', 'agent:ask'],
    enabledJWA: { idTokenSigningAlgValues: ['ES256'], clientAuthSigningAlgValues: ['ES256'] },
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    features: {
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => agentResource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (indicator !== agentResource) throw new Error(`unknown resource ${indicator}`);
          return {
            scope: 'agent:ask',
            audience: agentResource,
            accessTokenFormat: 'jwt',
            accessTokenTTL: 3600,
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    pkce: { required: () => true },
  } as never);

  // RFC 8693 §2: the provider has authenticated the client before the grant runs.
  const refuse = (ctx: GrantContext, error: string) => {
    ctx.status = 400;
    ctx.body = { error, error_description: 'refused by the test server' };
  };
  (
    provider as unknown as {
      registerGrantType(name: string, handler: (ctx: GrantContext) => Promise<void>, params: string[]): void;
    }
  ).registerGrantType(
    GRANT_TYPE,
    async (ctx) => {
      const { params, client } = ctx.oidc;
      const subjectToken = params.subject_token;
      const requested = params.audience;
      const audience = requested === undefined ? [] : Array.isArray(requested) ? requested : [requested];
      if (typeof subjectToken !== 'string' || params.subject_token_type !== ACCESS_TOKEN_TYPE)
        return refuse(ctx, 'invalid_request');
      const forIdJag = params.requested_token_type === ID_JAG_TYPE && options.idJag !== undefined;
      if (!forIdJag && (audience.length !== 1 || !audiences.includes(audience[0]!)))
        return refuse(ctx, 'invalid_target');
      let subject: Record<string, unknown>;
      try {
        // Only a token this server issued for the agent, still valid, is exchanged.
        subject = (await jwtVerify(subjectToken, keySet, { issuer, audience: agentResource, typ: 'at+jwt' })).payload;
      } catch {
        return refuse(ctx, 'invalid_grant');
      }
      if (forIdJag) {
        const { authorizationServers } = options.idJag!;
        const idp = { issuer, key: { kid, privateJwk }, authorizationServers, issued: idJags };
        return issueIdJag(ctx, subject as { sub: string }, subjectToken, idp);
      }
      exchanges.push({ clientId: client.clientId, subjectToken, audience });
      const expiresIn = 300;
      const accessToken = await new SignJWT({
        client_id: client.clientId,
        scope: 'crm:read',
        act: { sub: client.clientId },
      })
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid })
        .setIssuer(issuer)
        .setSubject(subject.sub as string)
        .setAudience(audience[0]!)
        .setIssuedAt()
        .setExpirationTime(`${expiresIn}s`)
        .setJti(randomBytes(16).toString('base64url'))
        .sign(signingKey);
      ctx.body = {
        access_token: accessToken,
        issued_token_type: ACCESS_TOKEN_TYPE,
        token_type: 'Bearer',
        expires_in: expiresIn,
        scope: 'crm:read',
      };
    },
    ['subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'resource', 'scope'],
  );

  return {
    issuer,
    exchanges,
    idJags,
    async userToken(accountId) {
      const { send } = browserSession(issuer);
      const verifier = randomBytes(32).toString('base64url');
      const query = new URLSearchParams({
        client_id: HOST.id,
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: 'openid agent:ask',
        resource: agentResource,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
        state: 'state-1',
        nonce: 'nonce-1',
      });
      let location = await send(`/auth?${query}`);
      location = await send(await send(location, form({ prompt: 'login', login: accountId, password: 'any' })));
      location = await send(await send(location, form({ prompt: 'consent' })));
      const code = new URL(location).searchParams.get('code');
      if (code === null) throw new Error(`no code in ${location}`);
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${HOST.id}:${HOST.secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT_URI,
          code_verifier: verifier,
          resource: agentResource,
        }),
      });
      const tokens = (await response.json()) as Record<string, string>;
      if (!response.ok) throw new Error(`token endpoint answered ${response.status}: ${tokens.error}`);
      return tokens.access_token as string;
    },
    close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return closed;
    },
  };
}
