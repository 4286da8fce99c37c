/**
 * A real OpenID Connect authorization server for the tests: `oidc-provider` 9 on 127.0.0.1
 * (port 0), issuing RFC 9068 JWT access tokens (`typ: at+jwt`) for one resource indicator,
 * through the client-credentials and the authorization-code flows (the latter driven through
 * the provider's own login and consent pages, with PKCE), signed RS256, PS256, ES256 or EdDSA:
 * each client signs with one algorithm. `rotate()` (or `POST /__rotate`, for the runtimes that run
 * tests/helpers/idp-scenario.ts) replaces the signing keys, as a provider does: new keys first
 * in the key set, the old ones kept after them.
 *
 * @example
 * const server = await startAuthorizationServer();
 * const token = await server.clientCredentials('svc-ps256');
 * await server.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import Provider from 'oidc-provider';

import { ALGORITHMS, RESOURCE, SCOPE, clientFor, secretFor, type SigningAlg } from './idp-scenario.ts';
import { INTROSPECTOR, OPAQUE_RESOURCE, OPAQUE_SCOPE } from './introspection-scenario.ts';

const REDIRECT_URI = 'https://client.example/callback';

export interface AuthorizationServer {
  /** `http://127.0.0.1:<port>`: the issuer, as the provider's discovery document states it. */
  readonly issuer: string;
  readonly jwksUri: string;
  /** The authorization-code flow as user `accountId`: the access token (for RESOURCE) and the ID token. */
  authorizationCode(clientId: string, accountId: string): Promise<{ accessToken: string; idToken: string }>;
  /** Client credentials with a DPoP proof for the token endpoint (RFC 9449 §5): the token response, its access token bound to the proof's key. */
  dpopClientCredentials(clientId: string, proof: string): Promise<Record<string, string>>;
  /** New signing keys (new kids) first, the old ones still listed. */
  rotate(): Promise<void>;
  /** The kids the key set lists now, in order. */
  kids(): string[];
  close(): Promise<void>;
}

async function signingKeys(generation: number): Promise<Record<string, unknown>[]> {
  const make = async (params: RsaHashedKeyGenParams | EcKeyGenParams | Algorithm, kid: string) => {
    const pair = (await crypto.subtle.generateKey(params, true, ['sign', 'verify'])) as CryptoKeyPair;
    const { key_ops: _ops, ext: _ext, alg: _alg, ...jwk } = await crypto.subtle.exportKey('jwk', pair.privateKey);
    return { ...jwk, kid: `${kid}-${generation}` };
  };
  return Promise.all([
    make(
      { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: Uint8Array.of(1, 0, 1), hash: 'SHA-256' },
      'rsa',
    ),
    make({ name: 'ECDSA', namedCurve: 'P-256' }, 'p256'),
    make({ name: 'Ed25519' }, 'ed25519'),
  ]);
}

function providerFor(issuer: string, keys: Record<string, unknown>[]): Provider {
  const clients = ALGORITHMS.map((alg) => ({
    client_id: clientFor(alg),
    client_secret: secretFor(clientFor(alg)),
    grant_types: ['client_credentials', 'authorization_code'],
    response_types: ['code'],
    redirect_uris: [REDIRECT_URI],
    scope: `openid ${SCOPE} ${OPAQUE_SCOPE}`,
    id_token_signed_response_alg: alg,
  }));
  // The resource server's own credentials, for the introspection endpoint (client_secret_basic).
  clients.push({
    ...clients[0]!,
    client_id: INTROSPECTOR,
    client_secret: secretFor(INTROSPECTOR),
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
  });
  const algOf = (clientId: string): SigningAlg => ALGORITHMS.find((alg) => clientFor(alg) === clientId) ?? 'RS256';
  const provider = new Provider(issuer, {
    clients,
    jwks: { keys: keys as never },
    cookies: { keys: ['test-cookie-key-for-the-provider'] },
    ttl: { AccessToken: 3600, ClientCredentials: 3600, IdToken: 3600, Interaction: 600, Session: 3600, Grant: 3600 },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      // RFC 7662 and RFC 7009: any authenticated client may introspect; a token's own client revokes it.
      introspection: { enabled: true, allowedPolicy: async () => true },
      revocation: { enabled: true, allowedPolicy: async () => true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string, client: { clientId: string }) => {
          // A second API that takes opaque access tokens, checked by introspection.
          if (indicator === OPAQUE_RESOURCE)
            return {
              scope: OPAQUE_SCOPE,
              audience: OPAQUE_RESOURCE,
              accessTokenFormat: 'opaque',
              accessTokenTTL: 3600,
            };
          if (indicator !== RESOURCE) throw new Error(`unknown resource ${indicator}`);
          return {
            scope: SCOPE,
            audience: RESOURCE,
            accessTokenFormat: 'jwt',
            accessTokenTTL: 3600,
            jwt: { sign: { alg: algOf(client.clientId) } },
          };
        },
      },
    },
    // The default scopes and claims; the access token carries `scope`.
    scopes: ['openid', SCOPE, OPAQUE_SCOPE],
  } as never);
  return provider;
}

/**
 * A browser's session with the provider's pages: cookies kept, redirects not followed. `send`
 * answers the `Location` of the answer ('' without one); `page` the text of a page.
 */
export function browserSession(origin: string) {
  const jar = new Map<string, string>();
  const open = async (target: string, init: RequestInit = {}) => {
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(new URL(target, origin), {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      jar.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    return response;
  };
  return {
    async send(target: string, init?: RequestInit): Promise<string> {
      const response = await open(target, init);
      await response.arrayBuffer();
      return response.headers.get('location') ?? '';
    },
    page: async (target: string) => (await open(target)).text(),
  };
}

/** A form post of the provider's pages. */
export const form = (fields: Record<string, string>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields),
});

/** Starts the server; every test that starts one closes it. */
export async function startAuthorizationServer(): Promise<AuthorizationServer> {
  let generation = 0;
  let keys = await signingKeys(generation);
  let provider: Provider | undefined;
  let rotate: () => Promise<void> = async () => {};
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (request.url === '/__rotate' && request.method === 'POST')
      return void rotate().then(() => response.writeHead(204).end());
    (provider as Provider).callback()(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider = providerFor(issuer, keys);
  rotate = async () => {
    generation++;
    keys = [...(await signingKeys(generation)), ...keys];
    provider = providerFor(issuer, keys);
  };

  const basicAuth = (clientId: string) =>
    `Basic ${Buffer.from(`${clientId}:${secretFor(clientId)}`).toString('base64')}`;
  const token = async (clientId: string, body: Record<string, string>, headers: Record<string, string> = {}) => {
    const response = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { authorization: basicAuth(clientId), 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(body),
    });
    const json = (await response.json()) as Record<string, string>;
    if (!response.ok) throw new Error(`token endpoint answered ${response.status}: ${JSON.stringify(json)}`);
    return json;
  };

  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    kids: () => keys.map((key) => key.kid as string),
    async authorizationCode(clientId, accountId) {
      const { send } = browserSession(issuer);
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const query = new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: `openid ${SCOPE}`,
        resource: RESOURCE,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 'state-1',
        nonce: 'nonce-1',
      });
      // Authorize, log in on the provider's own page, consent, and come back with a code.
      let location = await send(`/auth?${query}`);
      location = await send(await send(location, form({ prompt: 'login', login: accountId, password: 'any' })));
      location = await send(await send(location, form({ prompt: 'consent' })));
      const code = new URL(location).searchParams.get('code');
      if (code === null) throw new Error(`no code in ${location}`);
      const tokens = await token(clientId, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
        resource: RESOURCE,
      });
      return { accessToken: tokens.access_token as string, idToken: tokens.id_token as string };
    },
    dpopClientCredentials: (clientId, proof) =>
      token(clientId, { grant_type: 'client_credentials', resource: RESOURCE, scope: SCOPE }, { dpop: proof }),
    rotate: () => rotate(),
    close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return closed;
    },
  };
}
