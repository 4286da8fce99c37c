// The Worker recipe (examples/worker: agent.ts, worker.ts and wrangler.toml, which docs/workers.md
// prints as they are: tests/repo/docs-examples.test.ts) under `npx wrangler dev`, with the
// `.dev.vars` the page names: a code agent whose tool waits for approval, decided by a second request with the same API
// token; `jwt()` with its issuer, audience and DPoP replay store; sessions and limits in real
// Durable Objects (design §25). `agentward` resolves to this checkout's sources through a
// package in the project's node_modules, as an installed one would.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { root, tempFolder } from '../helpers/build.ts';
import { dpopProof, thumbprint } from '../helpers/dpop.ts';
import { hmacSigner, signToken, testKey } from '../helpers/jwt.ts';
import { startWranglerDev } from '../helpers/wrangler.ts';
import { startAuthorizationServer } from '../helpers/authorization-server.ts';
import { clientCredentials, clientFor, RESOURCE } from '../helpers/idp-scenario.ts';

const API_TOKEN = 'recipe-api-token-0123456789';
const JWT_SECRET = 'a-recipe-jwt-secret-that-is-at-least-32-bytes-long';
/** The bound of one request's wait. */
const REQUEST_MS = 30_000;

const ISSUER = 'https://auth.example.com';

/**
 * A project holding the files of examples/<folder> as they are, and `agentward` as installed, its
 * entries this checkout's sources (wrangler's esbuild reads TypeScript).
 */
function recipeProject(t: TestContext, folder: string, files: string[]): string {
  const project = tempFolder(t, 'agentward-recipe-');
  for (const name of files) copyFileSync(join(root, 'examples', folder, name), join(project, name));
  const installed = join(project, 'node_modules', 'agentward');
  mkdirSync(installed, { recursive: true });
  symlinkSync(join(root, 'src'), join(installed, 'src'));
  writeFileSync(
    join(installed, 'package.json'),
    JSON.stringify({
      name: 'agentward',
      type: 'module',
      exports: { '.': './src/index.ts', './cloudflare': './src/cloudflare/index.ts' },
    }),
  );
  return project;
}

async function token(scope: string, extra: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: ISSUER, sub: 'ada', aud: 'agent', iat: now - 5, exp: now + 600, scope, ...extra };
  return signToken({ alg: 'HS256', typ: 'JWT' }, claims, await hmacSigner(JWT_SECRET));
}

test("the Worker recipe under wrangler dev: a code agent's approval decided on a second request with the README's .dev.vars, jwt() with its issuer, audience and DPoP replay store, sessions and limits in Durable Objects", async (t) => {
  const project = recipeProject(t, 'worker', ['agent.ts', 'worker.ts', 'wrangler.toml']);
  writeFileSync(join(project, '.dev.vars'), `AGENT_API_TOKEN=${API_TOKEN}\nAGENT_JWT_SECRET=${JWT_SECRET}\n`);
  const base = `${await startWranglerDev(t, project)}/agent`;
  const call = async (path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> }) => {
    const response = await fetch(`${base}${path}`, {
      method: init.method ?? 'POST',
      headers: { 'content-type': 'application/json', ...init.headers },
      ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
      signal: AbortSignal.timeout(REQUEST_MS),
    });
    return { response, body: (await response.json()) as Record<string, any> };
  };
  const caller = { authorization: `Bearer ${API_TOKEN}` };

  // Without a credential: 401, counted by the limits' Durable Objects as the address's failure.
  const refused = await call('', { body: { message: 'hi' } });
  assert.equal(refused.response.status, 401);

  // The tool waits for approval: the run stops, its session and checkpoint in the store's object.
  const asked = await call('', {
    body: { message: '/tool refund {"orderId":"A-1"}', sessionId: 'chat-1' },
    headers: caller,
  });
  assert.equal(asked.response.status, 200, JSON.stringify(asked.body));
  assert.match(asked.response.headers.get('ratelimit') ?? '', /^"requests";r=59;/, 'counted in AGENT_LIMITS');
  assert.equal(asked.body.status, 'awaiting-approval');
  const [approval] = asked.body.approvals as { id: string }[];
  assert.ok(approval);

  // A second request decides it, with the recipe's own API token (the README's .dev.vars): the run
  // resumes from the checkpoint another request stored.
  const decided = await call(`/approvals/${approval.id}`, { body: { approved: true }, headers: caller });
  assert.equal(decided.response.status, 200, JSON.stringify(decided.body));
  assert.equal(decided.body.status, 'completed');
  assert.match(decided.body.text, /refund: refunded A-1/);
  const again = await call(`/approvals/${approval.id}`, { body: { approved: true }, headers: caller });
  assert.equal(again.response.status, 404, 'decided once');

  const transcript = await call('/chat/chat-1', { method: 'GET', headers: caller });
  assert.equal(transcript.response.status, 200);
  assert.ok(
    (transcript.body.messages as { role: string; content?: string }[]).some(
      (message) => message.role === 'tool' && message.content === 'refunded A-1',
    ),
    JSON.stringify(transcript.body.messages),
  );

  // jwt() with the recipe's issuer and audience: its token is served; one from another issuer, with
  // none, or for another audience is refused.
  const chatter = { authorization: `Bearer ${await token('agent:chat')}` };
  const started = await call('', { body: { message: 'hello', sessionId: 'chat-2' }, headers: chatter });
  assert.equal(started.response.status, 200, JSON.stringify(started.body));
  for (const iss of ['https://elsewhere.example.com', undefined]) {
    const foreign = await token('agent:chat', { iss });
    const refusedToken = await call('/chat/chat-2', { method: 'GET', headers: { authorization: `Bearer ${foreign}` } });
    assert.equal(refusedToken.response.status, 401, `iss ${iss}`);
  }
  const otherAudience = await token('agent:chat', { aud: 'another-api' });
  assert.equal(
    (await call('/chat/chat-2', { method: 'GET', headers: { authorization: `Bearer ${otherAudience}` } })).response
      .status,
    401,
  );

  // A DPoP-bound token: its proof is accepted once, and a replay of it is refused (DPOP_REPLAY).
  const key = await testKey('ES256');
  const bound = await token('agent:chat', { cnf: { jkt: await thumbprint(key.jwk) } });
  const proof = await dpopProof(key, {
    htm: 'GET',
    htu: `${base}/chat/chat-2`,
    iat: Math.floor(Date.now() / 1000),
    token: bound,
  });
  const withProof = { authorization: `DPoP ${bound}`, dpop: proof };
  assert.equal((await call('/chat/chat-2', { method: 'GET', headers: withProof })).response.status, 200);
  const replayed = await call('/chat/chat-2', { method: 'GET', headers: withProof });
  assert.equal(replayed.response.status, 401, 'the proof was seen');
});

test('the oidc() Worker example under wrangler dev: access tokens of a local OpenID provider (oidc-provider) for its issuer and audience are served, others refused', async (t) => {
  const provider = await startAuthorizationServer();
  t.after(() => provider.close());
  const project = recipeProject(t, 'worker-oidc', ['worker.ts', 'wrangler.toml']);
  // .dev.vars over wrangler.toml's [vars]: the local provider (an http: issuer is allowed on loopback only).
  writeFileSync(join(project, '.dev.vars'), `OIDC_ISSUER=${provider.issuer}\nOIDC_AUDIENCE=${RESOURCE}\n`);
  const base = `${await startWranglerDev(t, project)}/agent`;
  const send = (authorization?: string) =>
    fetch(base, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization && { authorization }) },
      body: JSON.stringify({ message: 'hello from oidc' }),
      signal: AbortSignal.timeout(REQUEST_MS),
    });

  const refused = await send();
  assert.equal(refused.status, 401);
  assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
  for (const alg of ['ES256', 'RS256']) {
    const accessToken = await clientCredentials(provider.issuer, clientFor(alg));
    const served = await send(`Bearer ${accessToken}`);
    assert.equal(served.status, 200, `${alg}: ${await served.clone().text()}`);
    assert.equal(((await served.json()) as { text: string }).text, 'hello from oidc');
  }
  // Signed by a key the provider does not publish, with its issuer and audience: refused.
  const now = Math.floor(Date.now() / 1000);
  const forged = await signToken(
    { alg: 'HS256', typ: 'at+jwt' },
    { iss: provider.issuer, aud: RESOURCE, sub: 'mallory', iat: now, exp: now + 300 },
    await hmacSigner(JWT_SECRET),
  );
  const forgedAnswer = await send(`Bearer ${forged}`);
  assert.equal(forgedAnswer.status, 401);
  assert.match(forgedAnswer.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
});
