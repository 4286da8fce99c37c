import { createHash, randomBytes } from 'node:crypto';
import { keyedQueue } from '../agent/key-queue.ts';
import { refuseOptions } from '../agent/options.ts';
import { AuthConfigError, kindOf } from '../auth/internal.ts';
import { access, mkdir, open, readdir, readFile, rename, rmdir, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pageOf, pendingPage, sessionTitle } from '../agent/sessions.ts';
import type { Checkpoint, OwnerKey, SessionRecord, SessionSummary, Store } from '../agent/types.ts';

type Kind =
  | 'sessions'
  | 'checkpoints'
  | 'memory'
  | 'session-checkpoints'
  | 'owner-checkpoints'
  | 'owners'
  | 'session-owners';
const KINDS: readonly Kind[] = [
  'sessions',
  'checkpoints',
  'memory',
  'session-checkpoints',
  'owner-checkpoints',
  'owners',
  'session-owners',
];
/** Written once the checkpoints of a folder made before the indexes are indexed. */
const INDEX_MARK = 'index-v1';

interface MemoryFile {
  namespace: string;
  notes: string[];
}
/** `session-owners/<session>.json`: the owner a session was made with (`null`: none), read without the transcript. */
interface SessionOwnerFile {
  owner: OwnerKey | null;
}
/** An entry of `session-checkpoints/<session>/`: names its checkpoint. */
interface CheckpointEntry {
  approvalId: string;
}
/** An entry of `owners/<owner>/`: what listing the owner's sessions needs, without reading transcripts. */
type OwnerEntry = Omit<SessionSummary, 'pendingApprovals'>;

/**
 * A durable `Store` on the file system: one JSON file per session, checkpoint and memory
 * namespace under `dir` (`sessions/`, `checkpoints/`, `memory/`), and four indexes: each
 * session's checkpoints (`session-checkpoints/<session>/`), each owner's pending checkpoints
 * (`owner-checkpoints/<owner>/`), each owner's sessions (`owners/<owner>/`) and each session's
 * owner (`session-owners/`: read before the transcript), so no call reads other sessions' files. File names are the SHA-256 of
 * the id in hex, so no id can reach outside `dir` and names never collide on case-insensitive
 * file systems. Every write goes to a temporary file in the same folder, is fsynced, renamed
 * over the record, and the folder is fsynced: a crash leaves either the old record or the new
 * one, never a partial file. Writes to one record are serialized, and so are the turns of one
 * session (`withSession`) within this process; several processes on one folder are not
 * serialized (use the PostgreSQL store for that). A folder written before the indexes existed
 * is indexed once, at first use. `dir` is a path (relative to the working directory) or a
 * `file:` URL: `new URL('.data', import.meta.url)` is the folder beside the module that says it,
 * wherever the process starts. Anything else, or any options given (it takes none), throws
 * `AuthConfigError`.
 * @example
 * const agent = createAgent({ name: 'demo', model: echoModel(), store: fileStore(new URL('.data', import.meta.url)) });
 */
export function fileStore(dir: string | URL, options?: Readonly<Record<string, never>>): Store {
  if (dir instanceof URL && dir.protocol !== 'file:')
    throw new AuthConfigError(`fileStore(): dir as a URL must be a file: URL; got a ${dir.protocol} URL`);
  if (!(dir instanceof URL) && (typeof dir !== 'string' || dir === ''))
    throw new AuthConfigError(
      `fileStore(): dir must be the path of a folder (a non-empty string, or a file: URL); got ${kindOf(dir)}`,
    );
  refuseOptions('fileStore()', options);
  const root = dir instanceof URL ? fileURLToPath(dir) : resolve(dir);
  let ready: Promise<void> | undefined;
  const ensureDirs = () =>
    (ready ??= (async () => {
      await Promise.all(KINDS.map((kind) => mkdir(join(root, kind), { recursive: true, mode: 0o700 })));
      await indexLegacyCheckpoints();
    })().catch((error: unknown) => {
      ready = undefined;
      throw error;
    }));

  const hash = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');
  const pathOf = (kind: 'sessions' | 'checkpoints' | 'memory' | 'session-owners', key: string) =>
    join(root, kind, `${hash(key)}.json`);
  const checkpointsOf = (sessionId: string) => join(root, 'session-checkpoints', hash(sessionId));
  const entryOf = (sessionId: string, approvalId: string) => join(checkpointsOf(sessionId), `${hash(approvalId)}.json`);
  const pendingOf = (owner: readonly unknown[]) => join(root, 'owner-checkpoints', hash(JSON.stringify(owner)));
  const pendingEntryOf = (owner: readonly unknown[], approvalId: string) =>
    join(pendingOf(owner), `${hash(approvalId)}.json`);
  const sessionsOf = (owner: readonly unknown[]) => join(root, 'owners', hash(JSON.stringify(owner)));
  const ownerEntryOf = (owner: readonly unknown[], sessionId: string) =>
    join(sessionsOf(owner), `${hash(sessionId)}.json`);

  // One promise chain per record: each mutation starts after the previous one settled.
  const serialized = keyedQueue();
  const turns = keyedQueue();

  async function read<T>(path: string): Promise<T | undefined> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    return JSON.parse(text) as T;
  }

  async function names(folder: string): Promise<string[]> {
    try {
      return (await readdir(folder)).filter((name) => name.endsWith('.json')).sort();
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  }

  async function write(path: string, value: unknown, nested = false): Promise<void> {
    await ensureDirs();
    await writeFileDurably(path, value, nested);
  }

  /** Removes a file; `true` when it was there. */
  async function remove(path: string): Promise<boolean> {
    try {
      await unlink(path);
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    await syncDirectory(dirname(path));
    return true;
  }

  async function indexLegacyCheckpoints(): Promise<void> {
    if ((await read(join(root, INDEX_MARK))) !== undefined) return;
    for (const name of await names(join(root, 'checkpoints'))) {
      const checkpoint = await read<Checkpoint>(join(root, 'checkpoints', name));
      if (checkpoint !== undefined) await writeEntry(checkpoint);
    }
    await writeFileDurably(join(root, INDEX_MARK), { indexed: true });
  }

  // Index entries are written before the checkpoint, so a crash between them leaves an entry
  // that names nothing (skipped), never a checkpoint that an index cannot find.
  async function writeEntry(checkpoint: Checkpoint): Promise<void> {
    const entry: CheckpointEntry = { approvalId: checkpoint.approvalId };
    await writeFileDurably(entryOf(checkpoint.sessionId, checkpoint.approvalId), entry, true);
    if (Array.isArray(checkpoint.owner))
      await writeFileDurably(pendingEntryOf(checkpoint.owner, checkpoint.approvalId), entry, true);
  }
  /** The write itself (usable while `ensureDirs` runs): a temporary file, fsynced, renamed over `path`, the folder fsynced. */
  async function writeFileDurably(path: string, value: unknown, nested = false): Promise<void> {
    if (nested) await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const temporary = `${path}.${randomBytes(8).toString('hex')}.tmp`;
    const file = await open(temporary, 'wx', 0o600);
    try {
      await file.writeFile(JSON.stringify(value), 'utf8');
      await file.sync();
    } catch (error) {
      await file.close();
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
    await file.close();
    await rename(temporary, path);
    await syncDirectory(dirname(path));
  }

  async function listCheckpoints(sessionId: string): Promise<Checkpoint[]> {
    await ensureDirs();
    const found: Checkpoint[] = [];
    for (const name of await names(checkpointsOf(sessionId))) {
      const entry = await read<CheckpointEntry>(join(checkpointsOf(sessionId), name));
      const checkpoint =
        entry === undefined ? undefined : await read<Checkpoint>(pathOf('checkpoints', entry.approvalId));
      if (checkpoint?.sessionId === sessionId) found.push(checkpoint);
    }
    return found;
  }

  async function dropCheckpoint(approvalId: string): Promise<boolean> {
    const path = pathOf('checkpoints', approvalId);
    const checkpoint = await read<Checkpoint>(path);
    // unlink succeeds for exactly one caller, also across processes sharing the folder.
    const removed = await remove(path);
    if (removed && checkpoint !== undefined) {
      await remove(entryOf(checkpoint.sessionId, approvalId));
      if (Array.isArray(checkpoint.owner)) await remove(pendingEntryOf(checkpoint.owner, approvalId));
    }
    return removed;
  }

  const store: Store = {
    loadSession: (id) => read<SessionRecord>(pathOf('sessions', id)),
    // The file is the record's JSON in UTF-8: its size is the size exactly.
    async sessionBytesAtLeast(id) {
      try {
        return (await stat(pathOf('sessions', id))).size;
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
    },
    async sessionOwner(id) {
      const known = await read<SessionOwnerFile>(pathOf('session-owners', id));
      if (known !== undefined) return known.owner;
      // A session saved before owner files existed: read once, then its owner file is written.
      const record = await read<SessionRecord>(pathOf('sessions', id));
      if (record === undefined) return undefined;
      const owner = Array.isArray(record.owner) ? record.owner : null;
      await serialized(pathOf('sessions', id), () =>
        write(pathOf('session-owners', id), { owner } satisfies SessionOwnerFile),
      );
      return owner;
    },
    saveSession(record) {
      const path = pathOf('sessions', record.id);
      return serialized(path, async () => {
        // The owner's file before the session's, so a session never lacks it; rewritten only when the owner changes.
        const ownerFile = pathOf('session-owners', record.id);
        const owner = Array.isArray(record.owner) ? record.owner : null;
        const known = await read<SessionOwnerFile>(ownerFile);
        if (known === undefined || JSON.stringify(known.owner) !== JSON.stringify(owner))
          await write(ownerFile, { owner } satisfies SessionOwnerFile);
        await write(path, record);
        if (!Array.isArray(record.owner)) return;
        const { id, createdAt, updatedAt } = record;
        const entry: OwnerEntry = { id, createdAt, updatedAt, title: record.title ?? sessionTitle(record.messages) };
        await write(ownerEntryOf(record.owner, id), entry, true);
      });
    },

    loadCheckpoint: (approvalId) => read<Checkpoint>(pathOf('checkpoints', approvalId)),
    saveCheckpoint(checkpoint) {
      const path = pathOf('checkpoints', checkpoint.approvalId);
      return serialized(path, async () => {
        await ensureDirs();
        await writeEntry(checkpoint);
        await write(path, checkpoint);
      });
    },
    deleteCheckpoint(approvalId) {
      return serialized(pathOf('checkpoints', approvalId), () => dropCheckpoint(approvalId));
    },
    listCheckpoints,
    // The checkpoints folder holds the pending approvals only (an owner's: its pending index): read, ordered, paged.
    async listPendingApprovals(query) {
      await ensureDirs();
      const found: Checkpoint[] = [];
      if (query.owner === undefined) {
        for (const name of await names(join(root, 'checkpoints'))) {
          const checkpoint = await read<Checkpoint>(join(root, 'checkpoints', name));
          if (checkpoint !== undefined) found.push(checkpoint);
        }
      } else {
        for (const name of await names(pendingOf(query.owner))) {
          const entry = await read<CheckpointEntry>(join(pendingOf(query.owner), name));
          const checkpoint =
            entry === undefined ? undefined : await read<Checkpoint>(pathOf('checkpoints', entry.approvalId));
          if (checkpoint !== undefined) found.push(checkpoint);
        }
      }
      return pendingPage(found, query);
    },
    async countCheckpoints(owner) {
      let count = 0;
      for (const name of await names(pendingOf(owner))) {
        const entry = await read<CheckpointEntry>(join(pendingOf(owner), name));
        if (entry !== undefined && (await exists(pathOf('checkpoints', entry.approvalId)))) count++;
      }
      return count;
    },

    async loadMemory(namespace) {
      const file = await read<MemoryFile>(pathOf('memory', namespace));
      return file ? [...file.notes] : [];
    },
    appendMemory(namespace, note) {
      const path = pathOf('memory', namespace);
      return serialized(path, async () => {
        const notes = (await read<MemoryFile>(path))?.notes ?? [];
        await write(path, { namespace, notes: [...notes, note] } satisfies MemoryFile);
      });
    },

    async listSessions(query) {
      const folder = sessionsOf(query.owner);
      const entries: OwnerEntry[] = [];
      for (const name of await names(folder)) {
        const entry = await read<OwnerEntry>(join(folder, name));
        if (entry !== undefined) entries.push(entry);
      }
      const page: SessionSummary[] = [];
      for (const entry of pageOf(entries, query))
        page.push({ ...entry, pendingApprovals: (await listCheckpoints(entry.id)).length });
      return page;
    },
    deleteSession(id) {
      const path = pathOf('sessions', id);
      return serialized(path, async () => {
        await ensureDirs();
        const record = await read<SessionRecord>(path);
        // The owner's entry first, the session file last: a crash midway never lists a session that is gone.
        if (Array.isArray(record?.owner)) await remove(ownerEntryOf(record.owner, id));
        let removed = false;
        for (const checkpoint of await listCheckpoints(id)) {
          removed =
            (await serialized(pathOf('checkpoints', checkpoint.approvalId), () =>
              dropCheckpoint(checkpoint.approvalId),
            )) || removed;
        }
        await rmdir(checkpointsOf(id)).catch(() => undefined);
        removed = (await remove(path)) || removed;
        await remove(pathOf('session-owners', id));
        return removed;
      });
    },
    withSession: (sessionId, turn) => turns(sessionId, () => turn(store)),
  };
  return store;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}

/** Makes a rename or unlink in `dir` durable. Windows cannot open a folder for fsync. */
async function syncDirectory(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
