import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
// The path, not the bare `undici`: Bun answers that specifier with its own copy, which has no working MockAgent.
import { MockAgent, fetch as undiciFetch } from '../../node_modules/undici/index.js';
import { AuthConfigError, routeAuth } from '../../src/auth/index.ts';
import type { AuthResult } from '../../src/auth/index.ts';
import { KEY_SET_FRESH_MS } from '../../src/auth/key-set.ts';
import { KEY_SET_RETRY_MS } from '../../src/auth/attempt-gate.ts';
import type { InternalOptions } from '../../src/auth/internal-options.ts';
import { oidc, type OidcOptions } from '../../src/auth/oidc.ts';
import {
  AUDIENCE,
  bearer,
  claimsFor,
  json,
  manualClock,
  rsaKey,
  sign,
  startServer,
  type SigningKey,
  type TestServer,
} from '../helpers/jwks.ts';

const ISSUER = 'https://idp.example';
const WELL_KNOWN = '/.well-known/openid-configuration';

interface Reply {
  status: number;
  body: unknown;
  delayMs?: number;
  until?: Promise<unknown>;
}

let agent: MockAgent;
/** What the https origin answers, by path; `hits` counts its requests by path. */
let routes: Map<string, () => Reply>;
let hits: Map<string, number>;
let local: TestServer;
let key: SigningKey;

before(async () => {
  [local, key] = await Promise.all([startServer(), rsaKey('k1')]);
  agent = new MockAgent();
  agent.disableNetConnect();
  agent
    .get(ISSUER)
    .intercept({ path: () => true, method: 'GET' })
    .reply(async ({ path }) => {
      const pathname = new URL(path, ISSUER).pathname;
      hits.set(pathname, (hits.get(pathname) ?? 0) + 1);
      const reply = routes.get(pathname)?.() ?? { status: 404, body: {} };
      if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
      await reply.until;
      return {
        statusCode: reply.status,
        data: JSON.stringify(reply.body),
        responseOptions: { headers: { 'content-type': 'application/json' } },
      };
    })
    .persist();
});
after(async () => {
  await Promise.all([agent.close(), local.close()]);
});

let clock: ReturnType<typeof manualClock>;
beforeEach(() => {
  hits = new Map();
  routes = new Map();
  clock = manualClock();
  local.hits.clear();
  routes.set(WELL_KNOWN, () => ({ status: 200, body: { issuer: ISSUER, jwks_uri: `${ISSUER}/keys` } }));
  routes.set('/keys', () => ({ status: 200, body: { keys: [key.jwk] } }));
});

/** https goes to the MockAgent origin, http to the servers the test runs. */
const internals = (): InternalOptions => ({
  now: clock.now,
  fetch: (url, init) =>
    url.startsWith('https:')
      ? (undiciFetch(url, { ...init, dispatcher: agent } as Parameters<
          typeof undiciFetch
        >[1]) as unknown as Promise<Response>)
      : fetch(url, init),
});

function authenticator(
  options: Partial<OidcOptions> = {},
  more: InternalOptions = {},
): (request: Request) => Promise<AuthResult> {
  return routeAuth([oidc({ issuer: ISSUER, audience: AUDIENCE, ...options, _internal: { ...internals(), ...more } })]);
}

async function outcome(
  authenticate: (request: Request) => Promise<AuthResult>,
  token: string,
): Promise<string | number> {
  const result = await authenticate(bearer(token));
  return result.ok ? result.principal.id : result.response.status;
}

const issued = (sub: string, extra: Record<string, unknown> = {}) =>
  sign(key, claimsFor(sub, { iss: ISSUER, ...extra }));

describe('oidc(): discovery', () => {
  test('discovery is fetched once, on first use, for any number of requests', async () => {
    routes.set(WELL_KNOWN, () => ({ status: 200, body: { issuer: ISSUER, jwks_uri: `${ISSUER}/keys` }, delayMs: 30 }));
    const authenticate = authenticator();
    assert.equal(hits.size, 0, 'nothing is fetched at creation');
    const token = await issued('ada');
    const results = await Promise.all(Array.from({ length: 300 }, () => outcome(authenticate, token)));
    assert.deepEqual(new Set(results), new Set(['ada']));
    clock.advance(KEY_SET_FRESH_MS);
    assert.equal(await outcome(authenticate, token), 'ada');
    assert.equal(hits.get(WELL_KNOWN), 1);
    assert.equal(hits.get('/keys'), 2, 'the key set itself follows the 10-minute freshness');
  });

  test("principal: authenticator oidc, issuer = the token's iss, id = sub", async () => {
    const result = await authenticator()(bearer(await issued('ada')));
    assert.ok(result.ok);
    assert.equal(result.principal.authenticator, 'oidc');
    assert.equal(result.principal.issuer, ISSUER);
    assert.equal(result.principal.id, 'ada');
    assert.equal(result.principal.type, 'user');
  });

  test('a token whose iss is not the configured issuer skips (no trailing-slash tolerance)', async () => {
    const authenticate = authenticator();
    assert.equal(await outcome(authenticate, await issued('ada', { iss: `${ISSUER}/` })), 401);
    assert.equal(await outcome(authenticate, await issued('ada', { iss: 'https://other.example' })), 401);
    assert.equal(await outcome(authenticate, await sign(key, claimsFor('ada'))), 401, 'a token without iss skips');
  });

  test('a discovery document whose issuer differs (trailing slash included) refuses every token', async () => {
    routes.set(WELL_KNOWN, () => ({ status: 200, body: { issuer: `${ISSUER}/`, jwks_uri: `${ISSUER}/keys` } }));
    const authenticate = authenticator();
    for (const iss of [ISSUER, `${ISSUER}/`]) {
      clock.advance(KEY_SET_RETRY_MS);
      assert.equal(await outcome(authenticate, await issued('ada', { iss })), 401);
    }
    assert.equal(hits.get('/keys'), undefined, 'the keys of a mismatched provider are never fetched');
  });

  test('an http: jwks_uri refuses every token; it is never contacted', async () => {
    local.answer(json({ keys: [key.jwk] }));
    routes.set(WELL_KNOWN, () => ({ status: 200, body: { issuer: ISSUER, jwks_uri: `${local.origin}/keys` } }));
    const authenticate = authenticator();
    assert.equal(await outcome(authenticate, await issued('ada')), 401);
    clock.advance(KEY_SET_RETRY_MS);
    assert.equal(await outcome(authenticate, await issued('ada')), 401);
    assert.equal(local.total(), 0);
  });

  test('the discovery URL is the issuer without its trailing / plus /.well-known/openid-configuration', async () => {
    const issuer = `${ISSUER}/tenant/`;
    routes.set(`/tenant${WELL_KNOWN}`, () => ({ status: 200, body: { issuer, jwks_uri: `${ISSUER}/keys` } }));
    const authenticate = authenticator({ issuer });
    assert.equal(await outcome(authenticate, await issued('ada', { iss: issuer })), 'ada');
    assert.equal(hits.get(`/tenant${WELL_KNOWN}`), 1);
    assert.equal(hits.get(WELL_KNOWN), undefined);
  });

  test('discoveryUrl replaces <issuer>/.well-known/openid-configuration', async () => {
    local.answer(json({ issuer: ISSUER, jwks_uri: `${ISSUER}/keys` }));
    const authenticate = authenticator({ discoveryUrl: `${local.origin}/discovery` });
    assert.equal(await outcome(authenticate, await issued('ada')), 'ada');
    assert.equal(local.hits.get('/discovery'), 1);
    assert.equal(hits.get(WELL_KNOWN), undefined);
  });

  test('a failed discovery is retried at most once per 30 s; requests in between skip', async () => {
    let healthy = false;
    const document = { issuer: ISSUER, jwks_uri: `${ISSUER}/keys` };
    routes.set(WELL_KNOWN, () => (healthy ? { status: 200, body: document } : { status: 503, body: {} }));
    const authenticate = authenticator();
    const token = await issued('ada');
    const results = await Promise.all(Array.from({ length: 50 }, () => outcome(authenticate, token)));
    assert.deepEqual(results, Array(50).fill(401));
    assert.equal(hits.get(WELL_KNOWN), 1);
    healthy = true;
    clock.advance(KEY_SET_RETRY_MS - 1);
    assert.equal(await outcome(authenticate, token), 401);
    assert.equal(hits.get(WELL_KNOWN), 1);
    clock.advance(1);
    assert.equal(await outcome(authenticate, token), 'ada');
    assert.equal(hits.get(WELL_KNOWN), 2);
  });

  test('a discovery that never answers ends in a skip after the timeout', async () => {
    let answer = (): void => {};
    const until = new Promise<void>((resolve) => {
      answer = resolve;
    });
    routes.set(WELL_KNOWN, () => ({ status: 200, body: { issuer: ISSUER, jwks_uri: `${ISSUER}/keys` }, until }));
    assert.equal(await outcome(authenticator({}, { timeoutMs: 300 }), await issued('ada')), 401);
    answer();
  });

  test('headers jku, x5u and jwk are ignored: the server they name is never contacted', async () => {
    const attacker = await rsaKey('evil');
    local.answer(json({ keys: [attacker.jwk] }));
    const header = { jku: `${local.origin}/jwks`, x5u: `${local.origin}/x5u`, jwk: attacker.jwk };
    const authenticate = authenticator();
    assert.equal(await outcome(authenticate, await sign(attacker, claimsFor('mallory', { iss: ISSUER }), header)), 401);
    assert.equal(local.total(), 0);
  });

  test('on Workers each request that needs discovery makes its own, and the key set is then shared', async () => {
    routes.set(WELL_KNOWN, () => ({ status: 200, body: { issuer: ISSUER, jwks_uri: `${ISSUER}/keys` }, delayMs: 30 }));
    const authenticate = authenticator({}, { perRequestFetch: true });
    const token = await issued('ada');
    const results = await Promise.all(Array.from({ length: 5 }, () => outcome(authenticate, token)));
    assert.deepEqual(results, Array(5).fill('ada'));
    assert.equal(hits.get(WELL_KNOWN), 5);
    assert.equal(await outcome(authenticate, token), 'ada');
    assert.equal(hits.get(WELL_KNOWN), 5);
  });
});

describe('oidc(): options', () => {
  const invalid: Record<string, unknown> = {
    'issuer missing': { audience: AUDIENCE },
    'issuer empty': { issuer: '', audience: AUDIENCE },
    'issuer on plain http': { issuer: 'http://idp.example', audience: AUDIENCE },
    'discoveryUrl on plain http': {
      issuer: ISSUER,
      audience: AUDIENCE,
      discoveryUrl: 'http://idp.example/.well-known/openid-configuration',
    },
    'HMAC in algorithms': { issuer: ISSUER, audience: AUDIENCE, algorithms: ['RS256', 'HS256'] },
    'none in algorithms': { issuer: ISSUER, audience: AUDIENCE, algorithms: ['none'] },
    'audience missing without allowAnyAudience': { issuer: ISSUER },
    'clockToleranceSec over 300': { issuer: ISSUER, audience: AUDIENCE, clockToleranceSec: 301 },
  };
  for (const [name, options] of Object.entries(invalid)) {
    test(`a configuration error at creation (AGENT_AUTH_CONFIG_INVALID): ${name}`, () => {
      assert.throws(
        () => oidc(options as OidcOptions),
        (error: unknown) =>
          error instanceof AuthConfigError &&
          error.code === 'AGENT_AUTH_CONFIG_INVALID' &&
          error.message.startsWith('oidc(): '),
      );
    });
  }

  test('algorithms default to RS256 and ES256', async () => {
    const rs384 = await rsaKey('k384', 2048, 'RS384');
    routes.set('/keys', () => ({ status: 200, body: { keys: [key.jwk, rs384.jwk] } }));
    const token = await sign(rs384, claimsFor('ada', { iss: ISSUER }));
    assert.equal(await outcome(authenticator(), token), 401);
    assert.equal(await outcome(authenticator({ algorithms: ['RS384'] }), token), 'ada');
  });

  test('allowAnyAudience skips the audience check on purpose', async () => {
    const authenticate = authenticator({ audience: undefined, allowAnyAudience: true });
    assert.equal(await outcome(authenticate, await issued('ada', { aud: 'someone-else' })), 'ada');
    assert.equal(await outcome(authenticator(), await issued('ada', { aud: 'someone-else' })), 401);
  });

  test('a principal mapper replaces the default principal; its authenticator defaults to oidc', async () => {
    const authenticate = authenticator({
      principal: (claims) => ({ id: `svc:${String(claims.sub)}`, type: 'service' }),
    });
    const result = await authenticate(bearer(await issued('ada')));
    assert.ok(result.ok);
    assert.equal(result.principal.id, 'svc:ada');
    assert.equal(result.principal.authenticator, 'oidc');
  });
});
