import { createHash, randomBytes } from 'node:crypto';
import { keyedQueue } from '../agent/key-queue.ts';
import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Checkpoint, SessionRecord, Store } from '../agent/types.ts';

type Kind = 'sessions' | 'checkpoints' | 'memory';

interface MemoryFile { namespace: string; notes: string[] }

/**
 * A durable `Store` on the file system: one JSON file per session, checkpoint and memory
 * namespace under `dir` (`sessions/`, `checkpoints/`, `memory/`). File names are the SHA-256
 * of the id in hex, so no id can reach outside `dir` and names never collide on
 * case-insensitive file systems. Every write goes to a temporary file in the same folder,
 * is fsynced, renamed over the record, and the folder is fsynced: a crash leaves either the
 * old record or the new one, never a partial file. Writes to one record are serialized.
 * @example
 * const agent = createAgent({ name: 'demo', model: echoModel(), store: fileStore('./.data') });
 */
export function fileStore(dir: string): Store {
  const root = resolve(dir);
  let ready: Promise<void> | undefined;
  const ensureDirs = () =>
    (ready ??= Promise.all((['sessions', 'checkpoints', 'memory'] as const).map((kind) => mkdir(join(root, kind), { recursive: true, mode: 0o700 }))).then(
      () => undefined,
      (error: unknown) => {
        ready = undefined;
        throw error;
      },
    ));

  const pathOf = (kind: Kind, key: string) => join(root, kind, `${createHash('sha256').update(key, 'utf8').digest('hex')}.json`);

  // One promise chain per record: each mutation starts after the previous one settled.
  const serialized = keyedQueue();

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

  async function write(kind: Kind, path: string, value: unknown): Promise<void> {
    await ensureDirs();
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
    await syncDirectory(join(root, kind));
  }

  return {
    loadSession: (id) => read<SessionRecord>(pathOf('sessions', id)),
    saveSession(record) {
      const path = pathOf('sessions', record.id);
      return serialized(path, () => write('sessions', path, record));
    },

    loadCheckpoint: (approvalId) => read<Checkpoint>(pathOf('checkpoints', approvalId)),
    saveCheckpoint(checkpoint) {
      const path = pathOf('checkpoints', checkpoint.approvalId);
      return serialized(path, () => write('checkpoints', path, checkpoint));
    },
    deleteCheckpoint(approvalId) {
      const path = pathOf('checkpoints', approvalId);
      // unlink succeeds for exactly one caller, also across processes sharing the folder.
      return serialized(path, async () => {
        try {
          await unlink(path);
        } catch (error) {
          if (isMissing(error)) return false;
          throw error;
        }
        await syncDirectory(join(root, 'checkpoints'));
        return true;
      });
    },
    async listCheckpoints(sessionId) {
      let names: string[];
      try {
        names = await readdir(join(root, 'checkpoints'));
      } catch (error) {
        if (isMissing(error)) return [];
        throw error;
      }
      const found: Checkpoint[] = [];
      for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
        const checkpoint = await read<Checkpoint>(join(root, 'checkpoints', name));
        if (checkpoint?.sessionId === sessionId) found.push(checkpoint);
      }
      return found;
    },

    async loadMemory(namespace) {
      const file = await read<MemoryFile>(pathOf('memory', namespace));
      return file ? [...file.notes] : [];
    },
    appendMemory(namespace, note) {
      const path = pathOf('memory', namespace);
      return serialized(path, async () => {
        const notes = (await read<MemoryFile>(path))?.notes ?? [];
        await write('memory', path, { namespace, notes: [...notes, note] } satisfies MemoryFile);
      });
    },
  };
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
