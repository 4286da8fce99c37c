import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentError, createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { AuthConfigError } from '../../src/auth/index.ts';
import type { Principal, RunEvent, Tool } from '../../src/agent/index.ts';
import { captureConsoleError } from '../helpers/console.ts';

const boss: Principal = Object.freeze({
  id: 'boss',
  type: 'user',
  authenticator: 'jwt',
  issuer: 'https://idp.example',
});
const isCode = (code: string) => (error: unknown) => error instanceof AgentError && error.code === code;

function deleteTool(log: string[]): Tool<{ path: string }> {
  return {
    name: 'delete',
    description: 'Deletes a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    needsApproval: ({ path }) => !path.startsWith('/tmp/'),
    execute: ({ path }) => (log.push(path), `deleted ${path}`),
  };
}

test('a call that needs approval pauses the run and is checkpointed with its messages and the pending call', async () => {
  const log: string[] = [];
  const data = new Map<string, string>();
  const agent = createAgent({ name: 't', model: echoModel(), tools: [deleteTool(log)], store: memoryStore(data) });
  const events: RunEvent[] = [];
  const paused = await agent.send('/tool delete {"path":"/etc/passwd"}', { onEvent: (e) => events.push(e) });
  assert.equal(paused.status, 'awaiting-approval');
  assert.deepEqual(log, []);
  assert.equal(paused.approvals.length, 1);
  const approval = paused.approvals[0]!;
  assert.match(approval.id, /^[A-Za-z0-9_-]{22}$/);
  assert.deepEqual(approval, {
    id: approval.id,
    tool: 'delete',
    arguments: { path: '/etc/passwd' },
    toolCallId: 'call_1_0',
  });
  assert.deepEqual(await agent.pendingApprovals(paused.sessionId), paused.approvals);
  assert.deepEqual(
    events.map((e) => e.type),
    ['start', 'step-start', 'tool-call', 'approval-request', 'step-finish', 'finish'],
  );
  const checkpoint = JSON.parse(data.get(`checkpoint:${approval.id}`)!) as Record<string, unknown>;
  assert.equal(checkpoint.sessionId, paused.sessionId);
  assert.deepEqual(checkpoint.messages, paused.messages);
  assert.deepEqual(checkpoint.pending, { id: 'call_1_0', name: 'delete', arguments: { path: '/etc/passwd' } });
  assert.deepEqual((await agent.transcript(paused.sessionId)).messages, paused.messages);
});

test('approving resumes the run: the tool runs and the decider is recorded in the transcript for audit', async () => {
  const log: string[] = [];
  const agent = createAgent({ name: 't', model: echoModel(), tools: [deleteTool(log)] });
  const paused = await agent.send('/tool delete {"path":"/srv/a"}');
  const events: RunEvent[] = [];
  const resumed = await agent.decide(paused.approvals[0]!.id, {
    approved: true,
    reason: 'ok by me',
    principal: boss,
    onEvent: (e) => events.push(e),
  });
  assert.deepEqual(log, ['/srv/a']);
  assert.equal(resumed.status, 'completed');
  assert.equal(resumed.sessionId, paused.sessionId);
  assert.equal(resumed.text, 'Tool results: delete: deleted /srv/a');
  assert.deepEqual(events.map((e) => e.type).slice(0, 5), [
    'start',
    'approval-decided',
    'step-start',
    'tool-result',
    'step-finish',
  ]);
  // The approval-decided event says who decided and when (design §33), as the transcript keeps it.
  const decided = events[1] as Extract<RunEvent, { type: 'approval-decided' }>;
  assert.deepEqual(decided.decidedBy, { id: 'boss', authenticator: 'jwt', issuer: 'https://idp.example' });
  assert.equal(events.at(-1)?.type, 'finish');
  const { audit, messages } = await agent.transcript(paused.sessionId);
  assert.equal(audit.length, 1);
  assert.deepEqual(
    { ...audit[0], at: undefined, decidedAt: undefined },
    {
      type: 'approval-decided',
      approvalId: paused.approvals[0]!.id,
      tool: 'delete',
      approved: true,
      reason: 'ok by me',
      decidedBy: { id: 'boss', authenticator: 'jwt', issuer: 'https://idp.example' },
      decidedAt: undefined,
      at: undefined,
    },
  );
  assert.equal(audit[0]!.decidedAt, decided.decidedAt);
  assert.ok(!Number.isNaN(Date.parse(audit[0]!.at)));
  assert.deepEqual(messages, resumed.messages);
  assert.deepEqual(await agent.pendingApprovals(paused.sessionId), []);
});

test('denying resumes the run without the tool: a tool message says it was denied, with the reason', async () => {
  const log: string[] = [];
  const agent = createAgent({ name: 't', model: echoModel(), tools: [deleteTool(log)] });
  const paused = await agent.send('/tool delete {"path":"/srv/a"}');
  const events: RunEvent[] = [];
  const resumed = await agent.decide(paused.approvals[0]!.id, {
    approved: false,
    reason: 'not today',
    onEvent: (e) => events.push(e),
  });
  assert.deepEqual(log, []);
  assert.deepEqual(resumed.messages.at(-2), {
    role: 'tool',
    toolCallId: 'call_1_0',
    content: 'Denied by the user: not today',
  });
  assert.ok(events.some((e) => e.type === 'tool-denied' && e.toolCallId === 'call_1_0' && e.reason === 'not today'));
  const { audit } = await agent.transcript(paused.sessionId);
  assert.equal(audit[0]!.approved, false);
  assert.equal('decidedBy' in audit[0]!, false);
});

test('the remaining calls of the paused turn run after the decision, and a second approval pauses again', async () => {
  const log: string[] = [];
  const agent = createAgent({ name: 't', model: echoModel(), tools: [deleteTool(log)] });
  const paused = await agent.send(
    '/tool delete {"path":"/tmp/x"}\n/tool delete {"path":"/srv/1"}\n/tool delete {"path":"/tmp/y"}\n/tool delete {"path":"/srv/2"}',
  );
  assert.deepEqual(log, ['/tmp/x']);
  const second = await agent.decide(paused.approvals[0]!.id, { approved: true });
  assert.equal(second.status, 'awaiting-approval');
  assert.deepEqual(log, ['/tmp/x', '/srv/1', '/tmp/y']);
  assert.deepEqual(
    second.approvals.map((a) => a.arguments),
    [{ path: '/srv/2' }],
  );
  const done = await agent.decide(second.approvals[0]!.id, { approved: false });
  assert.equal(done.status, 'completed');
  assert.deepEqual(log, ['/tmp/x', '/srv/1', '/tmp/y']);
  assert.deepEqual(
    done.messages.filter((m) => m.role === 'tool').map((m) => m.content),
    ['deleted /tmp/x', 'deleted /srv/1', 'deleted /tmp/y', 'Denied by the user.'],
  );
  assert.equal((await agent.transcript(done.sessionId)).audit.length, 2);
});

test('an approval is decided once: deciding it again, or twice at the same time, is APPROVAL_NOT_FOUND and the tool runs once', async () => {
  const log: string[] = [];
  const agent = createAgent({ name: 't', model: echoModel(), tools: [deleteTool(log)] });
  const paused = await agent.send('/tool delete {"path":"/srv/a"}');
  const id = paused.approvals[0]!.id;
  const outcomes = await Promise.allSettled([
    agent.decide(id, { approved: true }),
    agent.decide(id, { approved: true }),
  ]);
  assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
  assert.ok(
    isCode('APPROVAL_NOT_FOUND')((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason),
  );
  await assert.rejects(agent.decide(id, { approved: false }), isCode('APPROVAL_NOT_FOUND'));
  assert.deepEqual(log, ['/srv/a']);
  assert.equal((await agent.transcript(paused.sessionId)).audit.length, 1);
});

test('two agents on one store (two processes): only one decider wins the claim', async () => {
  const log: string[] = [];
  const data = new Map<string, string>();
  const make = () => createAgent({ name: 't', model: echoModel(), tools: [deleteTool(log)], store: memoryStore(data) });
  const paused = await make().send('/tool delete {"path":"/srv/a"}');
  const outcomes = await Promise.allSettled([
    make().decide(paused.approvals[0]!.id, { approved: true }),
    make().decide(paused.approvals[0]!.id, { approved: true }),
  ]);
  assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
  assert.deepEqual(log, ['/srv/a']);
});

test('an unknown approval id is APPROVAL_NOT_FOUND', async () => {
  const agent = createAgent({ name: 't', model: echoModel() });
  await assert.rejects(agent.decide('nope', { approved: true }), isCode('APPROVAL_NOT_FOUND'));
});

test('a session waiting for a decision refuses a new message with APPROVAL_PENDING and keeps its checkpoint', async () => {
  const log: string[] = [];
  const agent = createAgent({ name: 't', model: echoModel(), tools: [deleteTool(log)] });
  const paused = await agent.send('/tool delete {"path":"/srv/a"}');
  await assert.rejects(agent.session(paused.sessionId).send('hello?'), isCode('APPROVAL_PENDING'));
  assert.deepEqual((await agent.transcript(paused.sessionId)).messages, paused.messages);
  const resumed = await agent.decide(paused.approvals[0]!.id, { approved: true });
  assert.equal(resumed.status, 'completed');
  assert.equal((await agent.session(paused.sessionId).send('hello')).text, 'hello');
});

test('a resumed run whose functions fail before the claim leaves the approval pending', async () => {
  let fail = false;
  const log: string[] = [];
  const agent = createAgent({
    name: 't',
    model: echoModel(),
    instructions: () => {
      if (fail) throw new Error('config service down');
      return '';
    },
    tools: [deleteTool(log)],
  });
  const paused = await agent.send('/tool delete {"path":"/srv/a"}');
  fail = true;
  await assert.rejects(agent.decide(paused.approvals[0]!.id, { approved: true }), /config service down/);
  assert.deepEqual(log, []);
  assert.deepEqual(await agent.pendingApprovals(paused.sessionId), paused.approvals);
  fail = false;
  assert.equal((await agent.decide(paused.approvals[0]!.id, { approved: true })).status, 'completed');
  assert.deepEqual(log, ['/srv/a']);
});

test('an approval policy that throws or answers no boolean never lets its tool run', async () => {
  const ran: string[] = [];
  const tool = (name: string, policy: () => unknown): Tool => ({
    name,
    description: '',
    parameters: {},
    needsApproval: policy as () => boolean,
    execute: () => ran.push(name),
  });
  const agent = createAgent({
    name: 't',
    model: echoModel(),
    tools: [
      tool('throws', () => {
        throw new Error('policy bug');
      }),
      tool('vague', () => 'yes'),
      tool('fine', () => false),
    ],
  });
  const { result, calls } = await captureConsoleError(() =>
    agent.send('/tool throws {}\n/tool vague {}\n/tool fine {}'),
  );
  assert.equal(result.status, 'completed');
  assert.deepEqual(ran, ['fine']);
  assert.equal(calls.length, 1, 'the policy error is logged');
  assert.match((calls[0]![1] as Error).message, /policy bug/);
  assert.deepEqual(
    result.messages.filter((m) => m.role === 'tool').map((m) => m.content),
    ['Error: tool "throws" failed', 'Error: the approval policy of "vague" did not answer a boolean', '1'],
  );
});

test('decide rejects a decision without a boolean approved with INVALID_INPUT', async () => {
  const agent = createAgent({ name: 't', model: echoModel() });
  await assert.rejects(agent.decide('x', { approved: 'yes' } as never), isCode('INVALID_INPUT'));
  await assert.rejects(agent.decide('x', { approved: true, reason: 5 } as never), isCode('INVALID_INPUT'));
  await assert.rejects(agent.decide('x', { approved: true, principal: { id: 'x' } } as never), isCode('INVALID_INPUT'));
});

test('pending approvals per principal are bounded (maxPendingApprovals, default 100): past it a run that would pause fails with APPROVAL_LIMIT', async () => {
  const log: string[] = [];
  const static_ = createAgent({
    name: 't',
    model: echoModel(),
    tools: [deleteTool(log)],
    store: memoryStore(),
    maxPendingApprovals: 3,
  });
  const other: Principal = { ...boss, issuer: 'https://elsewhere.example' };
  const paused = [];
  for (let i = 0; i < 3; i++)
    paused.push(await static_.send(`/tool delete {"path":"/etc/f${i}"}`, { principal: boss }));
  const refused = static_.send('/tool delete {"path":"/etc/over"}', { principal: boss, sessionId: 'over' });
  await assert.rejects(
    refused,
    (error: unknown) => isCode('APPROVAL_LIMIT')(error) && /3 approvals pending/.test((error as Error).message),
  );
  await assert.rejects(static_.transcript('over'), isCode('SESSION_NOT_FOUND'), 'the refused run stored nothing');
  // Other principals, calls without one, and runs that need no approval are not held back.
  assert.equal(
    (await static_.send('/tool delete {"path":"/etc/x"}', { principal: other })).status,
    'awaiting-approval',
  );
  assert.equal((await static_.send('/tool delete {"path":"/etc/y"}')).status, 'awaiting-approval');
  assert.equal((await static_.send('/tool delete {"path":"/tmp/z"}', { principal: boss })).status, 'completed');
  // A decision frees a place.
  await static_.decide(paused[0]!.approvals[0]!.id, { approved: false, principal: boss });
  const again = await static_.send('/tool delete {"path":"/etc/again"}', { principal: boss });
  assert.equal(again.status, 'awaiting-approval');
  await assert.rejects(
    static_.send('/tool delete {"path":"/etc/more"}', { principal: boss }),
    isCode('APPROVAL_LIMIT'),
  );
  assert.throws(() => createAgent({ name: 't', model: echoModel(), maxPendingApprovals: 0 }), AuthConfigError);
});

test('the default bound is 100 pending approvals per principal', async () => {
  const agent = createAgent({ name: 't', model: echoModel(), tools: [deleteTool([])], store: memoryStore() });
  for (let i = 0; i < 100; i++)
    assert.equal(
      (await agent.send(`/tool delete {"path":"/etc/${i}"}`, { principal: boss })).status,
      'awaiting-approval',
    );
  await assert.rejects(agent.send('/tool delete {"path":"/etc/101"}', { principal: boss }), isCode('APPROVAL_LIMIT'));
});

test('re-check at resume: a tools function that no longer returns the approved tool answers tool-unavailable, and it does not run', async () => {
  const log: string[] = [];
  let offered = true;
  const seen: (Principal | undefined)[] = [];
  const agent = createAgent({
    name: 't',
    model: echoModel(),
    tools: ({ principal }) => (seen.push(principal), offered ? [deleteTool(log)] : []),
  });
  const paused = await agent.send('/tool delete {"path":"/srv/b"}', { principal: boss });
  offered = false;
  const events: RunEvent[] = [];
  const resumed = await agent.decide(paused.approvals[0]!.id, {
    approved: true,
    principal: { id: 'other', type: 'user', authenticator: 'basic' },
    onEvent: (e) => events.push(e),
  });
  assert.deepEqual(log, [], 'the call did not run');
  const failed = events.find((e) => e.type === 'tool-error') as Extract<RunEvent, { type: 'tool-error' }>;
  assert.equal(failed.error, 'tool-unavailable');
  assert.match(resumed.text, /tool-unavailable/);
  // The tools function was asked again, with the principal the run started with.
  assert.deepEqual(seen.at(-1), boss);
});
