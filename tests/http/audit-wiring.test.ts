// The handler's audit option with a kept log (design §34): each request's record appended to the
// chain with the run's events (a tool call run, by the SHA-256 of its arguments; an approval
// requested and decided), `required: true` answering 503 before the operation and stopping a run
// whose event cannot be written, and the default failing open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentHandler } from '../../src/http/index.ts';
import type { AgentHandlerOptions } from '../../src/http/handler.ts';
import { apiToken } from '../../src/auth/index.ts';
import { createAgent, echoModel, memoryAuditLog, verifyAuditLog } from '../../src/agent/index.ts';
import type { ChainedRecord, Tool } from '../../src/agent/index.ts';

const BASE = 'https://agent.example/agent';
const TOKEN = 'an-audit-wiring-token-0123456789';
const OTHER = 'another-audit-wiring-token-98765';

function setup(audit: AgentHandlerOptions['audit'], more: AgentHandlerOptions = {}) {
  const ran: unknown[] = [];
  const tools: Tool[] = [
    { name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, execute: (a) => (ran.push(a), 'found') },
    {
      name: 'deploy',
      description: 'Deploys',
      parameters: { type: 'object' },
      needsApproval: true,
      execute: (a) => (ran.push(a), 'deployed'),
    },
  ];
  const agent = createAgent({ name: 'audited', model: echoModel(), tools });
  const auth = [apiToken(TOKEN, { id: 'ada' }), apiToken(OTHER, { id: 'bob' })];
  return { ran, handler: agentHandler(agent, { basePath: '/agent', auth, audit, ...more }) };
}

const post = (handler: (r: Request) => Promise<Response>, path: string, body: unknown, token = TOKEN) =>
  handler(
    new Request(BASE + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );

async function all(log: ReturnType<typeof memoryAuditLog>): Promise<ChainedRecord[]> {
  const records: ChainedRecord[] = [];
  for await (const record of log.read()) records.push(record);
  return records;
}

/** Records are appended after the answer: wait for the log to hold `count`. */
async function settled(log: ReturnType<typeof memoryAuditLog>, count: number): Promise<ChainedRecord[]> {
  for (let i = 0; i < 100; i++) {
    const records = await all(log);
    if (records.length >= count) return records;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return all(log);
}

test('audit: { log }: the request record and its tool call join one chain; arguments only as their SHA-256', async () => {
  const log = memoryAuditLog();
  const { handler, ran } = setup({ log });
  const sent = await post(handler, '', { message: '/tool lookup {"q":"secret-ish"}' });
  assert.equal(sent.status, 200);
  assert.deepEqual(ran, [{ q: 'secret-ish' }]);
  const records = await settled(log, 2);
  assert.equal(records.length, 2);
  const [call, request] = records as [ChainedRecord, ChainedRecord];
  assert.equal(call.type, 'tool-call');
  assert.equal(call.tool, 'lookup');
  assert.match(String(call.argumentsSha256), /^[0-9a-f]{64}$/);
  assert.ok(!JSON.stringify(call).includes('secret-ish'), 'the arguments stay out of the record');
  assert.equal(request.status, 200);
  assert.equal(request.requestId, call.requestId, 'the event carries its request id');
  assert.equal((await verifyAuditLog(records)).ok, true);
  const withArgs = memoryAuditLog();
  await post(setup({ log: withArgs, recordArguments: true }).handler, '', { message: '/tool lookup {"q":"x"}' });
  assert.deepEqual((await settled(withArgs, 2))[0]!.arguments, { q: 'x' });
});

test('audit: an approval requested and decided name the requester, the decider and the outcome', async () => {
  const log = memoryAuditLog();
  const { handler } = setup({ log });
  const sent = (await (await post(handler, '', { message: '/tool deploy {"env":"prod"}' })).json()) as {
    approvals: { id: string }[];
  };
  const approvalId = sent.approvals[0]!.id;
  assert.equal((await post(handler, `/approvals/${approvalId}`, { approved: true, reason: 'go' })).status, 200);
  const records = await settled(log, 5);
  const requested = records.find((r) => r.type === 'approval-requested')!;
  assert.deepEqual(
    [requested.approvalId, requested.tool, requested.requester],
    [approvalId, 'deploy', { id: 'ada', authenticator: 'api-token' }],
  );
  const decided = records.find((r) => r.type === 'approval-decided')!;
  assert.deepEqual(
    [decided.approved, decided.reason, decided.decidedBy],
    [true, 'go', { id: 'ada', authenticator: 'api-token' }],
  );
  assert.ok(records.some((r) => r.type === 'tool-call' && r.tool === 'deploy'));
});

/** A log whose appends fail from the `failFrom`-th on. */
function failingLog(failFrom: number) {
  const inner = memoryAuditLog();
  let appends = 0;
  return {
    inner,
    log: {
      append: (record: Record<string, unknown>) =>
        ++appends >= failFrom ? Promise.reject(new Error('disk full')) : inner.append(record),
      read: inner.read,
      head: inner.head,
    },
  };
}

test('audit.required: a record that cannot be written is 503 before the operation; by default the answer is unchanged', async () => {
  const errors: unknown[][] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void errors.push(args);
  try {
    const required = setup({ log: failingLog(1).log, required: true });
    const refused = await post(required.handler, '', { message: '/tool lookup {"q":1}' });
    assert.equal(refused.status, 503);
    assert.deepEqual(required.ran, [], 'the operation did not run');
    const open = setup({ log: failingLog(1).log });
    assert.equal((await post(open.handler, '', { message: '/tool lookup {"q":2}' })).status, 200);
    assert.equal((await post(open.handler, '', { message: '/tool lookup {"q":3}' })).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(open.ran, [{ q: 2 }, { q: 3 }]);
    assert.ok(errors.length >= 1);
    assert.ok(errors.every((line) => !String(line).includes(TOKEN)));
  } finally {
    console.error = original;
  }
});

test('audit.required: an event that cannot be written mid-run stops the run before the tool runs', async () => {
  // The request record is written (1st append); the tool call event (2nd) fails.
  const { log, inner } = failingLog(2);
  const { handler, ran } = setup({ log, required: true });
  const answer = await post(handler, '', { message: '/tool lookup {"q":4}' });
  assert.equal(answer.status, 503);
  assert.deepEqual(ran, [], 'the tool did not run');
  const records = await all(inner);
  assert.equal(records.length, 1);
  assert.deepEqual(records[0]!.operations, ['send']);
});

/** A JSON-RPC request to the MCP route. */
const rpc = (id: number, method: string, params: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});
const MCP = { mcp: { tools: ['lookup'] } } as const;

test('audit.required on MCP: a record that cannot be written is 503 answering the request id, before any tool runs', async () => {
  const errors: unknown[][] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void errors.push(args);
  try {
    const { handler, ran } = setup({ log: failingLog(1).log, required: true }, MCP);
    const calls = [
      rpc(7, 'tools/call', { name: 'ask', arguments: { message: '/tool lookup {"q":5}' } }),
      rpc(8, 'tools/call', { name: 'lookup', arguments: { q: 6 } }),
      rpc(9, 'tools/list'),
    ];
    for (const body of calls) {
      const answer = await post(handler, '/mcp', body);
      assert.equal(answer.status, 503, body.method);
      assert.equal(answer.headers.get('retry-after'), '5');
      assert.deepEqual(await answer.json(), {
        jsonrpc: '2.0',
        id: body.id,
        error: { code: -32001, message: 'Service Unavailable', data: { retryAfter: 5 } },
      });
    }
    assert.deepEqual(ran, [], 'no tool ran');
  } finally {
    console.error = original;
  }
});

test("audit on MCP: a tools/call's run events join the chain; under required one that cannot be written stops the tool", async () => {
  const log = memoryAuditLog();
  const kept = setup({ log, required: true }, MCP);
  const asked = await post(
    kept.handler,
    '/mcp',
    rpc(1, 'tools/call', { name: 'ask', arguments: { message: '/tool lookup {"q":7}' } }),
  );
  assert.equal(asked.status, 200);
  const direct = await post(kept.handler, '/mcp', rpc(2, 'tools/call', { name: 'lookup', arguments: { q: 8 } }));
  assert.equal(direct.status, 200);
  assert.deepEqual(kept.ran, [{ q: 7 }, { q: 8 }]);
  const records = await settled(log, 4);
  const calls = records.filter((r) => r.type === 'tool-call');
  assert.equal(calls.length, 2, JSON.stringify(records));
  const requests = records.filter((r) => r.type === undefined);
  assert.deepEqual(
    calls.map((c) => requests.some((r) => r.requestId === c.requestId && r.surface === 'mcp')),
    [true, true],
  );
  assert.equal((await verifyAuditLog(records)).ok, true);
  // The request record is written (1st append); the tool call event (2nd) fails: 503, the tool does not run.
  for (const body of [
    rpc(3, 'tools/call', { name: 'ask', arguments: { message: '/tool lookup {"q":9}' } }),
    rpc(4, 'tools/call', { name: 'lookup', arguments: { q: 10 } }),
  ]) {
    const failing = setup({ log: failingLog(2).log, required: true }, MCP);
    const answer = await post(failing.handler, '/mcp', body);
    assert.equal(answer.status, 503);
    assert.equal(((await answer.json()) as { id: number }).id, body.id);
    assert.deepEqual(failing.ran, [], 'the tool did not run');
  }
});
