// The README's Worker recipe (agent.ts, worker.ts and wrangler.toml, taken from the README as it
// is) under `npx wrangler dev`: a code agent whose tool waits for approval, decided by a second
// request, with `jwt()` and its DPoP replay store, sessions and limits in real Durable Objects
// (design §25). `agentward` resolves to this checkout's sources through a package in the
// project's node_modules, as an installed one would.
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { root, tempFolder } from '../helpers/build.ts';
import { readDocs } from '../helpers/docs.ts';
import { dpopProof, thumbprint } from '../helpers/dpop.ts';
import { hmacSigner, signToken, testKey } from '../helpers/jwt.ts';
import { startWranglerDev } from '../helpers/wrangler.ts';

const API_TOKEN = 'recipe-api-token-0123456789';
const JWT_SECRET = 'a-recipe-jwt-secret-that-is-at-least-32-bytes-long';
/** The bound of one request's wait. */
const REQUEST_MS = 30_000;

/** The README's block that starts with `first` (`// agent.ts`, `# wrangler.toml`). */
function readmeBlock(language: string, first: string): string {
  const readme = readDocs();
  const block = [...readme.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))]
    .map((match) => match[1]!)
    .find((code) => code.startsWith(first));
  assert.ok(block, `the README has a ${language} block starting with ${first}`);
  return block;
}

async function token(scope: string, extra: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub: 'ada', aud: 'agent', iat: now - 5, exp: now + 600, scope, ...extra };
  return signToken({ alg: 'HS256', typ: 'JWT' }, claims, await hmacSigner(JWT_SECRET));
}

test("the README's Worker recipe under wrangler dev: a code agent's approval decided on a second request, jwt() with its scopes and DPoP replay store, sessions and limits in Durable Objects", async (t) => {
  const project = tempFolder(t, 'agentward-recipe-');
  writeFileSync(join(project, 'agent.ts'), readmeBlock('ts', '// agent.ts'));
  writeFileSync(join(project, 'worker.ts'), readmeBlock('ts', '// worker.ts'));
  writeFileSync(join(project, 'wrangler.toml'), readmeBlock('toml', '# wrangler.toml'));
  writeFileSync(join(project, '.dev.vars'), `AGENT_API_TOKEN=${API_TOKEN}\nAGENT_JWT_SECRET=${JWT_SECRET}\n`);
  // `agentward` as installed, its entries this checkout's sources (wrangler's esbuild reads TypeScript).
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
  const chatter = { authorization: `Bearer ${await token('agent:chat')}` };

  // Without a credential: 401, counted by the limits' Durable Objects as the address's failure.
  const refused = await call('', { body: { message: 'hi' } });
  assert.equal(refused.response.status, 401);

  // The tool waits for approval: the run stops, its session and checkpoint in the store's object.
  const asked = await call('', {
    body: { message: '/tool refund {"orderId":"A-1"}', sessionId: 'chat-1' },
    headers: chatter,
  });
  assert.equal(asked.response.status, 200, JSON.stringify(asked.body));
  assert.match(asked.response.headers.get('ratelimit') ?? '', /^"requests";r=59;/, 'counted in AGENT_LIMITS');
  assert.equal(asked.body.status, 'awaiting-approval');
  const [approval] = asked.body.approvals as { id: string }[];
  assert.ok(approval);

  // Deciding needs scopes.approve: without it 403, naming the whole union the operation needs.
  const stepUp = await call(`/approvals/${approval.id}`, { body: { approved: true }, headers: chatter });
  assert.equal(stepUp.response.status, 403);
  assert.match(
    stepUp.response.headers.get('www-authenticate') ?? '',
    /error="insufficient_scope", scope="agent:approve"/,
  );
  const byToken = await call(`/approvals/${approval.id}`, {
    body: { approved: true },
    headers: { authorization: `Bearer ${API_TOKEN}` },
  });
  assert.equal(byToken.response.status, 403, 'an API token grants no scope');

  // With the scope, a second request decides it: the run resumes from the checkpoint another request stored.
  const approver = { authorization: `Bearer ${await token('agent:chat agent:approve')}` };
  const decided = await call(`/approvals/${approval.id}`, { body: { approved: true }, headers: approver });
  assert.equal(decided.response.status, 200, JSON.stringify(decided.body));
  assert.equal(decided.body.status, 'completed');
  assert.match(decided.body.text, /refund: refunded A-1/);
  const again = await call(`/approvals/${approval.id}`, { body: { approved: true }, headers: approver });
  assert.equal(again.response.status, 404, 'decided once');

  const transcript = await call('/chat/chat-1', { method: 'GET', headers: chatter });
  assert.equal(transcript.response.status, 200);
  assert.ok(
    (transcript.body.messages as { role: string; content?: string }[]).some(
      (message) => message.role === 'tool' && message.content === 'refunded A-1',
    ),
    JSON.stringify(transcript.body.messages),
  );

  // A DPoP-bound token: its proof is accepted once, and a replay of it is refused (DPOP_REPLAY).
  const key = await testKey('ES256');
  const bound = await token('agent:chat', { cnf: { jkt: await thumbprint(key.jwk) } });
  const proof = await dpopProof(key, {
    htm: 'GET',
    htu: `${base}/chat/chat-1`,
    iat: Math.floor(Date.now() / 1000),
    token: bound,
  });
  const withProof = { authorization: `DPoP ${bound}`, dpop: proof };
  assert.equal((await call('/chat/chat-1', { method: 'GET', headers: withProof })).response.status, 200);
  const replayed = await call('/chat/chat-1', { method: 'GET', headers: withProof });
  assert.equal(replayed.response.status, 401, 'the proof was seen');
});
