// Two tenants never meet (docs/tenants.md): the same `sub` of one issuer in two Auth0-style
// organizations (`org_id`, `tenantClaim`) owns nothing of the other's, over HTTP: sessions,
// their listing, continuing them, approvals and their decision, and the caller's token carried
// to a paused run. Signed JWTs through jwt(), as a deployment would see them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Tool } from '../../src/agent/index.ts';
import { jwt, routeAuth, type Principal } from '../../src/auth/index.ts';
import { completePrincipal } from '../../src/auth/principal.ts';
import { carryPresentedToken, presentedToken } from '../../src/auth/presented-token.ts';
import { agentHandler, type AuditRecord } from '../../src/http/index.ts';
import { hmacSigner, signToken } from '../helpers/jwt.ts';
import { exchangeWith, fakeEndpoint } from '../helpers/token-endpoint.ts';

const SECRET = 'tenants-over-http-secret-0123456789abcdef';
const ISSUER = 'https://example-tenant.us.auth0.com/';
const BASE = 'https://agent.example/agent';

const tokenOf = async (org: string) => {
  const now = Math.floor(Date.now() / 1000);
  const payload = { iss: ISSUER, sub: 'auth0|alice', aud: 'agent-api', org_id: org, iat: now, exp: now + 600 };
  return signToken({ alg: 'HS256', typ: 'JWT' }, payload, await hmacSigner(SECRET));
};

function setup(records: AuditRecord[] = []) {
  const deployed: unknown[] = [];
  const deploy: Tool = {
    name: 'deploy',
    description: 'Deploys',
    parameters: { type: 'object' },
    needsApproval: true,
    execute: (args) => (deployed.push(args), 'ok'),
  };
  const agent = createAgent({
    name: 'web',
    model: echoModel(),
    tools: [deploy],
    store: memoryStore(),
    sessions: 'owned',
  });
  const auth = jwt({ secret: SECRET, issuer: ISSUER, audience: 'agent-api', tenantClaim: 'org_id', tenants: 'any' });
  const audit = (record: AuditRecord) => void records.push(record);
  return { deployed, handler: agentHandler(agent, { basePath: '/agent', auth, audit }) };
}

const request = (token: string, method: string, path: string, body?: unknown) =>
  new Request(BASE + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

test("the same sub in two tenants: neither lists, reads, continues or decides the other's sessions and approvals", async () => {
  const records: AuditRecord[] = [];
  const { handler, deployed } = setup(records);
  const acme = await tokenOf('org_acme');
  const globex = await tokenOf('org_globex');
  const sent = await handler(
    request(acme, 'POST', '', { message: '/tool deploy {"env":"prod"}', sessionId: 's-acme' }),
  );
  assert.equal(sent.status, 200);
  const { approvals } = (await sent.json()) as { approvals: { id: string }[] };
  const approvalId = approvals[0]!.id;

  const listed = async (token: string) =>
    (
      (await (await handler(request(token, 'GET', '/sessions'))).json()) as { sessions: { sessionId: string }[] }
    ).sessions.map((row) => row.sessionId);
  assert.deepEqual(await listed(acme), ['s-acme']);
  assert.deepEqual(await listed(globex), [], "globex's alice lists nothing of acme's alice");
  for (const [method, path, body] of [
    ['GET', '/chat/s-acme', undefined],
    ['GET', '/approvals?sessionId=s-acme', undefined],
    ['POST', '', { message: 'take over', sessionId: 's-acme' }],
    ['POST', `/approvals/${approvalId}`, { approved: true }],
    ['DELETE', '/chat/s-acme', undefined],
  ] as const) {
    const answer = await handler(request(globex, method, path, body));
    assert.equal(answer.status, 404, `${method} ${path} by the other tenant's alice`);
    await answer.body?.cancel();
  }
  assert.deepEqual(deployed, [], 'nothing was approved');
  const decided = await handler(request(acme, 'POST', `/approvals/${approvalId}`, { approved: true }));
  assert.equal(decided.status, 200, 'the owner in her own tenant decides');
  assert.deepEqual(deployed, [{ env: 'prod' }]);
  // The records name each caller with its tenant: the two alices are two callers there too.
  const callers = new Set(records.map((record) => JSON.stringify(record.caller)));
  assert.deepEqual(
    [...callers].sort(),
    ['org_acme', 'org_globex'].map((tenant) =>
      JSON.stringify({ tenant, issuer: ISSUER, authenticator: 'jwt', id: 'auth0|alice', type: 'user' }),
    ),
  );
  const statuses = records.filter((record) => record.caller?.tenant === 'org_globex').map((record) => record.status);
  assert.deepEqual(statuses, [200, 404, 404, 404, 404, 404], "globex's list, then the five refusals");
});

test("the caller's token is carried to a paused run only by the same caller in the same tenant", async () => {
  // A tokenExchange() exists: routeAuth ties each verified token to its principal.
  exchangeWith(fakeEndpoint().fetch);
  const auth = jwt({ secret: SECRET, issuer: ISSUER, audience: 'agent-api', tenantClaim: 'org_id', tenants: 'any' });
  const acme = await tokenOf('org_acme');
  const result = await routeAuth(auth)(request(acme, 'GET', '/sessions'));
  assert.ok(result.ok);
  const from = result.principal;
  assert.equal(presentedToken(from), acme);
  // The paused run's principal, rebuilt from a checkpoint: the same caller, or the same sub in another tenant.
  const same = completePrincipal(JSON.parse(JSON.stringify(from))) as Principal;
  const elsewhere = completePrincipal({ ...JSON.parse(JSON.stringify(from)), tenant: 'org_globex' }) as Principal;
  carryPresentedToken(from, elsewhere);
  assert.equal(presentedToken(elsewhere), undefined, 'another tenant gets no token');
  carryPresentedToken(from, same);
  assert.equal(presentedToken(same), acme);
});
