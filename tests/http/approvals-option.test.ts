// The route option `approvals` (design §33), decided in authorize(): who may decide (`by`), four
// eyes (`'others'`: never the run's starter, 403 self-approval without a challenge), per-tool
// scopes (checked after ownership), `ttlSec` (shown expired, decided as denied), and the queue
// (`GET <base>/approvals` without sessionId, oldest first, paged).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentHandler } from '../../src/http/index.ts';
import type { AgentHandlerOptions } from '../../src/http/handler.ts';
import { AuthConfigError } from '../../src/auth/index.ts';
import type { AuthFn, Principal } from '../../src/auth/index.ts';
import { createAgent, echoModel, memoryAuditLog, memoryStore } from '../../src/agent/index.ts';
import type { ChainedRecord, Message, Tool } from '../../src/agent/index.ts';
import { decodeBase64url, encodeBase64url } from '../../src/auth/jws/base64url.ts';
import { approvalQueue, MAX_QUEUE_SCAN } from '../../src/http/queue.ts';
import { DEFAULT_APPROVALS } from '../../src/http/approvals.ts';
import type { AgentResources, ApprovalResource, QueueQuery } from '../../src/agent/resources.ts';

const BASE = 'http://localhost/agent';
const DEPLOY = '/tool deploy {"env":"prod"}';

/** Accepts the principal a test names in `x-principal` (base64url of its JSON), claims and all. */
const asHeader: AuthFn = Object.assign(
  (request: Request) => {
    const named = request.headers.get('x-principal');
    return named === null ? null : (JSON.parse(new TextDecoder().decode(decodeBase64url(named)!)) as Principal);
  },
  { challenges: [{ scheme: 'Test' }] },
);

const user = (id: string, scope: string): Principal => ({
  id,
  type: 'user',
  authenticator: 'custom',
  claims: { sub: id, scope },
});
const ALL = 'agent:send agent:read agent:approve ops:approve';
const alice = user('alice', ALL);
const bob = user('bob', ALL);
/** Sends and reads, approves nothing. */
const carol = user('carol', 'agent:send agent:read');
/** Approves, but not the deploy tool's own scope. */
const dave = user('dave', 'agent:send agent:read agent:approve');

function setup(
  approvals: AgentHandlerOptions['approvals'],
  sessions: 'owned' | 'shared' = 'owned',
  more: AgentHandlerOptions = {},
) {
  const deployed: unknown[] = [];
  const refusals: unknown[] = [];
  const deploy: Tool = {
    name: 'deploy',
    description: 'Deploys',
    parameters: { type: 'object' },
    needsApproval: true,
    execute: (a) => (deployed.push(a), 'ok'),
  };
  const data = new Map<string, string>();
  const agent = createAgent({ name: 'web', model: echoModel(), tools: [deploy], store: memoryStore(data), sessions });
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: asHeader,
    scopes: { send: ['agent:send'], read: ['agent:read'], approve: ['agent:approve'] },
    onRefused: (refusal) => void refusals.push(refusal),
    ...(approvals !== undefined && { approvals }),
    ...more,
  });
  return { agent, handler, deployed, refusals, data };
}

const as = (principal: Principal) => ({
  'x-principal': encodeBase64url(new TextEncoder().encode(JSON.stringify(principal))),
});
const get = (path: string, principal: Principal) => new Request(BASE + path, { headers: as(principal) });
const post = (path: string, body: unknown, principal: Principal) =>
  new Request(BASE + path, {
    method: 'POST',
    headers: { ...as(principal), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function paused(handler: (r: Request) => Promise<Response>, sessionId: string, owner: Principal) {
  const sent = await handler(post('', { message: DEPLOY, sessionId }, owner));
  assert.equal(sent.status, 200, await sent.clone().text());
  return ((await sent.json()) as { approvals: { id: string }[] }).approvals[0]!.id;
}

test('approvals is closed and checked at creation; by other than owner needs scopes.approve', () => {
  const agent = createAgent({ name: 'web', model: echoModel(), sessions: 'owned' });
  const make = (options: AgentHandlerOptions) => () => agentHandler(agent, { auth: asHeader, ...options });
  assert.throws(make({ approvals: { by: 'approvers' } }), AuthConfigError);
  assert.throws(make({ approvals: { by: 'others' }, scopes: { read: ['r'] } }), /needs scopes\.approve/);
  assert.throws(make({ approvals: { bye: 'owner' } as never }), /did you mean "by"/);
  assert.throws(make({ approvals: { by: 'anyone' as never } }), /'owner', 'approvers' or 'others'/);
  assert.throws(make({ approvals: { ttlSec: 0 } }), /ttlSec/);
  assert.throws(make({ approvals: { scopes: { deploy: [] } } }), /scopes\.deploy/);
  make({ approvals: { by: 'others' }, scopes: { approve: ['a'] } })();
});

test("by 'approvers': anyone holding scopes.approve lists and decides every pending approval; the decider is recorded", async () => {
  const { agent, handler, deployed } = setup({ by: 'approvers' });
  const approvalId = await paused(handler, 'alice-1', alice);
  // The queue of others' approvals needs scopes.approve beside scopes.read.
  const denied = await handler(get('/approvals', carol));
  assert.equal(denied.status, 403);
  assert.match(denied.headers.get('www-authenticate') ?? '', /scope="agent:read agent:approve"/);
  const queue = await handler(get('/approvals', bob));
  assert.equal(queue.status, 200);
  const listed = (await queue.json()) as { approvals: Record<string, unknown>[]; nextCursor: string | null };
  assert.equal(listed.approvals.length, 1);
  const [item] = listed.approvals;
  assert.deepEqual(
    { ...item, createdAt: undefined },
    {
      id: approvalId,
      sessionId: 'alice-1',
      tool: 'deploy',
      arguments: { env: 'prod' },
      requester: { id: 'alice', authenticator: 'custom' },
      createdAt: undefined,
    },
  );
  assert.equal(listed.nextCursor, null);
  // A session's approvals too, but not its transcript: approvers read approvals, not conversations.
  assert.equal((await handler(get('/approvals?sessionId=alice-1', bob))).status, 200);
  assert.equal((await handler(get('/chat/alice-1', bob))).status, 404);
  const decided = await handler(post(`/approvals/${approvalId}`, { approved: true }, bob));
  assert.equal(decided.status, 200, await decided.clone().text());
  assert.deepEqual(deployed, [{ env: 'prod' }]);
  const { audit } = await agent.transcript('alice-1');
  assert.deepEqual(audit[0]!.decidedBy, { id: 'bob', authenticator: 'custom' });
  assert.equal(typeof audit[0]!.decidedAt, 'string');
});

test("by 'owner' (the default under 'owned'): another approver gets the 404 an unknown approval gets", async () => {
  const { handler, deployed } = setup(undefined);
  const approvalId = await paused(handler, 'alice-2', alice);
  const other = await handler(post(`/approvals/${approvalId}`, { approved: true }, bob));
  const unknown = await handler(post('/approvals/no-such-approval', { approved: true }, bob));
  assert.equal(other.status, 404);
  assert.deepEqual(await other.text(), await unknown.text());
  // The owner's queue lists the owner's own runs only.
  const mine = (await (await handler(get('/approvals', alice))).json()) as { approvals: { id: string }[] };
  assert.deepEqual(
    mine.approvals.map((a) => a.id),
    [approvalId],
  );
  const theirs = (await (await handler(get('/approvals', bob))).json()) as { approvals: unknown[] };
  assert.deepEqual(theirs.approvals, []);
  assert.deepEqual(deployed, []);
});

test("by 'others' (four eyes): the run's starter never decides it: 403 Forbidden, self-approval, no challenge", async () => {
  const { agent, handler, deployed, refusals } = setup({ by: 'others' });
  const approvalId = await paused(handler, 'alice-3', alice);
  for (const approved of [true, false]) {
    const own = await handler(post(`/approvals/${approvalId}`, { approved }, alice));
    assert.equal(own.status, 403);
    assert.equal(await own.text(), '{"error":"Forbidden"}');
    assert.equal(own.headers.get('www-authenticate'), null, 'no token can fix it');
  }
  assert.deepEqual(refusals, [{ reason: 'self-approval' }, { reason: 'self-approval' }]);
  // The starter's queue does not offer what the starter may not decide.
  const queue = (await (await handler(get('/approvals', alice))).json()) as { approvals: unknown[] };
  assert.deepEqual(queue.approvals, []);
  assert.deepEqual(deployed, []);
  const decided = await handler(post(`/approvals/${approvalId}`, { approved: true }, bob));
  assert.equal(decided.status, 200);
  assert.deepEqual(deployed, [{ env: 'prod' }]);
  assert.deepEqual((await agent.transcript('alice-3')).audit[0]!.decidedBy, { id: 'bob', authenticator: 'custom' });
});

test('per-tool scopes are checked after ownership: 404 for who may not see it, else 403 naming the union', async () => {
  const { handler, deployed } = setup({ scopes: { deploy: ['ops:approve'] } });
  const owner = user('erin', 'agent:send agent:read agent:approve');
  const approvalId = await paused(handler, 'erin-1', owner);
  // A stranger holding every scope learns nothing of the approval, not even its tool's scopes.
  const stranger = await handler(post(`/approvals/${approvalId}`, { approved: true }, dave));
  assert.equal(stranger.status, 404);
  assert.equal(await stranger.text(), '{"error":"Approval not found"}');
  const short = await handler(post(`/approvals/${approvalId}`, { approved: true }, owner));
  assert.equal(short.status, 403);
  assert.match(short.headers.get('www-authenticate') ?? '', /scope="agent:approve ops:approve"/);
  assert.deepEqual(deployed, []);
});

test('ttlSec: an older pending approval is shown expired when read, and a decision denies it with reason expired', async () => {
  const { agent, handler, deployed, data } = setup({ ttlSec: 60 });
  const approvalId = await paused(handler, 'alice-4', alice);
  const listed = async () =>
    ((await (await handler(get('/approvals?sessionId=alice-4', alice))).json()) as { approvals: { status: string }[] })
      .approvals;
  assert.equal((await listed())[0]!.status, 'pending');
  // Two minutes pass (the checkpoint's createdAt moved back in the store's data).
  const key = `checkpoint:${approvalId}`;
  const checkpoint = JSON.parse(data.get(key)!) as { createdAt: string };
  checkpoint.createdAt = new Date(Date.now() - 120_000).toISOString();
  data.set(key, JSON.stringify(checkpoint));
  assert.equal((await listed())[0]!.status, 'expired');
  assert.equal((await listed())[0]!.status, 'expired', 'a read decides nothing');
  const decided = await handler(post(`/approvals/${approvalId}`, { approved: true }, alice));
  assert.equal(decided.status, 200);
  assert.deepEqual(deployed, [], 'an expired approval never runs its tool');
  const entry = (await agent.transcript('alice-4')).audit[0]!;
  assert.deepEqual([entry.approved, entry.reason], [false, 'expired']);
});

/** Two minutes pass for a pending approval: its checkpoint's createdAt moved back in the memory store's data. */
function age(data: Map<string, string>, approvalId: string): void {
  const key = `checkpoint:${approvalId}`;
  const checkpoint = JSON.parse(data.get(key)!) as { createdAt: string };
  checkpoint.createdAt = new Date(Date.now() - 120_000).toISOString();
  data.set(key, JSON.stringify(checkpoint));
}

test('ttlSec: a send to a session whose approval expired denies it (reason expired), resumes the run, then sends', async () => {
  const log = memoryAuditLog();
  const { agent, handler, deployed, data } = setup({ ttlSec: 60 }, 'owned', { audit: { log } });
  const approvalId = await paused(handler, 'alice-6', alice);
  // Not expired yet: the send is refused as before, and nothing is decided.
  const early = await handler(post('', { message: 'hello', sessionId: 'alice-6' }, alice));
  assert.equal(early.status, 409);
  age(data, approvalId);
  const sent = await handler(post('', { message: 'hello', sessionId: 'alice-6' }, alice));
  assert.equal(sent.status, 200, await sent.clone().text());
  const result = (await sent.json()) as { status: string; text: string; messages: Message[] };
  assert.deepEqual([result.status, result.text], ['completed', 'hello']);
  assert.deepEqual(deployed, [], 'an expired approval never runs its tool');
  const { messages, audit } = await agent.transcript('alice-6');
  // The model was told of the denial (the resumed run's turn), then the message went as any send.
  assert.deepEqual(
    messages.map((m) => [m.role, m.content]),
    [
      ['user', DEPLOY],
      ['assistant', ''],
      ['tool', 'Denied by the user: expired'],
      ['assistant', 'Tool results: deploy: Denied by the user: expired'],
      ['user', 'hello'],
      ['assistant', 'hello'],
    ],
  );
  assert.equal(audit.length, 1);
  const entry = audit[0]!;
  assert.deepEqual(
    [entry.approvalId, entry.approved, entry.reason, entry.decidedBy],
    [approvalId, false, 'expired', { id: 'alice', authenticator: 'custom' }],
  );
  assert.ok(Date.parse(entry.decidedAt) > 0);
  assert.deepEqual(await agent.pendingApprovals('alice-6'), []);
  // The audit log holds the decision beside the send's record.
  let records: ChainedRecord[] = [];
  for (let i = 0; i < 50 && !records.some((r) => r.type === 'approval-decided'); i++) {
    records = [];
    for await (const record of log.read()) records.push(record);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const decided = records.find((r) => r.type === 'approval-decided')!;
  assert.deepEqual(
    [decided.approvalId, decided.approved, decided.reason, decided.decidedBy],
    [approvalId, false, 'expired', { id: 'alice', authenticator: 'custom' }],
  );
});

test('ttlSec: a useChat message and an MCP ask deny an expired approval of their session first, as a send does', async () => {
  const { agent, handler, deployed, data } = setup({ ttlSec: 60 }, 'owned', { mcp: true });
  const viaUi = await paused(handler, 'alice-7', alice);
  age(data, viaUi);
  const ui = await handler(
    post(
      '/ui',
      {
        id: 'alice-7',
        trigger: 'submit-message',
        messages: [{ id: 'm2', role: 'user', parts: [{ type: 'text', text: 'and now?' }] }],
      },
      alice,
    ),
  );
  assert.equal(ui.status, 200);
  const stream = await ui.text();
  assert.match(stream, /"type":"data-approval-decided"/);
  assert.match(stream, /"reason":"expired"/);
  const chat = await agent.transcript('alice-7');
  assert.deepEqual([chat.audit[0]?.reason, chat.messages.at(-1)?.content], ['expired', 'and now?']);
  const viaMcp = await paused(handler, 'alice-8', alice);
  age(data, viaMcp);
  const mcp = await handler(
    post(
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'ask', arguments: { message: 'still there?', sessionId: 'alice-8' } },
      },
      alice,
    ),
  );
  const answer = (await mcp.json()) as { result?: { isError?: boolean } };
  assert.notEqual(answer.result?.isError, true, JSON.stringify(answer));
  const asked = await agent.transcript('alice-8');
  assert.deepEqual([asked.audit[0]?.reason, asked.messages.at(-1)?.content], ['expired', 'still there?']);
  assert.deepEqual(deployed, []);
});

test('the queue is oldest first, paged with limit and an opaque cursor; a bad limit or cursor is 400', async () => {
  const { handler } = setup({ by: 'approvers' });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push(await paused(handler, `q-${i}`, i % 2 === 0 ? alice : carol));
    // Each a later millisecond than the one before: the order is createdAt's, not the ids'.
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const path: string = `/approvals?limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const page = (await (await handler(get(path, bob))).json()) as {
      approvals: { id: string }[];
      nextCursor: string | null;
    };
    assert.ok(page.approvals.length <= 2);
    seen.push(...page.approvals.map((a) => a.id));
    cursor = page.nextCursor;
  } while (cursor !== null);
  assert.deepEqual(seen, ids);
  assert.equal((await handler(get('/approvals?limit=101', bob))).status, 400);
  assert.equal((await handler(get('/approvals?cursor=nope', bob))).status, 400);
});

test('the queue skips the approvals the caller may not decide and still fills each page while more wait', async () => {
  const ship: Tool = {
    name: 'ship',
    description: 'Ships',
    parameters: { type: 'object' },
    needsApproval: true,
    execute: () => 'shipped',
  };
  const deploy: Tool = { ...ship, name: 'deploy', description: 'Deploys' };
  const agent = createAgent({
    name: 'web',
    model: echoModel(),
    tools: [ship, deploy],
    store: memoryStore(),
    sessions: 'owned',
  });
  const handler = agentHandler(agent, {
    basePath: '/agent',
    auth: asHeader,
    scopes: { send: ['agent:send'], read: ['agent:read'], approve: ['agent:approve'] },
    // dave lacks ops:approve: every deploy call is one he may not decide, and is left out of his queue.
    approvals: { by: 'approvers', scopes: { deploy: ['ops:approve'] } },
  });
  // 30 visible approvals, each followed by 3 invisible ones: 120 in the store, more than one store page.
  for (let i = 0; i < 30; i++) {
    const sent = await handler(post('', { message: '/tool ship {}', sessionId: `ship-${i}` }, alice));
    assert.equal(sent.status, 200);
    for (let j = 0; j < 3; j++)
      assert.equal(
        (await handler(post('', { message: '/tool deploy {}', sessionId: `deploy-${i}-${j}` }, bob))).status,
        200,
      );
  }
  type Page = { approvals: { id: string; tool: string }[]; nextCursor: string | null };
  const pages = async (who: Principal, limit: number): Promise<Page[]> => {
    const seen: Page[] = [];
    let cursor: string | null = null;
    do {
      const path: string = `/approvals?limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const answer = await handler(get(path, who));
      assert.equal(answer.status, 200);
      const page = (await answer.json()) as Page;
      seen.push(page);
      cursor = page.nextCursor;
    } while (cursor !== null);
    return seen;
  };
  // bob holds every scope: the store's whole order; dave's queue is its ship calls, in that order.
  const all = (await pages(bob, 100)).flatMap((page) => page.approvals);
  assert.equal(all.length, 120);
  const visible = all.filter((a) => a.tool === 'ship').map((a) => a.id);
  const paged = await pages(dave, 4);
  assert.deepEqual(
    paged.map((page) => page.approvals.length),
    [4, 4, 4, 4, 4, 4, 4, 2],
    'every page but the last is full',
  );
  assert.deepEqual(
    paged.flatMap((page) => page.approvals.map((a) => a.id)),
    visible,
  );
  const one = await pages(dave, 100);
  assert.deepEqual(
    one.map((page) => page.approvals.length),
    [30],
    'one page reads on through the store pages',
  );
});

test('the queue reads at most MAX_QUEUE_SCAN approvals for one page; its cursor then goes on after the last one read', async () => {
  // 2,500 pending approvals in the store's order; the caller may decide every 1,200th.
  const rows: ApprovalResource[] = Array.from({ length: 2500 }, (_, n) => ({
    approvalId: `a${String(n).padStart(5, '0')}`,
    sessionId: `s${n}`,
    owner: null,
    requester: undefined,
    tool: n % 1200 === 1199 ? 'ship' : 'deploy',
    arguments: {},
    createdAt: '2026-12-07T00:00:00.000Z',
  }));
  const reads: number[] = [];
  const resources: AgentResources = {
    sessionOwner: async () => null,
    approval: async () => undefined,
    async queue({ limit, after }: QueueQuery) {
      reads.push(limit);
      const from = after === undefined ? 0 : rows.findIndex((row) => row.approvalId === after[1]) + 1;
      const page = rows.slice(from, from + limit);
      const last = page.at(-1);
      return { found: page, last: last && [last.createdAt, last.approvalId], more: page.length === limit };
    },
  };
  type Page = { approvals: { id: string }[]; nextCursor: string | null };
  const pageAfter = async (cursor: string | null) => {
    const page = await approvalQueue(
      resources,
      {
        limit: 5,
        after:
          cursor === null
            ? undefined
            : (JSON.parse(new TextDecoder().decode(decodeBase64url(cursor)!)) as [string, string]),
      },
      undefined,
      (row) => row.tool === 'ship',
      DEFAULT_APPROVALS,
    );
    return page as Page;
  };
  const first = await pageAfter(null);
  assert.deepEqual(first.approvals, [], 'none within the first MAX_QUEUE_SCAN');
  assert.equal(
    reads.reduce((a, b) => a + b, 0),
    MAX_QUEUE_SCAN,
  );
  assert.ok(first.nextCursor !== null, 'more wait after the bound');
  const ids: string[] = [];
  let cursor: string | null = first.nextCursor;
  for (let i = 0; cursor !== null && i < 10; i++) {
    const page = await pageAfter(cursor);
    ids.push(...page.approvals.map((a) => a.id));
    cursor = page.nextCursor;
  }
  assert.equal(cursor, null);
  assert.deepEqual(ids, ['a01199', 'a02399']);
});

test("four eyes on every surface: the starter's useChat approval and MCP decide are refused too", async () => {
  const { handler, deployed } = setup({ by: 'others' }, 'owned', { mcp: true });
  const approvalId = await paused(handler, 'alice-5', alice);
  const ui = await handler(
    post(
      '/ui',
      {
        id: 'alice-5',
        trigger: 'submit-message',
        messages: [
          { id: 'm0', role: 'user', parts: [{ type: 'text', text: DEPLOY }] },
          {
            id: 'm1',
            role: 'assistant',
            parts: [
              {
                type: 'tool-deploy',
                toolCallId: 'call_1_0',
                state: 'approval-responded',
                input: { env: 'prod' },
                approval: { id: approvalId, approved: true },
              },
            ],
          },
        ],
      },
      alice,
    ),
  );
  assert.equal(ui.status, 403);
  assert.equal(await ui.text(), '{"error":"Forbidden"}');
  const mcp = await handler(
    post(
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'decide', arguments: { approvalId, approved: true } },
      },
      alice,
    ),
  );
  const answer = (await mcp.json()) as { result?: { isError?: boolean; content: { text: string }[] } };
  assert.equal(answer.result?.isError, true, JSON.stringify(answer));
  assert.deepEqual(deployed, []);
  // Another approver decides through MCP.
  const other = await handler(
    post(
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'decide', arguments: { approvalId, approved: true } },
      },
      bob,
    ),
  );
  const decided = (await other.json()) as { result?: { isError?: boolean } };
  assert.notEqual(decided.result?.isError, true, JSON.stringify(decided));
  assert.deepEqual(deployed, [{ env: 'prod' }]);
});

test("the owner's queue of an anonymous caller is empty: another anonymous caller's approvals are reachable by id only", async () => {
  const { handler } = setup(undefined);
  const guest: Principal = { ...user('anonymous', 'agent:send agent:read'), authenticator: 'anonymous' };
  const sent = await handler(post('', { message: DEPLOY }, guest));
  assert.equal(sent.status, 200, await sent.clone().text());
  const queue = await handler(get('/approvals', guest));
  assert.equal(queue.status, 200);
  assert.deepEqual(await queue.json(), { approvals: [], nextCursor: null });
});

test('audit.required: an MCP decide refused after its record was kept (self-approval) gets a refused record too', async () => {
  const log = memoryAuditLog();
  const { handler, deployed } = setup({ by: 'others' }, 'owned', { mcp: true, audit: { log, required: true } });
  const approvalId = await paused(handler, 'alice-9', alice);
  const mcp = await handler(
    post(
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'decide', arguments: { approvalId, approved: true } },
      },
      alice,
    ),
  );
  assert.equal(((await mcp.json()) as { result?: { isError?: boolean } }).result?.isError, true);
  assert.deepEqual(deployed, []);
  let records: ChainedRecord[] = [];
  for (let i = 0; i < 50 && !records.some((r) => r.outcome === 'refused'); i++) {
    records = [];
    for await (const record of log.read()) records.push(record);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const refused = records.find((r) => r.outcome === 'refused' && r.surface === 'mcp');
  assert.deepEqual([refused?.reason, refused?.approvalId], ['self-approval', approvalId]);
});
