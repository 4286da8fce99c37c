// Design §30, one configuration error rule: every factory refuses options that cannot work (an
// unknown key, a wrong type) with the same error, `AuthConfigError` with the specification's one
// configuration code `AGENT_AUTH_CONFIG_INVALID`, which is also a `TypeError`, and a message that
// names the factory and the option. The factories are written out here by hand; the Node-only
// ones (serve, fileStore, toNodeListener, the channels) are in tests/node/config-errors.node.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AuthConfigError,
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
import { assertFactoryRefuses, type FactoryMistakes } from '../helpers/config-error.ts';

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
