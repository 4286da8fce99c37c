/**
 * Stand-ins for a Durable Object namespace of `LimitObjectCore`s and their storage, as the Workers
 * API behaves (structured copies, asynchronous, one object per name reached through `fetch`),
 * for the tests of `durableObjectLimitStore` outside workerd. Portable: no Node import.
 */
import {
  LimitObjectCore,
  type LimitNamespaceLike,
  type LimitStorageLike,
} from '../../src/cloudflare/durable-object-limit-store.ts';

export class StorageStandIn implements LimitStorageLike {
  readonly data = new Map<string, unknown>();
  async get(key: string) {
    return structuredClone(this.data.get(key));
  }
  async put(key: string, value: unknown) {
    this.data.set(key, structuredClone(value));
  }
  async delete(key: string) {
    return this.data.delete(key);
  }
  async list({ prefix }: { prefix: string }) {
    return new Map(
      [...this.data].filter(([key]) => key.startsWith(prefix)).map(([key, value]) => [key, structuredClone(value)]),
    );
  }
  /** When the alarm is set to ring (ms); a stand-in never rings it: a test calls the object's `alarm()`. */
  alarmAt: number | null = null;
  async getAlarm() {
    return this.alarmAt;
  }
  async setAlarm(scheduledTime: number) {
    this.alarmAt = scheduledTime;
  }
}

/** A namespace of `LimitObjectCore`s: one object per name, reached through `fetch` with a Request, as a stub is. */
export function limitNamespaceStandIn(): LimitNamespaceLike & {
  objects: Map<string, LimitObjectCore>;
  storages: StorageStandIn[];
} {
  const objects = new Map<string, LimitObjectCore>();
  const storages: StorageStandIn[] = [];
  return {
    objects,
    storages,
    idFromName: (name) => `id:${name}`,
    get(id) {
      const name = id as string;
      let object = objects.get(name);
      if (object === undefined) {
        const storage = new StorageStandIn();
        storages.push(storage);
        objects.set(name, (object = new LimitObjectCore({ storage })));
      }
      return { fetch: (request: Request) => object.fetch(new Request(request)) };
    },
  };
}
