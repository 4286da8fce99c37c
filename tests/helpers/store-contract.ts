/**
 * The tests every `Store` passes (design §9, §10): owner and title kept with the session,
 * checkpoints found by session, decide-once, one owner's sessions listed by keyset pages,
 * a session deleted with its checkpoints, turns of one session serialized by `withSession`.
 * A store's test file calls `storeContract('fileStore', async (t) => …)`; the PostgreSQL store
 * runs the same function with its own factory. Portable: no Node import.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Checkpoint, OwnerKey, SessionRecord, Store } from '../../src/agent/types.ts';

export interface StoreUnderTest {
  store: Store;
  /** A new instance over the same data, as after a restart. */
  reopen(): Store | Promise<Store>;
}

type Context = { after(fn: () => void | Promise<void>): void };

const ALICE: OwnerKey = ['jwt', 'https://a.example', 'alice'];
const ALICE_ELSEWHERE: OwnerKey = ['jwt', 'https://b.example', 'alice'];
const ALICE_NO_ISSUER: OwnerKey = ['jwt', null, 'alice'];
const BOB: OwnerKey = ['basic', null, 'bob'];
/** Alice of one issuer in two tenants (Auth0 organizations: one issuer, the tenant in org_id): two owners, neither ALICE. */
const ALICE_OF_ACME: OwnerKey = ['jwt', 'https://a.example', 'alice', 'org_acme'];
const ALICE_OF_GLOBEX: OwnerKey = ['jwt', 'https://a.example', 'alice', 'org_globex'];

export const sessionRecord = (id: string, fields: Partial<SessionRecord> = {}): SessionRecord => ({
  id,
  messages: [{ role: 'user', content: `first message of ${id}` }],
  audit: [],
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...fields,
});

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
const checkpoint = (approvalId: string, sessionId: string): Checkpoint => ({
  approvalId,
  sessionId,
  metadata: { n: approvalId },
});
const byId = (a: Checkpoint, b: Checkpoint) => (a.approvalId < b.approvalId ? -1 : 1);

export function storeContract(name: string, open: (t: Context) => Promise<StoreUnderTest>): void {
  test(`${name} (store contract): a session keeps its owner and title, also in a new instance over the same data`, async (t) => {
    const { store, reopen } = await open(t);
    const owned = sessionRecord('s-owned', { owner: ALICE, title: 'Hello' });
    const ownerless = sessionRecord('s-free');
    await store.saveSession(owned);
    await store.saveSession(ownerless);
    const again = await reopen();
    assert.deepEqual(await again.loadSession('s-owned'), owned);
    assert.deepEqual(await again.loadSession('s-free'), ownerless);
    assert.equal(await again.loadSession('s-none'), undefined);
    assert.deepEqual(
      (await again.listSessions!({ owner: ALICE, limit: 10 })).map((row) => row.id),
      ['s-owned'],
    );
  });

  test(`${name} (store contract): each assistant entry keeps the usage of its model turn, tool calls and all, also in a new instance`, async (t) => {
    const { store, reopen } = await open(t);
    const record = sessionRecord('s-usage', {
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'c1', name: 'weather', arguments: { city: 'Oslo' } }],
          usage: { inputTokens: 120, outputTokens: 17 },
        },
        { role: 'tool', toolCallId: 'c1', content: '{"celsius":3}' },
        { role: 'assistant', content: 'Cold.', usage: { inputTokens: 160, outputTokens: 4 } },
      ],
    });
    await store.saveSession(record);
    for (const view of [store, await reopen()]) assert.deepEqual(await view.loadSession('s-usage'), record);
  });

  test(`${name} (store contract): sessionOwner, where present, reads the owner without the transcript: undefined for no session, null for none`, async (t) => {
    const { store, reopen } = await open(t);
    if (store.sessionOwner === undefined)
      return t.skip?.('this store has no sessionOwner: the agent loads the record to compare the owner');
    await store.saveSession(sessionRecord('o-owned', { owner: ALICE_NO_ISSUER }));
    await store.saveSession(sessionRecord('o-free'));
    await store.saveSession(sessionRecord('o-owned', { owner: ALICE_NO_ISSUER, title: 'again' }));
    for (const view of [store, await reopen()]) {
      assert.deepEqual(await view.sessionOwner!('o-owned'), ALICE_NO_ISSUER);
      assert.equal(await view.sessionOwner!('o-free'), null);
      assert.equal(await view.sessionOwner!('o-none'), undefined);
    }
    await store.deleteSession!('o-owned');
    assert.equal(await store.sessionOwner!('o-owned'), undefined);
  });

  test(`${name} (store contract): sessionBytesAtLeast, where present, never says more than the record's size (UTF-8 JSON), and undefined for no session`, async (t) => {
    const { store, reopen } = await open(t);
    if (store.sessionBytesAtLeast === undefined)
      return t.skip?.('this store has no sessionBytesAtLeast: the agent parses the record to size it');
    // ASCII, two- and three-byte characters, a surrogate pair, a lone surrogate (JSON writes \\udxxx), escapes.
    const records = [
      sessionRecord('b-ascii'),
      sessionRecord('b-wide', {
        messages: [{ role: 'user', content: 'é€😀\ud800"\\\n'.repeat(500) }],
        owner: ALICE,
        title: 'ü',
      }),
    ];
    for (const record of records) await store.saveSession(record);
    for (const view of [store, await reopen()]) {
      for (const record of records) {
        const size = new TextEncoder().encode(JSON.stringify(record)).length;
        const least = await view.sessionBytesAtLeast!(record.id);
        assert.ok(typeof least === 'number' && least > 0 && least <= size, `${record.id}: ${least} of ${size}`);
      }
      assert.equal(await view.sessionBytesAtLeast!('b-none'), undefined);
    }
    await store.deleteSession!('b-ascii');
    assert.equal(await store.sessionBytesAtLeast!('b-ascii'), undefined);
  });

  test(`${name} (store contract): listCheckpoints answers a session's own checkpoints, none of another's`, async (t) => {
    const { store, reopen } = await open(t);
    await store.saveCheckpoint(checkpoint('a1', 's1'));
    await store.saveCheckpoint(checkpoint('a2', 's1'));
    for (let i = 0; i < 20; i++) await store.saveCheckpoint(checkpoint(`x${i}`, `other-${i % 3}`));
    assert.deepEqual((await store.listCheckpoints('s1')).sort(byId), [checkpoint('a1', 's1'), checkpoint('a2', 's1')]);
    assert.deepEqual(await store.listCheckpoints('s-none'), []);
    assert.equal(await store.deleteCheckpoint('a1'), true);
    assert.deepEqual(await (await reopen()).listCheckpoints('s1'), [checkpoint('a2', 's1')]);
    assert.equal((await store.listCheckpoints('other-0')).length, 7);
  });

  test(`${name} (store contract): deleteCheckpoint answers true to exactly one of concurrent callers (decide-once)`, async (t) => {
    const { store, reopen } = await open(t);
    await store.saveCheckpoint(checkpoint('once', 's1'));
    const other = await reopen();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? store : other).deleteCheckpoint('once')),
    );
    assert.equal(results.filter(Boolean).length, 1);
    assert.equal(await store.loadCheckpoint('once'), undefined);
    assert.deepEqual(await store.listCheckpoints('s1'), []);
  });

  test(`${name} (store contract): listSessions pages through one owner's sessions, most recently updated first`, async (t) => {
    const { store } = await open(t);
    // Seven of Alice's, two at the same instant (ordered by id), and look-alike owners.
    for (const [id, second] of [
      ['a1', 1],
      ['a2', 5],
      ['a3', 3],
      ['a4', 9],
      ['a5', 7],
      ['a6', 7],
      ['a7', 2],
    ] as const) {
      await store.saveSession(sessionRecord(id, { owner: ALICE, updatedAt: at(second), createdAt: at(0) }));
    }
    await store.saveSession(sessionRecord('elsewhere', { owner: ALICE_ELSEWHERE, updatedAt: at(8) }));
    await store.saveSession(sessionRecord('no-issuer', { owner: ALICE_NO_ISSUER, updatedAt: at(8) }));
    await store.saveSession(sessionRecord('bob', { owner: BOB, updatedAt: at(8) }));
    await store.saveSession(sessionRecord('acme', { owner: ALICE_OF_ACME, updatedAt: at(8) }));
    await store.saveSession(sessionRecord('globex', { owner: ALICE_OF_GLOBEX, updatedAt: at(8) }));
    await store.saveSession(sessionRecord('nobody', { updatedAt: at(8) }));
    await store.saveCheckpoint(checkpoint('pending-a3', 'a3'));

    const order = ['a4', 'a6', 'a5', 'a2', 'a3', 'a7', 'a1'];
    const first = await store.listSessions!({ owner: ALICE, limit: 3 });
    assert.deepEqual(
      first.map((row) => row.id),
      order.slice(0, 3),
    );
    const last = first.at(-1)!;
    const second = await store.listSessions!({
      owner: ALICE,
      limit: 3,
      after: { updatedAt: last.updatedAt, id: last.id },
    });
    assert.deepEqual(
      second.map((row) => row.id),
      order.slice(3, 6),
    );
    const rest = await store.listSessions!({
      owner: ALICE,
      limit: 3,
      after: { updatedAt: second.at(-1)!.updatedAt, id: second.at(-1)!.id },
    });
    assert.deepEqual(
      rest.map((row) => row.id),
      order.slice(6),
    );
    const all = await store.listSessions!({ owner: ALICE, limit: 100 });
    assert.deepEqual(
      all.map((row) => row.id),
      order,
    );
    assert.deepEqual(
      all.find((row) => row.id === 'a3'),
      { id: 'a3', createdAt: at(0), updatedAt: at(3), title: 'first message of a3', pendingApprovals: 1 },
    );
    assert.equal(all.filter((row) => row.pendingApprovals !== 0).length, 1);

    assert.deepEqual(
      (await store.listSessions!({ owner: ALICE_ELSEWHERE, limit: 10 })).map((row) => row.id),
      ['elsewhere'],
    );
    assert.deepEqual(
      (await store.listSessions!({ owner: ALICE_NO_ISSUER, limit: 10 })).map((row) => row.id),
      ['no-issuer'],
    );
    assert.deepEqual(
      (await store.listSessions!({ owner: BOB, limit: 10 })).map((row) => row.id),
      ['bob'],
    );
    assert.deepEqual(await store.listSessions!({ owner: ['jwt', null, 'nobody'], limit: 10 }), []);
    // The same sub of one issuer in two tenants: each tenant's alice lists her own session only.
    assert.deepEqual(
      (await store.listSessions!({ owner: ALICE_OF_ACME, limit: 10 })).map((row) => row.id),
      ['acme'],
    );
    assert.deepEqual(
      (await store.listSessions!({ owner: ALICE_OF_GLOBEX, limit: 10 })).map((row) => row.id),
      ['globex'],
    );
    if (store.sessionOwner) assert.deepEqual(await store.sessionOwner('acme'), ALICE_OF_ACME);
  });

  test(`${name} (store contract): a saved session moves to the top of its owner's list; the stored title wins over the messages`, async (t) => {
    const { store } = await open(t);
    await store.saveSession(sessionRecord('old', { owner: BOB, updatedAt: at(1), title: 'kept title' }));
    await store.saveSession(sessionRecord('new', { owner: BOB, updatedAt: at(2) }));
    await store.saveSession(sessionRecord('old', { owner: BOB, updatedAt: at(3), title: 'kept title', messages: [] }));
    const rows = await store.listSessions!({ owner: BOB, limit: 10 });
    assert.deepEqual(
      rows.map((row) => [row.id, row.title]),
      [
        ['old', 'kept title'],
        ['new', 'first message of new'],
      ],
    );
  });

  test(`${name} (store contract): deleteSession removes the session and its checkpoints, and nothing of another session`, async (t) => {
    const { store, reopen } = await open(t);
    await store.saveSession(sessionRecord('doomed', { owner: ALICE }));
    await store.saveSession(sessionRecord('kept', { owner: ALICE }));
    await store.saveCheckpoint(checkpoint('d1', 'doomed'));
    await store.saveCheckpoint(checkpoint('k1', 'kept'));
    await store.appendMemory('ns', 'a note');
    assert.equal(await store.deleteSession!('doomed'), true);
    const again = await reopen();
    for (const view of [store, again]) {
      assert.equal(await view.loadSession('doomed'), undefined);
      assert.equal(await view.loadCheckpoint('d1'), undefined);
      assert.deepEqual(await view.listCheckpoints('doomed'), []);
      assert.equal(await view.deleteCheckpoint('d1'), false);
      assert.deepEqual(
        (await view.listSessions!({ owner: ALICE, limit: 10 })).map((row) => row.id),
        ['kept'],
      );
      assert.deepEqual(await view.listCheckpoints('kept'), [checkpoint('k1', 'kept')]);
      assert.deepEqual(await view.loadMemory('ns'), ['a note']);
    }
    assert.equal(await store.deleteSession!('doomed'), false);
    assert.equal(await store.deleteSession!('never-existed'), false);
  });

  test(`${name} (store contract): countCheckpoints counts one owner's pending checkpoints over all its sessions`, async (t) => {
    const { store, reopen } = await open(t);
    const owned = (approvalId: string, sessionId: string, owner: OwnerKey): Checkpoint => ({
      ...checkpoint(approvalId, sessionId),
      owner,
    });
    await store.saveCheckpoint(owned('c1', 's1', ALICE));
    await store.saveCheckpoint(owned('c2', 's2', ALICE));
    await store.saveCheckpoint(owned('c3', 's3', ALICE_ELSEWHERE));
    await store.saveCheckpoint(owned('c4', 's3', ALICE_NO_ISSUER));
    await store.saveCheckpoint(checkpoint('c5', 's4'));
    await store.saveCheckpoint(owned('c6', 's5', ALICE_OF_ACME));
    assert.equal(await store.countCheckpoints!(ALICE_OF_ACME), 1);
    assert.equal(await store.countCheckpoints!(ALICE_OF_GLOBEX), 0);
    assert.equal(await store.countCheckpoints!(ALICE), 2);
    assert.equal(await store.countCheckpoints!(ALICE_ELSEWHERE), 1);
    assert.equal(await store.countCheckpoints!(ALICE_NO_ISSUER), 1);
    assert.equal(await store.countCheckpoints!(BOB), 0);
    await store.deleteCheckpoint('c1');
    await store.saveSession(sessionRecord('s3', { owner: ALICE_ELSEWHERE }));
    await store.deleteSession!('s3');
    const again = await reopen();
    for (const view of [store, again]) {
      assert.equal(await view.countCheckpoints!(ALICE), 1);
      assert.equal(await view.countCheckpoints!(ALICE_ELSEWHERE), 0);
      assert.equal(await view.countCheckpoints!(ALICE_NO_ISSUER), 0);
    }
  });

  test(`${name} (store contract): listPendingApprovals pages through pending approvals across sessions, oldest first, an owner's alone when asked`, async (t) => {
    const { store, reopen } = await open(t);
    if (store.listPendingApprovals === undefined) return;
    const pending = (approvalId: string, sessionId: string, second: number, owner?: OwnerKey): Checkpoint => ({
      ...checkpoint(approvalId, sessionId),
      createdAt: at(second),
      ...(owner !== undefined && { owner }),
    });
    // Saved out of order (ties in the same instant go in an order of the store's own, which its cursor follows).
    await store.saveCheckpoint(pending('q3', 's2', 5, BOB));
    await store.saveCheckpoint(pending('q1', 's1', 1, ALICE));
    await store.saveCheckpoint(pending('q2b', 's3', 3, ALICE));
    await store.saveCheckpoint(pending('q2a', 's1', 2));
    await store.saveCheckpoint(pending('q4', 's4', 4, ALICE));
    await store.deleteCheckpoint('q4');
    const ids = (rows: Checkpoint[]) => rows.map((row) => row.approvalId);
    for (const view of [store, await reopen()]) {
      assert.deepEqual(ids(await view.listPendingApprovals!({ limit: 10 })), ['q1', 'q2a', 'q2b', 'q3']);
      const first = await view.listPendingApprovals!({ limit: 2 });
      assert.deepEqual(ids(first), ['q1', 'q2a']);
      const last = first.at(-1)!;
      const rest = await view.listPendingApprovals!({
        limit: 2,
        after: { createdAt: String(last.createdAt), approvalId: last.approvalId },
      });
      assert.deepEqual(ids(rest), ['q2b', 'q3']);
      assert.deepEqual(ids(await view.listPendingApprovals!({ limit: 10, owner: ALICE })), ['q1', 'q2b']);
      assert.deepEqual(ids(await view.listPendingApprovals!({ limit: 10, owner: ALICE_ELSEWHERE })), []);
    }
  });

  test(`${name} (store contract): withSession runs the turns of one session one after another, other sessions alongside`, async (t) => {
    const { store } = await open(t);
    if (typeof store.withSession !== 'function') return;
    const log: string[] = [];
    const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
    const step = (session: string, n: number) =>
      store.withSession!(session, async (turnStore) => {
        log.push(`${session}${n}:in`);
        const record = (await turnStore.loadSession(session)) ?? sessionRecord(session, { messages: [] });
        await pause();
        record.messages.push({ role: 'user', content: String(n) });
        await turnStore.saveSession(record);
        log.push(`${session}${n}:out`);
        return n;
      });
    const results = await Promise.all([step('s', 1), step('s', 2), step('s', 3), step('t', 1)]);
    assert.deepEqual(results, [1, 2, 3, 1]);
    assert.deepEqual(
      (await store.loadSession('s'))!.messages.map((m) => m.content),
      ['1', '2', '3'],
    );
    const ofS = log.filter((entry) => entry.startsWith('s'));
    assert.deepEqual(ofS, ['s1:in', 's1:out', 's2:in', 's2:out', 's3:in', 's3:out']);
    assert.ok(log.indexOf('t1:in') < log.indexOf('s1:out'), 'another session does not wait');
    await assert.rejects(
      store.withSession!('s', async () => {
        throw new Error('turn failed');
      }),
      /turn failed/,
    );
    assert.equal(await store.withSession!('s', async () => 'next turn runs'), 'next turn runs');
  });
}
