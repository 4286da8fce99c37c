// The audit log for a Worker (design §34): one hash chain kept by one Durable Object, which every
// isolate of the Worker appends to. Web-standard globals only (no node: import), like src/agent.
import {
  AUDIT_GENESIS,
  type AuditHead,
  type AuditKey,
  type ChainedRecord,
  type ChainHasher,
  chainHasher,
  chainRecord,
  recordFields,
} from '../agent/audit-chain.ts';
import { type AuditLog, inRange, readRange } from '../agent/audit-log.ts';
import { AuditError } from '../agent/errors.ts';
import { AuthConfigError, checkOptionNames, decodeBase64url, encodeBase64url } from '../auth/internal.ts';
import { checkNamespace, type DurableObjectNamespaceLike, unavailable } from './durable-object-sessions.ts';

/** The part of `DurableObjectStorage` the audit log object uses. */
export interface AuditStorageLike {
  get(key: string): Promise<unknown>;
  /** Several entries written together (all or none). */
  put(entries: Record<string, unknown>): Promise<void>;
  list(options: { prefix: string; start?: string; limit?: number }): Promise<Map<string, unknown>>;
}

/** Options of `durableObjectAuditLog()`. */
export interface DurableObjectAuditLogOptions {
  /** The name of the object that keeps the chain (default `'agentward-audit'`): one object, one chain. */
  name?: string;
  /** A secret of at least 32 bytes: each `hash` is then an HMAC-SHA-256 under it. */
  key?: AuditKey;
}

/** Records one `read()` call to the object answers at most. */
const PAGE = 200;

type Call =
  | { op: 'append'; record: Record<string, unknown>; key?: string }
  | { op: 'read'; fromSeq: number; since: number | null; until: number | null }
  | { op: 'head' };

/**
 * An audit log (design §34) in a Durable Object: give it the namespace binding of the exported
 * class `AuditLogObject` (which runs `AuditLogObjectCore`). Every isolate of the Worker appends to the one object named `name`, which
 * runs the appends one after another, so the chain never forks. With `key` the object hashes
 * each record under it as it appends (the key goes with each append and is never stored). A
 * call that cannot reach the object throws `STORE_UNAVAILABLE`.
 * @example
 * export { AuditLogObject as AgentAudit } from 'agentward/cloudflare';
 * const log = durableObjectAuditLog(env.AGENT_AUDIT, { key: env.AUDIT_KEY });
 */
export function durableObjectAuditLog(
  namespace: DurableObjectNamespaceLike,
  options: DurableObjectAuditLogOptions = {},
): AuditLog {
  const helper = 'durableObjectAuditLog()';
  const binding = checkNamespace(helper, namespace);
  if (typeof options !== 'object' || options === null)
    throw new AuthConfigError(`${helper}: options must be { name?, key? }`);
  checkOptionNames(helper, options, ['name', 'key']);
  const { name = 'agentward-audit', key } = options;
  if (typeof name !== 'string' || name === '' || name.length > 256)
    throw new AuthConfigError(`${helper}: name must be a string of 1 to 256 characters`);
  // Checked here, so a short key fails when the log is made; the object checks it again.
  chainHasher(helper, key);
  const sentKey =
    key === undefined ? undefined : encodeBase64url(typeof key === 'string' ? new TextEncoder().encode(key) : key);

  async function call(body: Call): Promise<unknown> {
    let response: Response;
    try {
      // A stub per call: a Worker may not use one made for another request.
      response = await binding
        .get(binding.idFromName(name))
        .fetch(new Request('https://audit.agentward/', { method: 'POST', body: JSON.stringify(body) }));
    } catch (error) {
      throw unavailable('the audit log', error);
    }
    if (response.status === 400) {
      // The object's refusal, thrown again here as the class and code it was thrown with there.
      const { error, code } = (await response.json()) as { error: string; code?: string };
      if (code === 'AUDIT_RECORD_INVALID' || code === 'AUDIT_READ_INVALID') throw new AuditError(code, error);
      throw new AuthConfigError(error);
    }
    if (!response.ok) throw unavailable('the audit log', new Error(`the object answered ${response.status}`));
    return response.json();
  }

  return {
    async append(record) {
      const fields = recordFields(record);
      return (await call({
        op: 'append',
        record: fields,
        ...(sentKey === undefined ? {} : { key: sentKey }),
      })) as ChainedRecord;
    },
    async *read(readOptions) {
      const range = readRange(readOptions);
      const finite = (ms: number) => (Number.isFinite(ms) ? ms : null);
      let fromSeq: number | null = range.fromSeq;
      while (fromSeq !== null) {
        const page = (await call({ op: 'read', fromSeq, since: finite(range.since), until: finite(range.until) })) as {
          records: ChainedRecord[];
          next: number | null;
        };
        yield* page.records;
        fromSeq = page.next;
      }
    },
    async head() {
      const { head } = (await call({ op: 'head' })) as { head: AuditHead | null };
      return head ?? undefined;
    },
  };
}

/** A record's storage key: its seq zero-padded, so keys sort as seqs. */
const recordKey = (seq: number) => `record:${String(seq).padStart(16, '0')}`;

/**
 * What the Durable Object behind `durableObjectAuditLog()` does on its storage (`AuditLogObject`
 * in objects.ts hands it its calls). It keeps one chain: the records under their `seq`, and the
 * head, written together with each record. Its calls run one after another.
 */
export class AuditLogObjectCore {
  readonly #storage: AuditStorageLike;
  #queue: Promise<unknown> = Promise.resolve();
  /** The hasher of the last key sent, so a run of appends imports it once. */
  #hasher: { key: string | undefined; hash: ChainHasher } | undefined;

  constructor(state: { storage: AuditStorageLike }) {
    this.#storage = state.storage;
  }

  async fetch(request: Request): Promise<Response> {
    const body = (await request.json()) as Call;
    const done = this.#queue.then(() => this.#run(body));
    this.#queue = done.catch(() => undefined);
    try {
      return Response.json(await done);
    } catch (error) {
      // A record or key the chain refuses: the message says what (never the key), the caller rethrows it.
      if (error instanceof AuditError || error instanceof AuthConfigError)
        return Response.json({ error: error.message, code: error.code }, { status: 400 });
      throw error;
    }
  }

  async #run(call: Call): Promise<unknown> {
    const storage = this.#storage;
    const head = ((await storage.get('head')) as AuditHead | undefined) ?? { seq: 0, hash: AUDIT_GENESIS };
    if (call.op === 'head') return { head: head.seq === 0 ? null : head };
    if (call.op === 'append') {
      if (this.#hasher === undefined || this.#hasher.key !== call.key) {
        const key = call.key === undefined ? undefined : decodeBase64url(call.key);
        this.#hasher = { key: call.key, hash: chainHasher('AuditLogObjectCore', key) };
      }
      const chained = await chainRecord(call.record, head.seq + 1, head.hash, this.#hasher.hash);
      await storage.put({
        [recordKey(chained.seq)]: JSON.stringify(chained),
        head: { seq: chained.seq, hash: chained.hash },
      });
      return chained;
    }
    // Records are found by the key they are stored under: a seq written into a record never hides it.
    const range = {
      fromSeq: Number.NEGATIVE_INFINITY,
      since: call.since ?? Number.NEGATIVE_INFINITY,
      until: call.until ?? Number.POSITIVE_INFINITY,
    };
    const listed = await storage.list({ prefix: 'record:', start: recordKey(call.fromSeq), limit: PAGE });
    const records: ChainedRecord[] = [];
    for (const text of listed.values()) {
      const record = JSON.parse(String(text)) as ChainedRecord;
      if (inRange(record, range)) records.push(record);
    }
    // The next page starts after the last key listed (not the last record's own seq, which storage does not vouch for).
    const lastKey = [...listed.keys()].pop();
    const next = listed.size < PAGE || lastKey === undefined ? null : Number(lastKey.slice('record:'.length)) + 1;
    return { records, next };
  }
}
