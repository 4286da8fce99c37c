/**
 * Stand-ins for a Durable Object namespace and its objects' storage, as the Workers API behaves
 * (structured copies, asynchronous, `put` of one entry or several, `list` sorted by key with
 * `prefix`, `start`, `end` and `limit`, one
 * object per name reached through `fetch` with a Request), for the tests of the stores of
 * `agentward/cloudflare` outside workerd. Portable: no Node import.
 */

export class ObjectStorageStandIn {
  readonly data = new Map<string, unknown>();
  async get(key: string) {
    return structuredClone(this.data.get(key));
  }
  /** One entry, or several written together (`put({ a: 1, b: 2 })`), as DurableObjectStorage takes them. */
  async put(key: string | Record<string, unknown>, value?: unknown) {
    if (typeof key === 'string') this.data.set(key, structuredClone(value));
    else for (const [name, entry] of Object.entries(key)) this.data.set(name, structuredClone(entry));
  }
  async delete(key: string) {
    return this.data.delete(key);
  }
  async list({ prefix, start, end, limit }: { prefix: string; start?: string; end?: string; limit?: number }) {
    const keys = [...this.data.keys()]
      .filter(
        (key) => key.startsWith(prefix) && (start === undefined || key >= start) && (end === undefined || key < end),
      )
      .sort()
      .slice(0, limit);
    return new Map(keys.map((key) => [key, structuredClone(this.data.get(key))]));
  }
}

export interface NamespaceStandIn {
  idFromName(name: string): unknown;
  get(id: unknown): { fetch(request: Request): Promise<Response> };
  /** Each object's storage by name: it outlives the objects, as Durable Object storage does. */
  readonly storages: Map<string, ObjectStorageStandIn>;
  /** Forgets every object (their storage stays): as after a restart, or an object evicted. */
  restart(): void;
  /** Every call from now on fails as an unreachable object does (or works again with `false`). */
  unreachable(down: boolean): void;
}

/** A namespace whose objects are `make({ storage })`: one per name, made on first use. */
export function namespaceStandIn(
  make: (state: { storage: ObjectStorageStandIn }) => { fetch(request: Request): Promise<Response> },
): NamespaceStandIn {
  const storages = new Map<string, ObjectStorageStandIn>();
  let objects = new Map<string, { fetch(request: Request): Promise<Response> }>();
  let down = false;
  return {
    storages,
    idFromName: (name) => `id:${name}`,
    get(id) {
      const name = id as string;
      return {
        async fetch(request) {
          if (down) throw new Error('Durable Object reset because its code was updated');
          let object = objects.get(name);
          if (object === undefined) {
            let storage = storages.get(name);
            if (storage === undefined) storages.set(name, (storage = new ObjectStorageStandIn()));
            objects.set(name, (object = make({ storage })));
          }
          // As a stub does: the object reads its own copy of the request.
          return object.fetch(new Request(request));
        },
      };
    },
    restart() {
      objects = new Map();
    },
    unreachable(value) {
      down = value;
    },
  };
}
