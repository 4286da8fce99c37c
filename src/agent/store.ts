import type { Checkpoint, SessionRecord, Store } from './types.ts';

/**
 * An in-memory `Store`. Records are kept as JSON text, so what a caller loads is always a
 * fresh copy (mutating it never changes the store) and only JSON-serializable data gets in,
 * exactly as with a durable store. Pass `data` to share the contents between instances, as a
 * process restarting on the same database would; `new Map(JSON.parse(JSON.stringify([...data])))`
 * round-trips it.
 * @example
 * const agent = createAgent({ name: 'demo', model: echoModel(), store: memoryStore() });
 */
export function memoryStore(data: Map<string, string> = new Map()): Store {
  const read = <T>(key: string): T | undefined => {
    const text = data.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as T);
  };
  const write = (key: string, value: unknown): void => {
    data.set(key, JSON.stringify(value));
  };
  const sessionKey = (id: string) => `session:${id}`;
  const checkpointKey = (approvalId: string) => `checkpoint:${approvalId}`;
  const memoryKey = (namespace: string) => `memory:${namespace}`;

  return {
    async loadSession(id) {
      return read<SessionRecord>(sessionKey(id));
    },
    async saveSession(record) {
      write(sessionKey(record.id), record);
    },
    async loadCheckpoint(approvalId) {
      return read<Checkpoint>(checkpointKey(approvalId));
    },
    async saveCheckpoint(checkpoint) {
      write(checkpointKey(checkpoint.approvalId), checkpoint);
    },
    async deleteCheckpoint(approvalId) {
      return data.delete(checkpointKey(approvalId));
    },
    async listCheckpoints(sessionId) {
      const found: Checkpoint[] = [];
      for (const [key, text] of data) {
        if (!key.startsWith('checkpoint:')) continue;
        const checkpoint = JSON.parse(text) as Checkpoint;
        if (checkpoint.sessionId === sessionId) found.push(checkpoint);
      }
      return found;
    },
    async loadMemory(namespace) {
      return read<string[]>(memoryKey(namespace)) ?? [];
    },
    async appendMemory(namespace, note) {
      const notes = read<string[]>(memoryKey(namespace)) ?? [];
      notes.push(note);
      write(memoryKey(namespace), notes);
    },
  };
}
