// serve({ scopeImplies }) (design §29): the handler's scope hierarchies through the node server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { serve } from '../../src/node.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { AUDIENCE, NOW, SECRET, claims, hmacSigner, signToken } from '../helpers/jwt.ts';

delete process.env.AGENT_API_TOKEN;

test('serve({ scopeImplies }): a token holding agent:admin is granted agent:chat; one holding neither gets 403 naming agent:chat', async (t) => {
  const server = await serve({
    agent: createAgent({ name: 'implies', model: echoModel(), store: memoryStore() }),
    port: 0,
    log: 'off',
    auth: jwtAt({ secret: SECRET, audience: AUDIENCE }, () => NOW),
    scopes: { send: ['agent:chat'] },
    scopeImplies: { 'agent:admin': ['agent:chat', 'agent:approve'] },
  });
  t.after(() => server.close());
  const send = async (scope: string) =>
    fetch(`${server.url}/agent`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await signToken({ alg: 'HS256' }, claims({ scope }), await hmacSigner(SECRET))}`,
        'content-type': 'application/json',
      },
      body: '{"message":"hi"}',
    });
  const admitted = await send('agent:admin');
  assert.equal(admitted.status, 200, await admitted.text());
  const refused = await send('agent:read');
  await refused.body?.cancel();
  assert.equal(refused.status, 403);
  assert.equal(refused.headers.get('www-authenticate'), 'Bearer error="insufficient_scope", scope="agent:chat"');
});
