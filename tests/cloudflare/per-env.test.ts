// perEnv() (agentward/cloudflare, design §25): a Worker's handler built from the `env` its requests
// bring, once per `env` object; a clear error for a wrong `build` or a request without an env.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthConfigError } from '../../src/auth/index.ts';
import { perEnv } from '../../src/cloudflare/per-env.ts';

test('perEnv builds the handler once per env object and hands each request to the handler of its env', async () => {
  const built: string[] = [];
  const handle = perEnv((env: { NAME: string }) => {
    built.push(env.NAME);
    return async (request: Request) => new Response(`${env.NAME} ${new URL(request.url).pathname}`);
  });
  const one = { NAME: 'one' };
  const two = { NAME: 'two' };
  const answers = [];
  for (const [path, env] of [
    ['/a', one],
    ['/b', one],
    ['/c', two],
    ['/d', one],
    ['/e', two],
  ] as const)
    answers.push(await (await handle(new Request(`http://worker${path}`), env)).text());
  assert.deepEqual(answers, ['one /a', 'one /b', 'two /c', 'one /d', 'two /e']);
  assert.deepEqual(built, ['one', 'two'], 'once per env object');
  // Another object with the same contents is another env: built for it too.
  await handle(new Request('http://worker/f'), { NAME: 'one' });
  assert.deepEqual(built, ['one', 'two', 'one']);
});

test('perEnv: a build that throws throws to that request, and the next request builds again', async () => {
  let calls = 0;
  const handle = perEnv((_env: object) => {
    calls += 1;
    if (calls === 1) throw new Error('first build fails');
    return async () => new Response('ok');
  });
  const env = {};
  assert.throws(() => handle(new Request('http://worker/'), env), /first build fails/);
  assert.equal(await (await handle(new Request('http://worker/'), env)).text(), 'ok');
  assert.equal(calls, 2);
});

test('perEnv refuses a build that is not a function, a build that returns no handler, and a request without an env object', () => {
  assert.throws(() => perEnv('handler' as never), {
    name: 'AuthConfigError',
    message: 'perEnv(): build must be a function of env that returns a handler; got a string',
  });
  const returnsNothing = perEnv((() => undefined) as never);
  assert.throws(() => returnsNothing(new Request('http://worker/'), {}), {
    name: 'AuthConfigError',
    message: 'perEnv(): build must return a handler (a function of a Request); got undefined',
  });
  const handle = perEnv(() => async () => new Response('ok'));
  for (const env of [undefined, null, 'env'])
    assert.throws(() => handle(new Request('http://worker/'), env as never), AuthConfigError);
});
