/**
 * What every runtime checks of `introspection()` against the real authorization server
 * (tests/auth/introspection.node.test.ts starts oidc-provider and a small proxy in front of its
 * introspection endpoint, then runs this under Node, under Bun and Deno in child processes, and
 * inside workerd): web-standard code only, no `node:` import.
 *
 * Opaque access tokens (oidc-provider's resource indicator with `accessTokenFormat: 'opaque'`)
 * are accepted; a revoked one is refused once its kept answer is older than `cache.maxAgeSec`
 * (at once with `cache: false`); a token for another resource is refused; with the endpoint
 * down requests skip, and they are served again once it is back; a slow endpoint under 40
 * concurrent distinct tokens never sees more than 16 calls at once (the others wait in line).
 */
import { introspection, routeAuth, type AuthFn } from '../../src/auth/index.ts';
import { secretFor } from './idp-scenario.ts';

export const OPAQUE_RESOURCE = 'https://agent.example/opaque';
export const OPAQUE_SCOPE = 'agent:opaque';
/** The resource server's client at the authorization server: its credentials call the introspection endpoint. */
export const INTROSPECTOR = 'agent-introspector';

export interface IntrospectionInput {
  readonly issuer: string;
  /** The proxy in front of `<issuer>/token/introspection`: `POST <proxy>/introspect`, controlled by `POST <proxy>/__mode`. */
  readonly proxy: string;
  /** A JWT access token of the provider for its other resource. */
  readonly otherResourceToken: string;
}

export interface IntrospectionResult {
  readonly outcomes: Record<string, string | number>;
  readonly maxConcurrent: number;
  readonly calls: number;
}

const basic = (clientId: string) => `Basic ${btoa(`${clientId}:${secretFor(clientId)}`)}`;

/** An opaque access token of client `clientId` for OPAQUE_RESOURCE. */
export async function opaqueToken(issuer: string, clientId: string): Promise<string> {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { authorization: basic(clientId), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: OPAQUE_SCOPE, resource: OPAQUE_RESOURCE }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!response.ok || body.access_token === undefined)
    throw new Error(`token endpoint answered ${response.status}: ${JSON.stringify(body)}`);
  return body.access_token;
}

async function revoke(issuer: string, clientId: string, token: string): Promise<void> {
  const response = await fetch(`${issuer}/token/revocation`, {
    method: 'POST',
    headers: { authorization: basic(clientId), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`revocation answered ${response.status}`);
}

async function outcome(entry: AuthFn, token: string): Promise<string | number> {
  const result = await routeAuth(entry)(
    new Request('https://agent.example/opaque', { headers: { authorization: `Bearer ${token}` } }),
  );
  return result.ok
    ? `${result.principal.type}:${result.principal.id}:${result.principal.authenticator}`
    : result.response.status;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function mode(
  proxy: string,
  settings: { down?: boolean; delayMs?: number; reset?: boolean },
): Promise<{ maxConcurrent: number; calls: number }> {
  const response = await fetch(`${proxy}/__mode`, { method: 'POST', body: JSON.stringify(settings) });
  return (await response.json()) as { maxConcurrent: number; calls: number };
}

export async function runIntrospectionScenario({
  issuer,
  proxy,
  otherResourceToken,
}: IntrospectionInput): Promise<IntrospectionResult> {
  const outcomes: Record<string, string | number> = {};
  const client = 'svc-es256';
  const credentials = {
    clientId: INTROSPECTOR,
    clientSecret: secretFor(INTROSPECTOR),
    audience: OPAQUE_RESOURCE,
    scopes: [OPAQUE_SCOPE],
  };
  // The endpoint from the issuer's metadata (oidc-provider has OpenID discovery).
  const discovered = introspection({ issuer, ...credentials });
  const token = await opaqueToken(issuer, client);
  outcomes.accepted = await outcome(discovered, token);
  outcomes['accepted again (kept)'] = await outcome(discovered, token);
  outcomes['a token for another resource'] = await outcome(discovered, otherResourceToken);
  outcomes['not a token the server issued'] = await outcome(discovered, 'not-a-token-the-server-issued');

  // Revocation: kept for at most maxAgeSec, then refused; without the cache, refused at once.
  const kept = introspection({ issuer, ...credentials, cache: { maxAgeSec: 1 } });
  const uncached = introspection({ issuer, ...credentials, cache: false });
  const revoked = await opaqueToken(issuer, client);
  outcomes['before revocation (kept)'] = await outcome(kept, revoked);
  outcomes['before revocation (no cache)'] = await outcome(uncached, revoked);
  await revoke(issuer, client, revoked);
  outcomes["revoked, within the kept answer's age"] = await outcome(kept, revoked);
  outcomes['revoked, no cache'] = await outcome(uncached, revoked);
  await sleep(1100);
  outcomes["revoked, after the kept answer's age"] = await outcome(kept, revoked);

  // The endpoint down, then back: skips, never kept, then served.
  const proxied = introspection({ endpoint: `${proxy}/introspect`, issuer, ...credentials });
  const fresh = await opaqueToken(issuer, client);
  await mode(proxy, { down: true, reset: true });
  outcomes['endpoint down'] = await outcome(proxied, fresh);
  await mode(proxy, { down: false });
  outcomes['endpoint back'] = await outcome(proxied, fresh);

  // A slow endpoint and 40 distinct tokens at once: at most 16 calls in flight, the rest wait their turn.
  await mode(proxy, { delayMs: 400, reset: true });
  const flood = introspection({ endpoint: `${proxy}/introspect`, issuer, ...credentials });
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) => outcome(flood, `garbage-token-${i}-of-a-flood`)),
  );
  outcomes['flood: every garbage token refused'] = answers.every((answer) => answer === 401)
    ? 'all 401'
    : JSON.stringify(answers);
  const stats = await mode(proxy, { delayMs: 0 });
  return { outcomes, ...stats };
}

/** What every runtime must find. */
export const EXPECTED_OUTCOMES: Record<string, string | number> = {
  accepted: 'service:svc-es256:introspection',
  'accepted again (kept)': 'service:svc-es256:introspection',
  'a token for another resource': 401,
  'not a token the server issued': 401,
  'before revocation (kept)': 'service:svc-es256:introspection',
  'before revocation (no cache)': 'service:svc-es256:introspection',
  "revoked, within the kept answer's age": 'service:svc-es256:introspection',
  'revoked, no cache': 401,
  "revoked, after the kept answer's age": 401,
  'endpoint down': 401,
  'endpoint back': 'service:svc-es256:introspection',
  'flood: every garbage token refused': 'all 401',
};
