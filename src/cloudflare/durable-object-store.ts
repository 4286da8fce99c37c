// A Store on a Durable Object's storage, bundled into the cloudflare-worker target's worker.js:
// web-standard globals only (no node: import), like src/agent.
import { AuthConfigError, kindOf } from '../auth/internal.ts';
import { keyedQueue } from '../agent/key-queue.ts';
import { refuseOptions } from '../agent/options.ts';
import { pageOf, pendingPage, summaryOf } from '../agent/sessions.ts';
import type { Checkpoint, OwnerKey, SessionRecord, Store } from '../agent/types.ts';

/** The part of `DurableObjectStorage` (`ctx.storage` of a Durable Object) this store uses. */
export interface DurableObjectStorageLike {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  list(options: { prefix: string }): Promise<Map<string, unknown>>;
}

/**
 * UTF-16 units per stored chunk: at most 96 KiB of UTF-8, under the 128 KiB value limit of
 * key-value Durable Objects (SQLite-backed ones allow 2 MB), so a transcript of any length fits.
 */
export const CHUNK_UNITS = 32 * 1024;

/**
 * A `Store` on Durable Object storage (`ctx.storage`), for the cloudflare-worker target, where
 * each session lives in its own Durable Object. Records are JSON text, split into chunks of
 * `CHUNK_UNITS`; the writes of one call are issued without an `await` between them, so the
 * Durable Object commits them together (its automatic write coalescing): a reader never sees
 * half a record. Checkpoints are indexed by session and by owner, sessions by owner, each
 * index a key prefix listed on its own (no scan of other records). `withSession` runs the
 * turns of a session one after another within the Durable Object, which is the only instance
 * of its session anywhere. It takes no options: given any, or a `storage` without those methods,
 * it throws `AuthConfigError`.
 * @example
 * export class Session { constructor(ctx) { this.store = durableObjectStore(ctx.storage); } }
 */
export function durableObjectStore(
  storage: DurableObjectStorageLike,
  options?: Readonly<Record<string, never>>,
): Store {
  const helper = 'durableObjectStore()';
  if (!(['get', 'put', 'delete', 'list'] as const).every((name) => typeof storage?.[name] === 'function'))
    throw new AuthConfigError(
      `${helper}: storage must be a Durable Object's storage (ctx.storage); got ${kindOf(storage)}`,
    );
  refuseOptions(helper, options);
  // `"<id>"` as JSON: a prefix ending in `":` cannot be the start of another id's key.
  const quoted = (text: string) => JSON.stringify(text);
  const sessionKey = (id: string) => `session:${quoted(id)}`;
  const checkpointKey = (approvalId: string) => `checkpoint:${quoted(approvalId)}`;
  const memoryKey = (namespace: string) => `memory:${quoted(namespace)}`;
  const bySession = (sessionId: string) => `checkpoints-of:${quoted(sessionId)}:`;
  const ownerText = (owner: unknown) => (Array.isArray(owner) ? JSON.stringify(owner) : undefined);
  const pendingOf = (owner: string) => `pending-of:${owner}:`;
  /** Every pending checkpoint by approval id, its `createdAt` the value: the queue's index (design §33). */
  const ALL_PENDING = 'pending:';
  const sessionsOf = (owner: string) => `sessions-of:${owner}:`;

  /** The head of a value: its number of chunks; chunk `n` is under `<key>#<n>`. */
  async function read<T>(key: string): Promise<T | undefined> {
    const count = await storage.get(key);
    if (typeof count !== 'number') return undefined;
    const chunks = await Promise.all(Array.from({ length: count }, (_, n) => storage.get(`${key}#${n}`)));
    return JSON.parse(chunks.join('')) as T;
  }

  /** The writes of a value (and the removal of chunks an older, longer value left), issued together. */
  function writes(key: string, value: unknown, oldCount: unknown): Promise<unknown>[] {
    const text = JSON.stringify(value);
    const count = Math.max(1, Math.ceil(text.length / CHUNK_UNITS));
    const pending: Promise<unknown>[] = [];
    for (let n = 0; n < count; n++)
      pending.push(storage.put(`${key}#${n}`, text.slice(n * CHUNK_UNITS, (n + 1) * CHUNK_UNITS)));
    for (let n = count; n < (typeof oldCount === 'number' ? oldCount : 0); n++)
      pending.push(storage.delete(`${key}#${n}`));
    pending.push(storage.put(key, count));
    return pending;
  }

  function removals(key: string, oldCount: unknown): Promise<unknown>[] {
    const pending: Promise<unknown>[] = [storage.delete(key)];
    for (let n = 0; n < (typeof oldCount === 'number' ? oldCount : 0); n++) pending.push(storage.delete(`${key}#${n}`));
    return pending;
  }

  const idsUnder = async (prefix: string) =>
    [...(await storage.list({ prefix })).keys()].map((key) => JSON.parse(key.slice(prefix.length)) as string);

  /**
   * Removes a checkpoint with its index entries; true only for the caller whose removal of its
   * head found it (storage deletes are atomic and ordered): decide-once, even across instances.
   */
  async function forgetCheckpoint(approvalId: string): Promise<boolean> {
    const key = checkpointKey(approvalId);
    const [checkpoint, count] = await Promise.all([read<Checkpoint>(key), storage.get(key)]);
    if (checkpoint === undefined) return false;
    const owner = ownerText(checkpoint.owner);
    const pending = [...removals(key, count), storage.delete(bySession(checkpoint.sessionId) + quoted(approvalId))];
    if (owner !== undefined) pending.push(storage.delete(pendingOf(owner) + quoted(approvalId)));
    pending.push(storage.delete(ALL_PENDING + quoted(approvalId)));
    const [removed] = await Promise.all(pending);
    return removed === true;
  }

  const exclusive = keyedQueue();
  const store: Store = {
    loadSession: (id) => read<SessionRecord>(sessionKey(id)),
    async saveSession(record) {
      const key = sessionKey(record.id);
      const [previous, count] = await Promise.all([read<SessionRecord>(key), storage.get(key)]);
      const before = ownerText(previous?.owner);
      const owner = ownerText(record.owner);
      const pending = writes(key, record, count);
      if (before !== undefined && before !== owner)
        pending.push(storage.delete(sessionsOf(before) + quoted(record.id)));
      if (owner !== undefined) pending.push(storage.put(sessionsOf(owner) + quoted(record.id), ''));
      await Promise.all(pending);
    },
    loadCheckpoint: (approvalId) => read<Checkpoint>(checkpointKey(approvalId)),
    async saveCheckpoint(checkpoint) {
      await forgetCheckpoint(checkpoint.approvalId);
      const owner = ownerText(checkpoint.owner);
      const pending = writes(checkpointKey(checkpoint.approvalId), checkpoint, undefined);
      pending.push(storage.put(bySession(checkpoint.sessionId) + quoted(checkpoint.approvalId), ''));
      // The index entries hold the checkpoint's createdAt: the queue orders by it without reading a checkpoint.
      const createdAt = checkpoint.createdAt ?? '';
      if (owner !== undefined) pending.push(storage.put(pendingOf(owner) + quoted(checkpoint.approvalId), createdAt));
      pending.push(storage.put(ALL_PENDING + quoted(checkpoint.approvalId), createdAt));
      await Promise.all(pending);
    },
    async listPendingApprovals(query) {
      const prefix = query.owner === undefined ? ALL_PENDING : pendingOf(JSON.stringify(query.owner));
      const entries = [...(await storage.list({ prefix })).entries()].map(([key, createdAt]) => ({
        approvalId: JSON.parse(key.slice(prefix.length)) as string,
        createdAt: typeof createdAt === 'string' ? createdAt : '',
      }));
      const page = pendingPage(entries, query);
      return (await Promise.all(page.map(({ approvalId }) => read<Checkpoint>(checkpointKey(approvalId))))).flatMap(
        (checkpoint) => checkpoint ?? [],
      );
    },
    deleteCheckpoint: (approvalId) => forgetCheckpoint(approvalId),
    async listCheckpoints(sessionId) {
      const ids = await idsUnder(bySession(sessionId));
      return (await Promise.all(ids.map((approvalId) => read<Checkpoint>(checkpointKey(approvalId))))).flatMap(
        (checkpoint) => checkpoint ?? [],
      );
    },
    async countCheckpoints(owner: OwnerKey) {
      return (await storage.list({ prefix: pendingOf(JSON.stringify(owner)) })).size;
    },
    async loadMemory(namespace) {
      return (await read<string[]>(memoryKey(namespace))) ?? [];
    },
    async appendMemory(namespace, note) {
      const key = memoryKey(namespace);
      const [notes = [], count] = await Promise.all([read<string[]>(key), storage.get(key)]);
      await Promise.all(writes(key, [...notes, note], count));
    },
    async listSessions(query) {
      const ids = await idsUnder(sessionsOf(JSON.stringify(query.owner)));
      const records = (await Promise.all(ids.map((id) => read<SessionRecord>(sessionKey(id))))).flatMap(
        (record) => record ?? [],
      );
      const page = pageOf(records, query);
      return Promise.all(
        page.map(async (record) => summaryOf(record, (await storage.list({ prefix: bySession(record.id) })).size)),
      );
    },
    async deleteSession(id) {
      const key = sessionKey(id);
      const [record, count, approvalIds] = await Promise.all([
        read<SessionRecord>(key),
        storage.get(key),
        idsUnder(bySession(id)),
      ]);
      let removed = record !== undefined;
      for (const approvalId of approvalIds) removed = (await forgetCheckpoint(approvalId)) || removed;
      const owner = ownerText(record?.owner);
      const pending = removals(key, count);
      if (owner !== undefined) pending.push(storage.delete(sessionsOf(owner) + quoted(id)));
      await Promise.all(pending);
      return removed;
    },
    withSession: (sessionId, turn) => exclusive(sessionId, () => turn(store)),
  };
  return store;
}
