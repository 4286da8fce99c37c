// limits.failures behind a guest fallback (design §25): a request that presented a credential
// (an Authorization header or a DPoP proof) and was let in only as a guest, by anonymous() or a
// custom entry answering true, keeps its failure slot as a 401 does, so guessing behind a guest
// is bounded as guessing against a 401; a guest that presents nothing is never counted. And a
// 401 whose only fault is the DPoP nonce (use_dpop_nonce) gives its slot back. On Node, Bun and Deno.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import { anonymous, apiToken, basic, introspection } from '../../src/auth/index.ts';
import type { AuthFn } from '../../src/auth/types.ts';
import { agentHandler } from '../../src/http/index.ts';
import { memoryLimitStore } from '../../src/http/limit-store.ts';

const BASE = 'https://agent.example/agent';
const ADDRESS = '203.0.113.7';
const testAddress = (request: Request) => request.headers.get('x-test-address') ?? undefined;

function handlerWith(auth: AuthFn | AuthFn[] | ((request: Request) => boolean), limit = 3) {
  return agentHandler(createAgent({ name: 'guests', model: echoModel() }), {
    basePath: '/agent',
    auth: auth as AuthFn[],
    limits: { failures: { limit, windowSec: 3600 }, clientAddress: testAddress, store: memoryLimitStore() },
  });
}

const send = (handler: (request: Request) => Promise<Response>, headers: Record<string, string> = {}) =>
  handler(
    new Request(BASE, {
      method: 'POST',
      headers: { 'x-test-address': ADDRESS, 'content-type': 'application/json', ...headers },
      body: '{"message":"hi"}',
    }),
  );
const basicAuth = (user: string, password: string) => ({ authorization: `Basic ${btoa(`${user}:${password}`)}` });

test('[basic(), anonymous()] with failures { limit: 3 }: 301 password guesses from one address get three answers as a guest, then 429; the right password too', async () => {
  const handler = handlerWith([basic({ users: { ada: 'the-right-password-1815' } }), anonymous()]);
  const statuses: number[] = [];
  for (let i = 0; i < 300; i++) {
    const answer = await send(handler, basicAuth('ada', `guess-${i}`));
    statuses.push(answer.status);
    await answer.body?.cancel();
  }
  const guests = statuses.filter((status) => status !== 429);
  assert.equal(guests.length, 3, 'three guesses were let in as a guest');
  assert.equal(statuses.filter((status) => status === 429).length, 297);
  const right = await send(handler, basicAuth('ada', 'the-right-password-1815'));
  assert.equal(right.status, 429, 'the right password is not told apart: the address has spent its failures');
  assert.equal(right.headers.get('ratelimit-policy'), '"failures";q=3;w=3600');
  // Another address is served, with the right password.
  const other = await handler(
    new Request(BASE, {
      method: 'POST',
      headers: { 'x-test-address': '203.0.113.8', ...basicAuth('ada', 'the-right-password-1815') },
      body: '{"message":"hi"}',
    }),
  );
  assert.equal(other.status, 200);
});

test('a guest that presents no credential is never counted: 50 anonymous requests from one address, then a right password, all served', async () => {
  const handler = handlerWith([basic({ users: { ada: 'the-right-password-1815' } }), anonymous()]);
  for (let i = 0; i < 50; i++) {
    const answer = await handler(
      new Request(BASE, {
        method: 'POST',
        headers: { 'x-test-address': ADDRESS, 'content-type': 'application/json' },
        body: JSON.stringify({ message: `hello ${i}` }),
      }),
    );
    assert.equal(answer.status, 200);
    await answer.body?.cancel();
  }
  assert.equal((await send(handler, basicAuth('ada', 'the-right-password-1815'))).status, 200);
});

test('[introspection(), anonymous()] with failures { limit: 3 }: 200 made-up tokens make three introspection calls, the rest get 429', async () => {
  let calls = 0;
  const endpoint = async () => {
    calls++;
    return Response.json({ active: false });
  };
  const handler = handlerWith([
    introspection({
      endpoint: 'https://id.example.com/introspect',
      clientId: 'rs',
      clientSecret: 'rs-secret',
      audience: 'https://agent.example/agent',
      cache: false,
      _internal: { fetch: endpoint },
    } as never),
    anonymous(),
  ]);
  const statuses: number[] = [];
  for (let i = 0; i < 200; i++) {
    const answer = await send(handler, { authorization: `Bearer made-up-token-${i}` });
    statuses.push(answer.status);
    await answer.body?.cancel();
  }
  assert.equal(calls, 3);
  assert.equal(statuses.filter((status) => status === 429).length, 197);
});

test('a custom entry answering true (the boolean auth) counts a presented credential as a guess, and a DPoP proof alone is a credential', async () => {
  const handler = handlerWith(() => true);
  const post = (headers: Record<string, string>) =>
    handler(
      new Request(BASE, {
        method: 'POST',
        headers: { 'x-test-address': ADDRESS, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ message: 'hi' }),
      }),
    );
  // Without a credential: never counted.
  for (let i = 0; i < 5; i++) assert.equal((await post({})).status, 200);
  assert.equal((await post({ authorization: 'Bearer guess-1' })).status, 200);
  assert.equal((await post({ dpop: 'a.proof.only' })).status, 200);
  assert.equal((await post({ authorization: 'Bearer guess-3' })).status, 200);
  assert.equal((await post({ authorization: 'Bearer guess-4' })).status, 429);
  assert.equal((await post({})).status, 429, 'the address has spent its failures');
});

test('a 401 to a request with no credential (a client discovering how to authenticate) is not counted behind built-in entries; behind a custom entry, which may read a credential anywhere, it is', async () => {
  const builtIn = handlerWith(apiToken('tok-0123456789abcdef'));
  for (let i = 0; i < 10; i++) assert.equal((await send(builtIn)).status, 401);
  assert.equal((await send(builtIn, { authorization: 'Bearer tok-0123456789abcdef' })).status, 200);
  for (let i = 0; i < 3; i++) assert.equal((await send(builtIn, { authorization: 'Bearer guess' })).status, 401);
  assert.equal((await send(builtIn)).status, 429, 'three presented credentials failed');

  // A custom entry reading an API key from a header of its own: its 401s count, credential or not.
  const custom = handlerWith((request: Request) => request.headers.get('x-api-key') === 'the-key');
  for (let i = 0; i < 3; i++) assert.equal((await send(custom, { 'x-api-key': `guess-${i}` })).status, 401);
  assert.equal((await send(custom, { 'x-api-key': 'the-key' })).status, 429);
});
