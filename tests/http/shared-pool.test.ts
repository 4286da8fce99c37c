// The pools of the PostgreSQL stores, checked at creation (design §34): agentHandler() refuses an
// audit log or a limit store on the pool whose connection each turn of the agent's store holds,
// and accepts every other combination of memory and PostgreSQL stores. Stand-in pools: creating a
// store queries nothing (the database itself: tests/postgres/shared-pool.node.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, echoModel, memoryAuditLog, memoryStore } from '../../src/agent/index.ts';
import type { Store } from '../../src/agent/types.ts';
import { POOL } from '../../src/agent/pools.ts';
import { AuthConfigError, apiToken } from '../../src/auth/index.ts';
import { agentHandler, memoryLimitStore } from '../../src/http/index.ts';
import { postgresAuditLog, postgresLimitStore, postgresReplayStore, postgresStore } from '../../src/postgres/index.ts';
import { literalOf } from '../helpers/message-literals.ts';

/** A stand-in for a node-postgres Pool, with the options a real one keeps (its password among them). */
const pool = (name: string) => ({
  name,
  options: { connectionString: `postgres://agent:secret-password-${name}@db/agent` },
  query: async () => ({ rows: [] }),
  connect: async () => ({ query: async () => ({ rows: [] }), release() {} }),
  on() {},
});
const auth = apiToken('shared-pool-token-0123456789abcdef', { id: 'ada' });
const agentOn = (store: Store) => createAgent({ name: 'pools', model: echoModel(), store });
const requests = { limit: 10, windowSec: 60 };

const AUDIT_REFUSED =
  'agentHandler(): audit.log and store share one PostgreSQL pool; give the audit log a pool of its own; got the same pool';
const LIMITS_REFUSED =
  'agentHandler(): limits.store and store share one PostgreSQL pool; give the limit store a pool of its own; got the same pool';
const refused = (message: string) => (error: unknown) =>
  error instanceof AuthConfigError && error.code === 'AGENT_AUTH_CONFIG_INVALID' && error.message === message;

test("agentHandler(): an audit log on the pool of the agent's postgresStore is refused at creation, required or not", () => {
  const a = pool('a');
  const agent = agentOn(postgresStore({ client: a }));
  const log = postgresAuditLog({ client: a, schema: 'audit' });
  assert.throws(() => agentHandler(agent, { auth, audit: { log } }), refused(AUDIT_REFUSED));
  assert.throws(() => agentHandler(agent, { auth, audit: { log, required: true } }), refused(AUDIT_REFUSED));
  // Without auth too: the pool is the fault, not who calls.
  assert.throws(() => agentHandler(agent, { audit: { log } }), refused(AUDIT_REFUSED));
});

test("agentHandler(): a limit store on the pool of the agent's postgresStore is refused at creation, whatever its policies", () => {
  const a = pool('a');
  const agent = agentOn(postgresStore({ client: a }));
  const store = postgresLimitStore({ client: a });
  assert.throws(() => agentHandler(agent, { auth, limits: { requests, store } }), refused(LIMITS_REFUSED));
  assert.throws(
    () => agentHandler(agent, { auth, limits: { tokens: { limit: 1000, windowSec: 60 }, store } }),
    refused(LIMITS_REFUSED),
  );
});

test('agentHandler(): every other combination of memory and PostgreSQL stores is accepted', () => {
  const [a, b, c] = [pool('a'), pool('b'), pool('c')];
  const accepted: [string, () => unknown][] = [
    [
      'memoryStore, postgresAuditLog',
      () => agentHandler(agentOn(memoryStore()), { auth, audit: { log: postgresAuditLog({ client: a }) } }),
    ],
    [
      'postgresStore, memoryAuditLog',
      () => agentHandler(agentOn(postgresStore({ client: a })), { auth, audit: { log: memoryAuditLog() } }),
    ],
    [
      'postgresStore, an audit function',
      () => agentHandler(agentOn(postgresStore({ client: a })), { auth, audit: () => {} }),
    ],
    [
      'postgresStore, postgresAuditLog on another pool',
      () =>
        agentHandler(agentOn(postgresStore({ client: a })), { auth, audit: { log: postgresAuditLog({ client: b }) } }),
    ],
    [
      'postgresStore, postgresLimitStore on another pool',
      () =>
        agentHandler(agentOn(postgresStore({ client: a })), {
          auth,
          limits: { requests, store: postgresLimitStore({ client: b }) },
        }),
    ],
    [
      'postgresStore; the log and the limit store on one other pool (no turn holds its connections)',
      () =>
        agentHandler(agentOn(postgresStore({ client: a })), {
          auth,
          audit: { log: postgresAuditLog({ client: b }) },
          limits: { requests, store: postgresLimitStore({ client: b }) },
        }),
    ],
    [
      'a pool each',
      () =>
        agentHandler(agentOn(postgresStore({ client: a })), {
          auth,
          audit: { log: postgresAuditLog({ client: b }), required: true },
          limits: { requests, store: postgresLimitStore({ client: c }) },
        }),
    ],
    [
      'memoryStore; the log and the limit store on one pool',
      () =>
        agentHandler(agentOn(memoryStore()), {
          auth,
          audit: { log: postgresAuditLog({ client: a }) },
          limits: { requests, store: postgresLimitStore({ client: a }) },
        }),
    ],
    [
      'postgresStore, memoryLimitStore',
      () =>
        agentHandler(agentOn(postgresStore({ client: a })), { auth, limits: { requests, store: memoryLimitStore() } }),
    ],
  ];
  for (const [name, create] of accepted) assert.equal(typeof create(), 'function', name);
  // The DPoP replay store is asked before any turn holds a connection: it may share the store's pool.
  assert.equal(typeof postgresReplayStore({ client: a }).seen, 'function');
});

test('the pool a PostgreSQL store names is not enumerable: a store or log that is logged or copied never shows its options', () => {
  const a = pool('a');
  for (const made of [
    postgresStore({ client: a }),
    postgresAuditLog({ client: a }),
    postgresLimitStore({ client: a }),
  ]) {
    assert.equal((made as { [POOL]?: unknown })[POOL], a);
    assert.equal(Object.getOwnPropertyDescriptor(made, POOL)?.enumerable, false);
    assert.ok(!JSON.stringify(Object.entries(made)).includes('secret-password'));
    assert.equal(Object.getOwnPropertySymbols({ ...made }).length, 0);
  }
});

test('the refusals are literals at their throw site in src/http (design §38)', () => {
  assert.equal(literalOf(AUDIT_REFUSED), 'src/http/handler.ts');
  assert.equal(literalOf(LIMITS_REFUSED), 'src/http/handler.ts');
});
