// Design §14: option objects are closed. An unknown key is an error at creation that names the
// key and, when one is close, the known key it resembles; every factory throws AuthConfigError
// (AGENT_AUTH_CONFIG_INVALID, design §30), a call AgentError INVALID_INPUT. A typo never leaves a route open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthConfigError, apiToken, basic, introspection, jwt, oidc, routeAuth } from '../../src/auth/index.ts';
import { closest } from '../../src/auth/options.ts';
import { AgentError, createAgent, echoModel, memoryStore, openAICompatible } from '../../src/agent/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { postgresStore } from '../../src/postgres/index.ts';
import { assertConfigError } from '../helpers/config-error.ts';

const SECRET = 'closed-options-test-secret-0123456789abcdef';
const TOKEN = 'tok_closed_options_0123456789';

/** `create` throws an error of `type` whose message names `helper`, the unknown key, and the suggestion when given. */
function assertUnknown(
  create: () => unknown,
  type: abstract new (...args: never[]) => Error,
  helper: string,
  key: string,
  suggestion?: string,
): Error {
  let thrown: Error | undefined;
  assert.throws(create, (error: unknown) => {
    assert.ok(error instanceof type, `${helper} ${key}: ${type.name}, got ${String(error)}`);
    thrown = error;
    return true;
  });
  const message = (thrown as Error).message;
  assert.ok(message.startsWith(`${helper}: unknown option ${JSON.stringify(key)}`), message);
  if (suggestion === undefined) assert.doesNotMatch(message, /did you mean/, message);
  else assert.ok(message.includes(`(did you mean "${suggestion}"?)`), message);
  return thrown as Error;
}

test('the test hook `_internal` of jwt(), oidc() and introspection() is closed like every option object (design §30)', () => {
  const hooked = {
    'jwt()': (internal: unknown) => jwt({ secret: SECRET, audience: 'a', _internal: internal } as never),
    'oidc()': (internal: unknown) =>
      oidc({ issuer: 'https://id.example', audience: 'a', _internal: internal } as never),
    'introspection()': (internal: unknown) =>
      introspection({
        endpoint: 'https://id.example/introspect',
        clientId: 'rs',
        clientSecret: 'rs-secret-0123456789',
        audience: 'a',
        _internal: internal,
      } as never),
  };
  for (const [helper, create] of Object.entries(hooked)) {
    for (const internal of [{ now: () => 0, fetch, timeoutMs: 50, perRequestFetch: true }, {}, undefined])
      assert.doesNotThrow(() => create(internal), helper);
    assertUnknown(() => create({ nwo: () => 0 }), AuthConfigError, `${helper}: _internal`, 'nwo', 'now');
    assertUnknown(() => create({ timeout: 50 }), AuthConfigError, `${helper}: _internal`, 'timeout', 'timeoutMs');
    assert.throws(() => create(Object.create({ now: () => 0 })), AuthConfigError);
    assert.throws(() => create(42), AuthConfigError);
  }
});

test('jwt(): an unknown option is an AuthConfigError naming it and the option it resembles', () => {
  const error = assertUnknown(
    () => jwt({ secret: SECRET, audience: 'a', clockTolerence: 30 } as never),
    AuthConfigError,
    'jwt()',
    'clockTolerence',
    'clockToleranceSec',
  );
  assert.equal((error as AuthConfigError).code, 'AGENT_AUTH_CONFIG_INVALID');
  assertUnknown(
    () => jwt({ secret: SECRET, audiance: 'a', allowAnyAudience: true } as never),
    AuthConfigError,
    'jwt()',
    'audiance',
    'audience',
  );
  assertUnknown(
    () => jwt({ secret: SECRET, audience: 'a', cache: { maxEntrys: 5 } } as never),
    AuthConfigError,
    'jwt(): cache',
    'maxEntrys',
    'maxEntries',
  );
});

test('jwt(): the value of an unknown option is never shown (it may be a secret)', () => {
  assertConfigError(
    () => jwt({ publicKey: undefined, secert: SECRET, audience: 'a' } as never),
    'jwt()',
    'a misspelled secret',
    [SECRET],
  );
});

test('oidc(), basic(), apiToken(), routeAuth(): unknown options are AuthConfigErrors', () => {
  assertUnknown(
    () => oidc({ issuer: 'https://id.example.com', audience: 'a', discoveryURL: 'https://id.example.com/x' } as never),
    AuthConfigError,
    'oidc()',
    'discoveryURL',
    'discoveryUrl',
  );
  assertUnknown(
    () => basic({ users: { ada: 'pw-0123456789' }, relm: 'x' } as never),
    AuthConfigError,
    'basic()',
    'relm',
    'realm',
  );
  assertUnknown(() => apiToken(TOKEN, { ID: 'bot' } as never), AuthConfigError, 'apiToken()', 'ID', 'id');
  assertUnknown(
    () => routeAuth(apiToken(TOKEN), { onRefuse: () => {} } as never),
    AuthConfigError,
    'routeAuth()',
    'onRefuse',
    'onRefused',
  );
});

test('a key unlike any known one is named without a suggestion, and the known keys are listed', () => {
  const error = assertUnknown(
    () => basic({ users: { ada: 'pw-0123456789' }, zzzzzzzz: 1 } as never),
    AuthConfigError,
    'basic()',
    'zzzzzzzz',
  );
  assert.match(error.message, /known: users, realm/);
  assert.equal(closest('x', ['id']), undefined);
  assert.equal(closest('prot', ['port', 'host']), 'port');
});

const agent = () => createAgent({ name: 'closed', model: echoModel(), store: memoryStore() });

test('agentHandler(): a misspelled auth throws instead of serving an open route', async () => {
  assertUnknown(
    () => agentHandler(agent(), { basePath: '/agent', atuh: TOKEN } as never),
    AuthConfigError,
    'agentHandler()',
    'atuh',
    'auth',
  );
  // The same options spelled right: a request without credentials is refused.
  const handler = agentHandler(agent(), { basePath: '/agent', auth: TOKEN });
  const response = await handler(
    new Request('http://localhost/agent', {
      method: 'POST',
      body: '{"message":"hi"}',
      headers: { 'content-type': 'application/json' },
    }),
  );
  assert.equal(response.status, 401);
  await response.body?.cancel();
});

test('agentHandler(): protectedResource is closed too', () => {
  assertUnknown(
    () =>
      agentHandler(agent(), {
        auth: TOKEN,
        protectedResource: { resouce: 'https://a.example/agent', authorizationServers: ['https://id.example.com'] },
      } as never),
    AuthConfigError,
    'agentHandler(): protectedResource',
    'resouce',
    'resource',
  );
});

test('createAgent(): unknown options, memory options and tool fields are AuthConfigError', () => {
  const error = assertUnknown(
    () => createAgent({ name: 'a', model: echoModel(), sesions: 'owned' } as never),
    AuthConfigError,
    'createAgent()',
    'sesions',
    'sessions',
  );
  assert.equal((error as AuthConfigError).code, 'AGENT_AUTH_CONFIG_INVALID');
  assertUnknown(
    () => createAgent({ name: 'a', model: echoModel(), memory: { scope: () => 'x', scop: 1 } } as never),
    AuthConfigError,
    'createAgent(): memory',
    'scop',
    'scope',
  );
  // A misspelled needsApproval would run the tool without asking.
  const tool = {
    name: 'refund',
    description: 'refund',
    parameters: { type: 'object' },
    execute: () => 'done',
    needsAproval: true,
  };
  assertUnknown(
    () => createAgent({ name: 'a', model: echoModel(), tools: [tool] } as never),
    AuthConfigError,
    'createAgent(): tools: tool "refund"',
    'needsAproval',
    'needsApproval',
  );
});

test("a dynamic agent's tools are checked when its function returns them: a misspelled needsApproval fails the run", async () => {
  const tool = {
    name: 'refund',
    description: 'refund',
    parameters: { type: 'object' },
    execute: () => 'done',
    needsAproval: true,
  };
  const dynamic = createAgent({ name: 'a', model: echoModel(), tools: () => [tool] as never });
  await assert.rejects(
    dynamic.send('/tool refund {}'),
    (error: unknown) => error instanceof AgentError && /unknown option "needsAproval"/.test(error.message),
  );
});

test('send(), decide() and the reading calls: unknown options are AgentError INVALID_INPUT (a misspelled principal never makes the call trusted)', async () => {
  const owned = createAgent({ name: 'a', model: echoModel(), store: memoryStore(), sessions: 'owned' });
  const alice = { id: 'alice', type: 'user' as const, authenticator: 'custom' };
  await assert.rejects(
    owned.send('hi', { princpal: alice } as never),
    (error: unknown) =>
      error instanceof AgentError &&
      error.code === 'INVALID_INPUT' &&
      /send\(\): unknown option "princpal" \(did you mean "principal"\?\)/.test(error.message),
  );
  const { sessionId } = await owned.send('hi', { principal: alice });
  await assert.rejects(
    owned.session(sessionId).send('again', { principle: alice } as never),
    (error: unknown) => error instanceof AgentError && error.code === 'INVALID_INPUT',
  );
  await assert.rejects(
    owned.transcript(sessionId, { princpal: alice } as never),
    (error: unknown) => error instanceof AgentError && /transcript\(\): unknown option "princpal"/.test(error.message),
  );
  await assert.rejects(
    owned.pendingApprovals(sessionId, { princpal: alice } as never),
    (error: unknown) => error instanceof AgentError && error.code === 'INVALID_INPUT',
  );
  await assert.rejects(
    owned.deleteSession(sessionId, { princpal: alice } as never),
    (error: unknown) => error instanceof AgentError && error.code === 'INVALID_INPUT',
  );
  await assert.rejects(
    owned.listSessions({ principal: alice, limt: 5 } as never),
    (error: unknown) => error instanceof AgentError && /did you mean "limit"/.test(error.message),
  );
  await assert.rejects(
    owned.decide('x', { approved: true, resaon: 'ok' } as never),
    (error: unknown) =>
      error instanceof AgentError &&
      /decide\(\): unknown option "resaon" \(did you mean "reason"\?\)/.test(error.message),
  );
});

test('memoryStore(), openAICompatible(), postgresStore(): unknown options are AuthConfigError too', () => {
  assertUnknown(
    () => memoryStore({ maxSesions: 5 } as never),
    AuthConfigError,
    'memoryStore()',
    'maxSesions',
    'maxSessions',
  );
  const error = assertUnknown(
    () => openAICompatible({ baseURL: 'https://api.example.com/v1', model: 'm', apikey: 'sk-secret-value' } as never),
    AuthConfigError,
    'openAICompatible()',
    'apikey',
    'apiKey',
  );
  assert.ok(!error.message.includes('sk-secret-value'));
  const client = {
    query: async () => ({ rows: [] }),
    connect: async () => ({ query: async () => ({ rows: [] }), release() {} }),
  };
  assertUnknown(
    () => postgresStore({ client, shcema: 'x' } as never),
    AuthConfigError,
    'postgresStore()',
    'shcema',
    'schema',
  );
});
