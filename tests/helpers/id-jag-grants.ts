/**
 * Enterprise-managed authorization on `oidc-provider` 9, both sides, for
 * tests/http/id-jag-e2e.node.test.ts (and the recipe that shows them): the IdP's RFC 8693 answer
 * to `requested_token_type` `urn:ietf:params:oauth:token-type:id-jag` (an Identity Assertion JWT
 * Authorization Grant: a JWT of `typ` `oauth-id-jag+jwt` with `iss`, `sub`, `aud` the resource
 * authorization server's issuer, `client_id` the agent's client there, `jti`, `exp`, `iat`,
 * `resource` and `scope`), and a resource authorization server: a second provider with the RFC
 * 7523 `jwt-bearer` grant added through `registerGrantType`, which verifies the ID-JAG against the
 * IdP's key set and answers an RFC 9068 access token for the resource.
 *
 * @example
 * const server = await startIdJagAuthorizationServer({ idpIssuer, resources: { [crmUrl]: ['crm:read'] }, clients });
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { createRemoteJWKSet, importJWK, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';

export const ID_JAG_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** What a grant handler of `registerGrantType` reads and writes (the provider has authenticated the client). */
export interface GrantContext {
  oidc: { client: { clientId: string }; params: Record<string, string | string[] | undefined> };
  status: number;
  body: unknown;
}

const refuse = (ctx: GrantContext, error: string) => {
  ctx.status = 400;
  ctx.body = { error, error_description: 'refused by the test server' };
};
const listOf = (value: string | string[] | undefined) => (value === undefined ? [] : [value].flat());

/** An ES256 key pair as JWKs, with its `kid`. */
export async function signingKey(kid: string) {
  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const { key_ops: _o, ext: _e, ...privateJwk } = await crypto.subtle.exportKey('jwk', pair.privateKey);
  const { key_ops: _po, ext: _pe, ...publicJwk } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  return { kid, privateJwk: { ...privateJwk, kid, alg: 'ES256' }, publicJwk: { ...publicJwk, kid, alg: 'ES256' } };
}

/** One ID-JAG the IdP issued: to which of its clients, for which subject token and audience. */
export interface IssuedIdJag {
  readonly clientId: string;
  readonly subjectToken: string;
  readonly audience: string;
  readonly idJag: string;
}

/**
 * The IdP's side (leg 1), called by its RFC 8693 grant once the subject token is verified (its
 * claims `subject`): an ID-JAG for `audience`, when that authorization server is one the
 * requesting client may reach (`authorizationServers[audience][its client id]` names the agent's
 * client there), else `invalid_target`.
 */
export async function issueIdJag(
  ctx: GrantContext,
  subject: JWTPayload & { sub: string },
  subjectToken: string,
  idp: {
    issuer: string;
    key: { kid: string; privateJwk: JsonWebKey };
    authorizationServers: Readonly<Record<string, Readonly<Record<string, string>>>>;
    issued: IssuedIdJag[];
  },
): Promise<void> {
  const { params, client } = ctx.oidc;
  const audience = listOf(params.audience);
  const clientThere = audience.length === 1 ? idp.authorizationServers[audience[0]!]?.[client.clientId] : undefined;
  if (clientThere === undefined) return refuse(ctx, 'invalid_target');
  const resource = listOf(params.resource);
  const scope = typeof params.scope === 'string' ? params.scope : undefined;
  const expiresIn = 300;
  const idJag = await new SignJWT({
    client_id: clientThere,
    ...(resource.length > 0 && { resource: resource.length === 1 ? resource[0] : resource }),
    ...(scope !== undefined && { scope }),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'oauth-id-jag+jwt', kid: idp.key.kid })
    .setIssuer(idp.issuer)
    .setSubject(subject.sub)
    .setAudience(audience[0]!)
    .setIssuedAt()
    .setExpirationTime(`${expiresIn}s`)
    .setJti(randomBytes(16).toString('base64url'))
    .sign(await importJWK(idp.key.privateJwk, 'ES256'));
  idp.issued.push({ clientId: client.clientId, subjectToken, audience: audience[0]!, idJag });
  // RFC 8693 §2.2.1: not an access token, so token_type N_A.
  ctx.body = {
    access_token: idJag,
    issued_token_type: ID_JAG_TYPE,
    token_type: 'N_A',
    expires_in: expiresIn,
    ...(scope !== undefined && { scope }),
  };
}

/** One access token the resource authorization server issued for an ID-JAG. */
export interface GrantedToken {
  readonly clientId: string;
  readonly idJag: string;
  readonly accessToken: string;
}

export interface IdJagAuthorizationServer {
  /** `http://127.0.0.1:<port>`, as its discovery document states it. */
  readonly issuer: string;
  readonly granted: GrantedToken[];
  close(): Promise<void>;
}

/**
 * The resource's authorization server: `oidc-provider` with the RFC 7523 `jwt-bearer` grant. It
 * takes an ID-JAG only when it verifies against the trusted IdP's key set (`typ`
 * `oauth-id-jag+jwt`, `iss` the IdP, `aud` this issuer, in time), names the authenticated client
 * as `client_id`, was never presented before (`jti`), and names a resource this server serves;
 * it answers an `at+jwt` access token for that resource with the ID-JAG's `sub` and the scopes the
 * resource has out of those asked.
 */
export async function startIdJagAuthorizationServer(options: {
  idpIssuer: string;
  resources: Readonly<Record<string, readonly string[]>>;
  clients: { basic: { id: string; secret: string }; privateKeyJwt: { id: string; publicJwk: JsonWebKey } };
}): Promise<IdJagAuthorizationServer> {
  const { idpIssuer, resources, clients } = options;
  const key = await signingKey('crm-as-es256');
  const idpKeys = createRemoteJWKSet(new URL(`${idpIssuer}/jwks`));
  const granted: GrantedToken[] = [];
  const seenJti = new Set<string>();

  let provider: Provider | undefined;
  const server = createServer((request, response) => (provider as Provider).callback()(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider = new Provider(issuer, {
    clients: [
      {
        client_id: clients.basic.id,
        client_secret: clients.basic.secret,
        grant_types: [JWT_BEARER],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        client_id: clients.privateKeyJwt.id,
        grant_types: [JWT_BEARER],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'private_key_jwt',
        token_endpoint_auth_signing_alg: 'ES256',
        jwks: { keys: [{ ...clients.privateKeyJwt.publicJwk, use: 'sig' }] },
      },
    ],
    jwks: { keys: [{ ...key.privateJwk, use: 'sig' }] },
    cookies: { keys: ['test-cookie-key-for-the-resource-authorization-server'] },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'], clientAuthSigningAlgValues: ['ES256'] },
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    features: { devInteractions: { enabled: false } },
  } as never);

  (
    provider as unknown as {
      registerGrantType(name: string, handler: (ctx: GrantContext) => Promise<void>, params: string[]): void;
    }
  ).registerGrantType(
    JWT_BEARER,
    async (ctx) => {
      const { params, client } = ctx.oidc;
      if (typeof params.assertion !== 'string') return refuse(ctx, 'invalid_request');
      let claims: JWTPayload;
      try {
        ({ payload: claims } = await jwtVerify(params.assertion, idpKeys, {
          issuer: idpIssuer,
          audience: issuer,
          typ: 'oauth-id-jag+jwt',
          requiredClaims: ['sub', 'client_id', 'jti', 'exp', 'iat'],
        }));
      } catch {
        return refuse(ctx, 'invalid_grant');
      }
      // The ID-JAG was issued to this client, once.
      if (claims.client_id !== client.clientId || seenJti.has(claims.jti!)) return refuse(ctx, 'invalid_grant');
      seenJti.add(claims.jti!);
      const resource = claims.resource;
      const served = typeof resource === 'string' ? resources[resource] : undefined;
      if (served === undefined) return refuse(ctx, 'invalid_target');
      const asked = typeof claims.scope === 'string' ? claims.scope.split(' ') : [...served];
      const scope = asked.filter((name) => served.includes(name)).join(' ');
      const expiresIn = 600;
      const accessToken = await new SignJWT({ client_id: client.clientId, scope })
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.kid })
        .setIssuer(issuer)
        .setSubject(claims.sub!)
        .setAudience(resource as string)
        .setIssuedAt()
        .setExpirationTime(`${expiresIn}s`)
        .setJti(randomBytes(16).toString('base64url'))
        .sign(await importJWK(key.privateJwk, 'ES256'));
      granted.push({ clientId: client.clientId, idJag: params.assertion, accessToken });
      ctx.body = { access_token: accessToken, token_type: 'Bearer', expires_in: expiresIn, scope };
    },
    ['assertion', 'scope'],
  );

  return {
    issuer,
    granted,
    close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return closed;
    },
  };
}
