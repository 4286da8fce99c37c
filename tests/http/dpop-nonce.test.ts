// Design §29, RFC 9449 §8: a handler whose entry has DPoP nonces sends the nonce with every answer
// to a request the entry read: the 401 use_dpop_nonce, the 2xx of POST <basePath>, the MCP route's
// JSON-RPC answers and a route's 403; a handler without nonces sends none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import { memoryReplayStore } from '../../src/auth/dpop-replay.ts';
import { agentHandler } from '../../src/http/index.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { AUDIENCE, ISSUER, NOW, claims, signToken, testKey } from '../helpers/jwt.ts';
import { dpopProof, thumbprint } from '../helpers/dpop.ts';

const tokenKey = await testKey('ES256');
const proofKey = await testKey('ES256');
const token = await signToken(
  { alg: 'ES256' },
  claims({ cnf: { jkt: await thumbprint(proofKey.jwk) }, scope: 'agent:chat' }),
  tokenKey.sign,
);

function handler(nonce: boolean) {
  const auth = jwtAt(
    {
      publicKey: tokenKey.jwk,
      issuer: ISSUER,
      audience: AUDIENCE,
      dpop: nonce ? { nonce: true } : 'allowed',
      dpopReplay: memoryReplayStore(100),
    },
    () => NOW,
  );
  return agentHandler(createAgent({ name: 'a', model: echoModel() }), {
    basePath: '/agent',
    auth,
    mcp: true,
    scopes: { approve: ['agent:approve'] },
  });
}

async function call(h: (request: Request) => Promise<Response>, url: string, body: unknown, nonce?: string) {
  const proof = await dpopProof(proofKey, { token, iat: NOW, htm: 'POST', htu: url, claims: { nonce } });
  const response = await h(
    new Request(url, {
      method: 'POST',
      headers: {
        authorization: `DPoP ${token}`,
        dpop: proof,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(body),
    }),
  );
  await response.arrayBuffer();
  return response;
}

test('agentHandler with DPoP nonces: the 401 use_dpop_nonce names the nonce; 2xx answers (POST <basePath>, MCP) and a route 403 carry it', async () => {
  const h = handler(true);
  const base = 'https://agent.example.com/agent';
  const first = await call(h, base, { message: 'hi' });
  assert.equal(first.status, 401);
  assert.match(first.headers.get('www-authenticate') ?? '', /DPoP error="use_dpop_nonce"/);
  const nonce = first.headers.get('dpop-nonce') ?? '';
  assert.match(nonce, /^[\w-]{22}$/);
  const sent = await call(h, base, { message: 'hi' }, nonce);
  assert.equal(sent.status, 200);
  assert.equal(sent.headers.get('dpop-nonce'), nonce);
  const mcp = await call(
    h,
    `${base}/mcp`,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    },
    nonce,
  );
  assert.equal(mcp.status, 200);
  assert.equal(mcp.headers.get('dpop-nonce'), nonce);
  const forbidden = await call(h, `${base}/approvals/x`, { approved: true }, nonce);
  assert.equal(forbidden.status, 403);
  assert.equal(forbidden.headers.get('dpop-nonce'), nonce);
});

test('agentHandler without DPoP nonces sends no DPoP-Nonce header', async () => {
  const sent = await call(handler(false), 'https://agent.example.com/agent', { message: 'hi' });
  assert.equal(sent.status, 200);
  assert.equal(sent.headers.get('dpop-nonce'), null);
});
