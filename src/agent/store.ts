import { checkOptionNames } from '../auth/internal.ts';
import { configError } from './errors.ts';
import { keyedQueue } from './key-queue.ts';
import { pageOf, pendingPage, summaryOf } from './sessions.ts';
import type { Checkpoint, OwnerKey, SessionRecord, Store } from './types.ts';

export interface MemoryStoreOptions {
  /** Most sessions kept; past it the least recently updated session is dropped, with its checkpoints. Default 1,000. */
  maxSessions?: number;
  /** Milliseconds a session is kept after its last update, then dropped with its checkpoints. Default 24 hours. */
  ttl?: number;
  /** The map the records live in (JSON text), to hand the contents to a later instance, as a restart would. */
  data?: Map<string, string>;
}

/** The defaults of `memoryStore()`'s options. */
export const MEMORY_STORE_DEFAULTS: Readonly<{ maxSessions: number; ttl: number }> = Object.freeze({
  maxSessions: 1000,
  ttl: 24 * 60 * 60 * 1000,
});

/**
 * An in-memory `Store`, for development and tests: everything is lost when the process ends,
 * and to bound memory it keeps at most `maxSessions` sessions (default 1,000; the least
 * recently updated goes first) for at most `ttl` ms after their last update (default 24 h);
 * a dropped session's checkpoints (pending approvals) go with it. Memory notes are kept.
 * Records are kept as JSON text, so what a caller loads is always a fresh copy and only
 * JSON-serializable data gets in, exactly as with a durable store. Checkpoints are indexed by
 * session and sessions by owner, so no call reads other sessions' records.
 *
 * `data` hands the contents to a later instance, as a process restarting on the same database
 * would (`new Map(JSON.parse(JSON.stringify([...data])))` round-trips it); an instance reads
 * `data` once, at its first call, so two instances must not share it at the same time.
 * A `Map` in place of the options is taken as `data`.
 * @example
 * const agent = createAgent({ name: 'demo', model: echoModel(), store: memoryStore({ maxSessions: 100, ttl: 60 * 60_000 }) });
 */
export function memoryStore(options: MemoryStoreOptions | Map<string, string> = {}): Store {
  const settings = options instanceof Map ? { data: options } : options;
  const invalid = (what: string) => configError(`memoryStore(): ${what}`);
  if (typeof settings !== 'object' || settings === null) throw invalid('options must be { maxSessions?, ttl?, data? }');
  checkOptionNames('memoryStore()', settings, ['maxSessions', 'ttl', 'data']);
  const {
    data = new Map<string, string>(),
    maxSessions = MEMORY_STORE_DEFAULTS.maxSessions,
    ttl = MEMORY_STORE_DEFAULTS.ttl,
  } = settings;
  if (!(data instanceof Map)) throw invalid('data must be a Map');
  if (!Number.isInteger(maxSessions) || maxSessions < 1) throw invalid('maxSessions must be a positive integer');
  if (typeof ttl !== 'number' || !(ttl > 0))
    throw invalid('ttl must be a positive number of milliseconds (Infinity: never)');

  const read = <T>(key: string): T | undefined => {
    const text = data.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as T);
  };
  const write = (key: string, value: unknown): void => {
    data.set(key, JSON.stringify(value));
  };
  const SESSION = 'session:';
  const CHECKPOINT = 'checkpoint:';
  const sessionKey = (id: string) => SESSION + id;
  const checkpointKey = (approvalId: string) => CHECKPOINT + approvalId;
  const memoryKey = (namespace: string) => `memory:${namespace}`;
  const ownerText = (record: { owner?: unknown } | undefined) =>
    Array.isArray(record?.owner) ? JSON.stringify(record.owner) : undefined;

  const add = (map: Map<string, Set<string>>, key: string, value: string) => {
    const set = map.get(key);
    if (set === undefined) map.set(key, new Set([value]));
    else set.add(value);
  };
  const remove = (map: Map<string, Set<string>>, key: string | undefined, value: string) => {
    const set = key === undefined ? undefined : map.get(key);
    if (set === undefined) return;
    set.delete(value);
    if (set.size === 0) map.delete(key as string);
  };

  // What this instance derives from `data` at its first call (`index()`) and keeps in step.
  /** Session id → approval ids of its checkpoints. */
  const checkpointsOf = new Map<string, Set<string>>();
  /** Owner key (JSON) → approval ids of the checkpoints it has pending. */
  const pendingOf = new Map<string, Set<string>>();
  /** Owner key (JSON) → ids of its sessions. */
  const sessionsOf = new Map<string, Set<string>>();
  /**
   * Session id → its owner key (JSON), for owned sessions: saving or dropping a session finds
   * the owner it was listed under without parsing its record (two JSON.parse of the whole record
   * per send past `maxSessions`; docs/design.md §30, "Speed tricks and what they bought").
   */
  const ownerOf = new Map<string, string>();
  /** Session id → time of its last save; iteration order is oldest first. */
  const recency = new Map<string, number>();
  let indexed = false;

  /** Builds the indexes from `data`, once: every call that reads them calls this first. */
  function index(): void {
    if (indexed) return;
    indexed = true;
    const sessions: [string, number][] = [];
    for (const [key, text] of data) {
      if (key.startsWith(CHECKPOINT)) {
        const checkpoint = JSON.parse(text) as Checkpoint;
        add(checkpointsOf, checkpoint.sessionId, checkpoint.approvalId);
        const owner = ownerText(checkpoint);
        if (owner !== undefined) add(pendingOf, owner, checkpoint.approvalId);
      } else if (key.startsWith(SESSION)) {
        const record = JSON.parse(text) as SessionRecord;
        const owner = ownerText(record);
        if (owner !== undefined) {
          add(sessionsOf, owner, record.id);
          ownerOf.set(record.id, owner);
        }
        sessions.push([record.id, Math.min(Date.parse(record.updatedAt) || Infinity, Date.now())]);
      }
    }
    for (const [id, at] of sessions.sort((a, b) => a[1] - b[1])) recency.set(id, at);
  }

  function drop(id: string): boolean {
    index();
    remove(sessionsOf, ownerOf.get(id), id);
    ownerOf.delete(id);
    recency.delete(id);
    sweepDue = -Infinity;
    let removed = data.delete(sessionKey(id));
    for (const approvalId of checkpointsOf.get(id) ?? []) removed = forgetCheckpoint(approvalId) || removed;
    checkpointsOf.delete(id);
    return removed;
  }

  function forgetCheckpoint(approvalId: string): boolean {
    const checkpoint = read<Checkpoint>(checkpointKey(approvalId));
    if (checkpoint === undefined) return false;
    index();
    remove(checkpointsOf, checkpoint.sessionId, approvalId);
    remove(pendingOf, ownerText(checkpoint), approvalId);
    return data.delete(checkpointKey(approvalId));
  }

  /**
   * When the first (least recently updated) session expires, or earlier: until then a sweep
   * within `maxSessions` has nothing to do. Lowered to -Infinity when the first session leaves
   * or moves. Reading the first entry of `recency` costs a walk over the holes its removed
   * entries leave (up to 1,000 when each send drops the oldest session): one walk per send in
   * place of three (docs/design.md §30, "Speed tricks and what they bought").
   */
  let sweepDue = -Infinity;

  /** Drops expired sessions and those past `maxSessions`, oldest first. */
  function sweep(): void {
    const now = Date.now();
    index();
    if (recency.size <= maxSessions && now < sweepDue) return;
    for (const [id, at] of recency) {
      if (recency.size <= maxSessions && now - at < ttl) {
        sweepDue = at + ttl;
        return;
      }
      drop(id);
    }
    sweepDue = Infinity;
  }

  const listIds = (sessionId: string) => {
    index();
    return [...(checkpointsOf.get(sessionId) ?? [])];
  };

  const exclusive = keyedQueue();
  const store: Store = {
    async loadSession(id) {
      sweep();
      return read<SessionRecord>(sessionKey(id));
    },
    // The JSON text's length in UTF-16 units: never more than its UTF-8 bytes.
    async sessionBytesAtLeast(id) {
      sweep();
      return data.get(sessionKey(id))?.length;
    },
    async sessionOwner(id) {
      sweep();
      if (!data.has(sessionKey(id))) return undefined;
      index();
      const owner = ownerOf.get(id);
      return owner === undefined ? null : (JSON.parse(owner) as OwnerKey);
    },
    async saveSession(record) {
      index();
      write(sessionKey(record.id), record);
      remove(sessionsOf, ownerOf.get(record.id), record.id);
      const owner = ownerText(record);
      if (owner === undefined) ownerOf.delete(record.id);
      else {
        add(sessionsOf, owner, record.id);
        ownerOf.set(record.id, owner);
      }
      const at = Date.now();
      if (recency.delete(record.id)) sweepDue = -Infinity;
      else sweepDue = Math.min(sweepDue, at + ttl);
      recency.set(record.id, at);
      sweep();
    },
    async loadCheckpoint(approvalId) {
      sweep();
      return read<Checkpoint>(checkpointKey(approvalId));
    },
    async saveCheckpoint(checkpoint) {
      forgetCheckpoint(checkpoint.approvalId);
      index();
      write(checkpointKey(checkpoint.approvalId), checkpoint);
      add(checkpointsOf, checkpoint.sessionId, checkpoint.approvalId);
      const owner = ownerText(checkpoint);
      if (owner !== undefined) add(pendingOf, owner, checkpoint.approvalId);
    },
    async deleteCheckpoint(approvalId) {
      return forgetCheckpoint(approvalId);
    },
    async countCheckpoints(owner) {
      sweep();
      return pendingOf.get(JSON.stringify(owner))?.size ?? 0;
    },
    async listCheckpoints(sessionId) {
      sweep();
      return listIds(sessionId).flatMap((approvalId) => read<Checkpoint>(checkpointKey(approvalId)) ?? []);
    },
    async listPendingApprovals(query) {
      sweep();
      const ids =
        query.owner === undefined
          ? [...checkpointsOf.values()].flatMap((set) => [...set])
          : [...(pendingOf.get(JSON.stringify(query.owner)) ?? [])];
      return pendingPage(
        ids.flatMap((approvalId) => read<Checkpoint>(checkpointKey(approvalId)) ?? []),
        query,
      );
    },
    async loadMemory(namespace) {
      return read<string[]>(memoryKey(namespace)) ?? [];
    },
    async appendMemory(namespace, note) {
      const notes = read<string[]>(memoryKey(namespace)) ?? [];
      notes.push(note);
      write(memoryKey(namespace), notes);
    },
    async listSessions(query) {
      sweep();
      const ids = sessionsOf.get(JSON.stringify(query.owner)) ?? [];
      const records = [...ids].flatMap((id) => read<SessionRecord>(sessionKey(id)) ?? []);
      return pageOf(records, query).map((record) => summaryOf(record, listIds(record.id).length));
    },
    async deleteSession(id) {
      return drop(id);
    },
    withSession: (sessionId, turn) => exclusive(sessionId, () => turn(store)),
  };
  return store;
}
