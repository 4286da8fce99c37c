// Design §30, one configuration error rule: every factory refuses options that cannot work (an
// unknown key, a wrong type) with the same error, `AuthConfigError` with the specification's one
// configuration code `AGENT_AUTH_CONFIG_INVALID`, which is also a `TypeError`, and a message that
// names the factory and the option. The factories are written out here by hand; the Node-only
// ones (serve, fileStore, toNodeListener, the channels) are in tests/node/config-errors.node.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AuthConfigError,
  AuthError,
  AuthUpstreamError,
  anonymous,
  apiToken,
  basic,
  introspection,
  jwt,
  oidc,
  protectedResourceMetadata,
  routeAuth,
} from '../../src/auth/index.ts';
import {
  AgentError,
  AuditError,
  createAgent,
  echoModel,
  memoryAuditLog,
  memoryStore,
  openAICompatible,
  remoteTools,
  tool,
} from '../../src/agent/index.ts';
import { agentHandler, memoryLimitStore } from '../../src/http/index.ts';
import { postgresAuditLog, postgresLimitStore, postgresReplayStore, postgresStore } from '../../src/postgres/index.ts';
import { durableObjectStore } from '../../src/cloudflare/durable-object-store.ts';
import { durableObjectLimitStore } from '../../src/cloudflare/durable-object-limit-store.ts';
import { durableObjectReplayStore } from '../../src/cloudflare/durable-object-replay.ts';
import { durableObjectSessionStore } from '../../src/cloudflare/durable-object-sessions.ts';
import { durableObjectAuditLog } from '../../src/cloudflare/durable-object-audit-log.ts';
import { idsOf } from '../../src/agent/ids.ts';
import { rememberTool } from '../../src/agent/memory.ts';
import { dpopNonces } from '../../src/auth/dpop-nonce.ts';
import { jwsAlgorithm } from '../../src/auth/jws/algorithms.ts';
import { importHmacVerifyKey, importVerifyKey, KeyUnfitError } from '../../src/auth/jws/key-source.ts';
import { type PublicKeySpec, readPublicJwk } from '../../src/auth/jws/keys.ts';
import { assertFactoryRefuses, type FactoryMistakes, seenMessages } from '../helpers/config-error.ts';
import { literalOf, literalsOf, writes } from '../helpers/message-literals.ts';

// Bun runs every test file in one process, where the helper's set also holds other files' messages:
// the literal check below is of the messages this file provokes, on every runtime alike.
seenMessages.clear();

const SECRET = 'config-errors-test-secret-0123456789abcdef';
const TOKEN = 'tok_config_errors_0123456789';
const model = echoModel();
const agent = () => createAgent({ name: 'config', model });
const echoTool = { name: 'echo', description: 'echo', parameters: { type: 'object' }, execute: () => 'ok' };
/** A stand-in for a node-postgres Pool: creating a store checks its options and queries nothing. */
const client = {
  query: async () => ({ rows: [] }),
  connect: async () => ({ query: async () => ({ rows: [] }), release() {} }),
  on() {},
};
const storage = {
  get: async () => undefined,
  put: async () => {},
  delete: async () => false,
  list: async () => new Map(),
};
const namespace = { idFromName: (name: string) => name, get: () => ({ fetch: async () => new Response('{}') }) };
const metadataOptions = { resource: 'https://agent.example.com/agent', authorizationServers: ['https://id.example'] };

/** Every factory of the portable floors, each with one unknown key and one wrong type. */
const FACTORIES: readonly FactoryMistakes[] = [
  {
    factory: 'createAgent()',
    unknownKey: ['maxStep', () => createAgent({ name: 'a', model, maxStep: 3 } as never)],
    wrongType: ['maxSteps', () => createAgent({ name: 'a', model, maxSteps: '3' } as never)],
  },
  {
    factory: 'tool()',
    unknownKey: ['needsAproval', () => tool({ ...echoTool, needsAproval: true } as never)],
    wrongType: ['execute', () => tool({ ...echoTool, execute: 'run' } as never)],
  },
  {
    factory: 'remoteTools()',
    unknownKey: ['prefx', () => remoteTools({}, { prefix: 'crm', prefx: 'crm' } as never)],
    wrongType: ['prefix', () => remoteTools({}, { prefix: 7 } as never)],
  },
  {
    factory: 'echoModel()',
    unknownKey: ['reply', () => (echoModel as (options: unknown) => unknown)({ reply: 'hi' })],
    wrongType: ['options', () => (echoModel as (options: unknown) => unknown)('fast')],
  },
  {
    factory: 'openAICompatible()',
    unknownKey: [
      'apikey',
      () => openAICompatible({ baseURL: 'https://api.example/v1', model: 'm', apikey: SECRET } as never),
    ],
    wrongType: ['model', () => openAICompatible({ baseURL: 'https://api.example/v1', model: 42 } as never)],
  },
  {
    factory: 'memoryStore()',
    unknownKey: ['maxSesions', () => memoryStore({ maxSesions: 5 } as never)],
    wrongType: ['ttl', () => memoryStore({ ttl: '1h' } as never)],
  },
  {
    factory: 'memoryLimitStore()',
    unknownKey: ['maxKey', () => memoryLimitStore({ maxKey: 5 } as never)],
    wrongType: ['maxKeys', () => memoryLimitStore({ maxKeys: '5' } as never)],
  },
  {
    factory: 'postgresStore()',
    unknownKey: ['shcema', () => postgresStore({ client, shcema: 'x' } as never)],
    wrongType: ['connectTimeout', () => postgresStore({ client, connectTimeout: '5s' } as never)],
  },
  {
    factory: 'postgresLimitStore()',
    unknownKey: ['clinet', () => postgresLimitStore({ client, clinet: client } as never)],
    wrongType: ['schema', () => postgresLimitStore({ client, schema: 42 } as never)],
  },
  {
    factory: 'postgresReplayStore()',
    unknownKey: ['schem', () => postgresReplayStore({ client, schem: 'x' } as never)],
    wrongType: ['client', () => postgresReplayStore({ client: 'postgres://db' } as never)],
  },
  {
    factory: 'durableObjectStore()',
    unknownKey: [
      'chunkUnits',
      () => (durableObjectStore as (...args: unknown[]) => unknown)(storage, { chunkUnits: 1 }),
    ],
    wrongType: ['storage', () => durableObjectStore(42 as never)],
  },
  {
    factory: 'durableObjectLimitStore()',
    unknownKey: [
      'maxKeys',
      () => (durableObjectLimitStore as (...args: unknown[]) => unknown)(namespace, { maxKeys: 1 }),
    ],
    wrongType: ['namespace', () => durableObjectLimitStore({} as never)],
  },
  {
    factory: 'durableObjectSessionStore()',
    unknownKey: ['nmae', () => durableObjectSessionStore(namespace, { nmae: 'x' } as never)],
    wrongType: ['name', () => durableObjectSessionStore(namespace, { name: 42 } as never)],
  },
  {
    factory: 'durableObjectReplayStore()',
    unknownKey: ['ttl', () => (durableObjectReplayStore as (...args: unknown[]) => unknown)(namespace, { ttl: 1 })],
    wrongType: ['namespace', () => durableObjectReplayStore({} as never)],
  },
  {
    factory: 'memoryAuditLog()',
    unknownKey: ['secret', () => memoryAuditLog({ secret: SECRET } as never)],
    wrongType: ['max', () => memoryAuditLog({ max: '100' } as never)],
  },
  {
    factory: 'postgresAuditLog()',
    unknownKey: ['kye', () => postgresAuditLog({ client, kye: SECRET } as never)],
    wrongType: ['key', () => postgresAuditLog({ client, key: 42 } as never)],
  },
  {
    factory: 'durableObjectAuditLog()',
    unknownKey: ['keys', () => durableObjectAuditLog(namespace, { keys: [SECRET] } as never)],
    wrongType: ['name', () => durableObjectAuditLog(namespace, { name: 42 } as never)],
  },
  {
    factory: 'agentHandler()',
    unknownKey: ['basPath', () => agentHandler(agent(), { basPath: '/agent' } as never)],
    wrongType: ['basePath', () => agentHandler(agent(), { basePath: 42 } as never)],
  },
  {
    factory: 'protectedResourceMetadata()',
    unknownKey: ['resouceName', () => protectedResourceMetadata({ ...metadataOptions, resouceName: 'x' } as never)],
    wrongType: [
      'authorizationServers',
      () => protectedResourceMetadata({ ...metadataOptions, authorizationServers: 'https://id.example' } as never),
    ],
  },
  {
    factory: 'routeAuth()',
    unknownKey: ['onRefuse', () => routeAuth(apiToken(TOKEN), { onRefuse: () => {} } as never)],
    wrongType: ['onRefused', () => routeAuth(apiToken(TOKEN), { onRefused: 'log' } as never)],
  },
  {
    factory: 'basic()',
    unknownKey: ['relm', () => basic({ users: { ada: SECRET }, relm: 'x' } as never)],
    wrongType: ['users', () => basic({ users: 'ada' } as never)],
  },
  {
    factory: 'apiToken()',
    unknownKey: ['ID', () => apiToken(TOKEN, { ID: 'bot' } as never)],
    wrongType: ['id', () => apiToken(TOKEN, { id: 42 } as never)],
  },
  {
    factory: 'anonymous()',
    unknownKey: ['id', () => (anonymous as (options: unknown) => unknown)({ id: 'guest' })],
    wrongType: ['options', () => (anonymous as (options: unknown) => unknown)('guest')],
  },
  {
    factory: 'jwt()',
    unknownKey: ['audiance', () => jwt({ secret: SECRET, audiance: 'a' } as never)],
    wrongType: ['audience', () => jwt({ secret: SECRET, audience: 42 } as never)],
  },
  {
    factory: 'oidc()',
    unknownKey: [
      'discoveryURL',
      () => oidc({ issuer: 'https://id.example', audience: 'a', discoveryURL: 'x' } as never),
    ],
    wrongType: ['issuer', () => oidc({ issuer: 42, audience: 'a' } as never)],
  },
  {
    factory: 'introspection()',
    unknownKey: [
      'clientSecrit',
      () =>
        introspection({
          issuer: 'https://id.example',
          clientId: 'rs',
          clientSecret: SECRET,
          clientSecrit: 1,
          allowAnyAudience: true,
        } as never),
    ],
    wrongType: [
      'timeoutMs',
      () =>
        introspection({
          issuer: 'https://id.example',
          clientId: 'rs',
          clientSecret: SECRET,
          allowAnyAudience: true,
          timeoutMs: '5s',
        } as never),
    ],
  },
];

for (const factory of FACTORIES) {
  test(`${factory.factory}: an unknown key and a wrong type are AuthConfigError (a TypeError), code AGENT_AUTH_CONFIG_INVALID, naming the factory and the option`, async () => {
    await assertFactoryRefuses(factory, [SECRET]);
  });
}

test('AuthConfigError is a TypeError that keeps its name and the one configuration code', () => {
  const error = new AuthConfigError('x(): y must be a string');
  assert.ok(error instanceof TypeError);
  assert.ok(error instanceof Error);
  assert.equal(error.name, 'AuthConfigError');
  assert.equal(error.code, 'AGENT_AUTH_CONFIG_INVALID');
  assert.equal(error.message, 'x(): y must be a string');
});

test("createAgent(): a dynamic agent's tools function returning an invalid tool is still a run-time AgentError INVALID_AGENT, not a configuration error", async () => {
  const dynamic = createAgent({ name: 'a', model, tools: () => [{ ...echoTool, needsAproval: true }] as never });
  await assert.rejects(dynamic.send('hi'), (error: unknown) => {
    assert.ok(!(error instanceof AuthConfigError), String(error));
    assert.equal((error as { code?: unknown }).code, 'INVALID_AGENT');
    return true;
  });
});

// Design §38: every message is one literal of src/. The call errors, and configuration errors
// the factories above do not reach, provoked here; their messages join those seen above.
/** The first record an audit log's `read()` yields: `read()`'s options are checked when it is iterated. */
const firstRead = (options: unknown) =>
  memoryAuditLog()
    .read(options as never)
    [Symbol.asyncIterator]()
    .next();
const TIME = '2026-01-01T00:00:00.000Z';
/** A public P-256 key (RFC 7515 A.3's), which serves ES256 only. */
const P256_JWK = {
  kty: 'EC',
  crv: 'P-256',
  x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
  y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
};

/** A class of error, for `instanceof`. */
type ErrorClass = abstract new (...args: never) => Error;

// With a class and a code where one is given (design §38: every thrown error has a class and a code).
const callErrors: readonly (readonly [
  what: string,
  provoke: () => unknown,
  expected?: readonly [ErrorClass, string],
])[] = [
  ['send() without a message', () => agent().send('')],
  ['send() with a session id holding a space', () => agent().send('hi', { sessionId: 'a b' })],
  ['send() with metadata that is a number', () => agent().send('hi', { metadata: 1 as never })],
  ['send() with a principal that is none', () => agent().send('hi', { principal: {} as never })],
  ['send() with an onUsage that is no function', () => agent().send('hi', { onUsage: 1 as never })],
  ['decide() without an approval id', () => agent().decide('', { approved: true })],
  ['decide() without approved', () => agent().decide('x', { approved: 'yes' as never })],
  ['decide() with a reason that is a number', () => agent().decide('x', { approved: true, reason: 1 as never })],
  ['listSessions() of an agent without owned sessions', () => agent().listSessions({ principal: undefined as never })],
  [
    'listSessions() without a principal',
    () =>
      createAgent({ name: 'owned', model, store: memoryStore(), sessions: 'owned' }).listSessions({
        principal: undefined as never,
      }),
  ],
  ['new AuthError(500)', () => new AuthError(500 as 401)],
  ['new AuthError(401) with a scope', () => new AuthError(401, { scope: ['a'] })],
  ['new AuthError(403) with an empty scope list', () => new AuthError(403, { scope: [] })],
  ['createAgent() with telemetry that is a string', () => createAgent({ name: 't', model, telemetry: 'on' as never })],
  [
    'createAgent() with a tracer that is none',
    () => createAgent({ name: 't', model, telemetry: { tracer: {} } as never }),
  ],
  ['createAgent() with tools that are a number', () => createAgent({ name: 't', model, tools: 5 as never })],
  [
    'createAgent() with a tool without a description',
    () =>
      createAgent({
        name: 't',
        model,
        tools: [{ name: 'x', parameters: { type: 'object' }, execute() {} }] as never,
      }),
  ],
  [
    'agentHandler() with offline_access among its scopes',
    () => agentHandler(agent(), { auth: [anonymous()], scopes: { send: ['offline_access'] } }),
  ],
  [
    'agentHandler() with mcp scopes that are no list',
    () => agentHandler(agent(), { auth: [anonymous()], mcp: { scopes: { ask: [] } } }),
  ],
  [
    'agentHandler() with a request limit of 0',
    () => agentHandler(agent(), { auth: [anonymous()], limits: { requests: { limit: 0, windowSec: 60 } } }),
  ],
  ['append() with an array', () => memoryAuditLog().append([] as never), [AuditError, 'AUDIT_RECORD_INVALID']],
  [
    'append() with a seq of its own',
    () => memoryAuditLog().append({ time: TIME, seq: 1 }),
    [AuditError, 'AUDIT_RECORD_INVALID'],
  ],
  ['append() without time', () => memoryAuditLog().append({ at: TIME }), [AuditError, 'AUDIT_RECORD_INVALID']],
  [
    'append() with NaN in the record',
    () => memoryAuditLog().append({ time: TIME, amount: Number.NaN }),
    [AuditError, 'AUDIT_RECORD_INVALID'],
  ],
  ['read() with options that are a string', () => firstRead('all'), [AuditError, 'AUDIT_READ_INVALID']],
  ['read() with an unknown option', () => firstRead({ form: 1 }), [AuditError, 'AUDIT_READ_INVALID']],
  ['read() with since that is no instant', () => firstRead({ since: 'yesterday' }), [AuditError, 'AUDIT_READ_INVALID']],
  ['read() with fromSeq 0', () => firstRead({ fromSeq: 0 }), [AuditError, 'AUDIT_READ_INVALID']],
  ['idsOf() with 20 bytes', () => idsOf(new Uint8Array(20)), [AgentError, 'INVALID_INPUT']],
  [
    'the remember tool with a blank note',
    () => rememberTool(memoryStore(), 'n').execute({ note: ' ' }, {} as never),
    [AgentError, 'INVALID_INPUT'],
  ],
  [
    'postgresStore() asked for a session id that is a number',
    () =>
      postgresStore({ client: { query: async () => ({ rows: [] }), connect: async () => ({}) } as never }).loadSession(
        5 as never,
      ),
    [AgentError, 'INVALID_INPUT'],
  ],
  [
    'jwt() with a 31-byte secret',
    () => jwt({ secret: 'x'.repeat(31) }),
    [AuthConfigError, 'AGENT_AUTH_CONFIG_INVALID'],
  ],
  [
    'importHmacVerifyKey() with a 31-byte secret',
    () => importHmacVerifyKey(new Uint8Array(31), jwsAlgorithm('HS256')!),
    [KeyUnfitError, 'AGENT_AUTH_KEY_UNFIT'],
  ],
  [
    'importHmacVerifyKey() for RS256',
    () => importHmacVerifyKey(new Uint8Array(32), jwsAlgorithm('RS256')!),
    [KeyUnfitError, 'AGENT_AUTH_KEY_UNFIT'],
  ],
  [
    'importVerifyKey() of a P-256 key for RS256',
    () => importVerifyKey(readPublicJwk(P256_JWK) as PublicKeySpec, jwsAlgorithm('RS256')!),
    [KeyUnfitError, 'AGENT_AUTH_KEY_UNFIT'],
  ],
  [
    'a DPoP replay store whose nonce() gives what is not a nonce',
    () => dpopNonces({ nonce: async () => 'short' } as never, 300)(1_800_000_000),
    [AuthUpstreamError, 'AGENT_AUTH_UPSTREAM_INVALID'],
  ],
];

test('every configuration and call error provoked in this file is one literal of src/ (design §38)', async () => {
  const messages = new Set(seenMessages);
  assert.ok(messages.size >= FACTORIES.length, `the factories' messages were seen first (${messages.size})`);
  for (const [what, provoke, expected] of callErrors) {
    let error: unknown;
    try {
      await provoke();
    } catch (thrown) {
      error = thrown;
    }
    assert.ok(error instanceof Error, `${what}: throws`);
    assert.equal(typeof (error as { code?: unknown }).code, 'string', `${what}: has a code (${error.message})`);
    if (expected !== undefined) {
      const [kind, code] = expected;
      assert.ok(error instanceof kind, `${what}: is a ${kind.name} (${error.name}: ${error.message})`);
      assert.equal((error as { code?: unknown }).code, code, `${what}: ${error.message}`);
    }
    messages.add(error.message);
  }
  const missing = [...messages].filter((message) => literalOf(message) === undefined);
  assert.deepEqual(missing, [], 'messages no literal of src/ writes whole');
});

test('the literal finder can fail: a message glued from pieces, or one never written, is not found', () => {
  const literals = literalsOf(
    [
      "const SHAPE = 'an array of tools, or a record of AI SDK tools';",
      'throw fail(`${source} must be ${SHAPE}`);',
      'throw new AuthConfigError(`${helper}: limits.${name}.limit must be a positive integer`);',
      "throwConfigError(helper, 'secret must be a string');",
      'throw invalidInput(`${call}: metadata must be a plain object; got ${kindOf(value)}`);',
      '// throw new Error(`in a comment: never a literal`);',
    ].join('\n'),
  );
  const found = (message: string) => literalOf(message, literals) !== undefined;
  assert.ok(found('agentHandler(): limits.requests.limit must be a positive integer'));
  assert.ok(found('jwt(): secret must be a string'));
  assert.ok(found('send(): metadata must be a plain object; got a number'));
  // Glued: most of the text comes from a constant, not from the literal that threw.
  assert.ok(!found('createAgent(): tools must be an array of tools, or a record of AI SDK tools'));
  assert.ok(!found('jwt(): secret must be a non-empty string'));
  assert.ok(!found('in a comment: never a literal'));
  // The helper's name is only a prefix: a message that is all hole is not found.
  assert.ok(!literalsOf('throw new Error(`${what}`);').some((literal) => writes(literal, 'anything at all')));
});
