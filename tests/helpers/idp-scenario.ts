/**
 * What every runtime checks against the real authorization server (tests/auth/oidc-provider.node.test.ts
 * starts it and runs this under Node, and through child processes under Bun and Deno, and inside
 * workerd): web-standard code only (fetch, Web Crypto), no `node:` import.
 *
 * `oidc()` and `jwt({ jwksUrl })` set up for access tokens as the README documents (audience =
 * the API's resource identifier, `typ: 'at+jwt'`, the scope required) verify the provider's
 * client-credentials and authorization-code tokens signed RS256, PS256, ES256 and EdDSA, refuse
 * its ID tokens, and follow a key rotation within the 30 s refetch bound.
 */
import { oidc, jwt, routeAuth, type AuthResult } from '../../src/auth/index.ts';

export const RESOURCE = 'https://agent.example/api';
export const SCOPE = 'agent:invoke';
export const ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;
export type SigningAlg = (typeof ALGORITHMS)[number];
/** The client that signs with `alg`: `svc-rs256`, `svc-ps256`, `svc-es256`, `svc-eddsa`. */
export const clientFor = (alg: string): string => `svc-${alg.toLowerCase()}`;
export const secretFor = (clientId: string): string => `${clientId}-secret-that-is-long-enough`;

export interface ScenarioInput {
  readonly issuer: string;
  /** Authorization-code tokens of user `alice`, by alg: the access token and the ID token. */
  readonly userTokens: Record<string, { accessToken: string; idToken: string }>;
}

/** Outcome per case: `<type>:<id>` when accepted, else the status. Plus what the runtime lacks. */
export interface ScenarioResult {
  readonly outcomes: Record<string, string | number>;
  readonly lacks: Record<string, string>;
  readonly warnings: string[];
}

/** A client-credentials access token from the provider's token endpoint. */
export async function clientCredentials(issuer: string, clientId: string): Promise<string> {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${btoa(`${clientId}:${secretFor(clientId)}`)}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: SCOPE, resource: RESOURCE }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!response.ok || body.access_token === undefined)
    throw new Error(`token endpoint answered ${response.status}: ${JSON.stringify(body)}`);
  return body.access_token;
}

async function lacksEd25519(): Promise<string | undefined> {
  try {
    await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify']);
    return undefined;
  } catch (error) {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
}

export async function runScenario({ issuer, userTokens }: ScenarioInput): Promise<ScenarioResult> {
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(' '));
  try {
    let clock = Date.now();
    const internals = { now: () => clock };
    const access = { audience: RESOURCE, typ: 'at+jwt', scopes: [SCOPE], algorithms: [...ALGORITHMS] };
    const entries: Record<string, (request: Request) => Promise<AuthResult>> = {
      oidc: routeAuth(oidc({ issuer, ...access, _internal: internals })),
      jwks: routeAuth(jwt({ jwksUrl: `${issuer}/jwks`, issuer, ...access, _internal: internals })),
      // What the README used to show: the client id as audience. It lets the ID token in (checked, so the refusal above can fail).
      clientIdAudience: routeAuth(
        oidc({ issuer, audience: clientFor('RS256'), algorithms: [...ALGORITHMS], _internal: internals }),
      ),
    };
    const outcomes: Record<string, string | number> = {};
    const check = async (name: string, entry: string, token: string) => {
      const result = await entries[entry]!(
        new Request('https://agent.example/api', { headers: { authorization: `Bearer ${token}` } }),
      );
      outcomes[name] = result.ok ? `${result.principal.type}:${result.principal.id}` : result.response.status;
    };

    for (const alg of ALGORITHMS) {
      const service = await clientCredentials(issuer, clientFor(alg));
      for (const entry of ['oidc', 'jwks']) {
        await check(`${entry} ${alg} client-credentials`, entry, service);
        await check(`${entry} ${alg} authorization-code access token`, entry, userTokens[alg]!.accessToken);
        await check(`${entry} ${alg} ID token`, entry, userTokens[alg]!.idToken);
      }
    }
    await check('client-id audience RS256 ID token', 'clientIdAudience', userTokens.RS256!.idToken);

    // Key rotation: the provider signs with new keys and still lists the old ones.
    const before = await clientCredentials(issuer, clientFor('RS256'));
    const rotated = await fetch(`${issuer}/__rotate`, { method: 'POST' });
    if (rotated.status !== 204) throw new Error(`rotation answered ${rotated.status}`);
    const after = await clientCredentials(issuer, clientFor('RS256'));
    for (const entry of ['oidc', 'jwks']) {
      await check(`${entry} rotation: new kid within 30 s of the last fetch`, entry, after);
      await check(`${entry} rotation: old kid still listed`, entry, before);
    }
    clock += 30_000;
    for (const entry of ['oidc', 'jwks']) await check(`${entry} rotation: new kid after 30 s`, entry, after);
    const lacks: Record<string, string> = {};
    const ed = await lacksEd25519();
    if (ed !== undefined) lacks.EdDSA = ed;
    return { outcomes, lacks, warnings };
  } finally {
    console.warn = warn;
  }
}

/** What `runScenario` must answer on a runtime that lacks `lacks` (detected by the scenario itself). */
export function expectedOutcomes(lacks: Record<string, string>): Record<string, string | number> {
  const expected: Record<string, string | number> = {};
  for (const alg of ALGORITHMS) {
    const ok = lacks[alg] === undefined;
    for (const entry of ['oidc', 'jwks']) {
      expected[`${entry} ${alg} client-credentials`] = ok ? `service:${clientFor(alg)}` : 401;
      expected[`${entry} ${alg} authorization-code access token`] = ok ? 'user:alice' : 401;
      expected[`${entry} ${alg} ID token`] = 401;
    }
  }
  expected['client-id audience RS256 ID token'] = 'user:alice';
  for (const entry of ['oidc', 'jwks']) {
    expected[`${entry} rotation: new kid within 30 s of the last fetch`] = 401;
    expected[`${entry} rotation: old kid still listed`] = `service:${clientFor('RS256')}`;
    expected[`${entry} rotation: new kid after 30 s`] = `service:${clientFor('RS256')}`;
  }
  return expected;
}
