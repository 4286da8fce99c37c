// The DPoP replay store for a Worker (design §16, §25): the proofs every instance of the Worker
// has seen, in Durable Objects, so a proof replayed to another isolate is refused there too.
// Web-standard globals only (no node: import), like src/agent.
import { AuthConfigError, newDpopNonce, type DpopReplayStore } from '../auth/internal.ts';
import { refuseOptions } from '../agent/options.ts';
import { checkNamespace, type DurableObjectNamespaceLike, unavailable } from './durable-object-sessions.ts';

/** The part of `DurableObjectStorage` the replay object uses. */
export interface ReplayStorageLike {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  list(options: { prefix: string; end?: string; limit?: number }): Promise<Map<string, unknown>>;
}

/** Expired proofs an object forgets on each call: its storage shrinks as fast as it can grow. */
const SWEEP = 16;

/**
 * A `dpopReplay` store (`jwt({ …, dpopReplay })`) over a Durable Object namespace whose class is
 * `ReplayObject`: each proof's key is remembered by one of 64 objects (chosen by its first
 * character: keys are base64url digests) until the proof expires, so every instance of the Worker
 * refuses a proof any of them accepted. With `dpop: { nonce: true }`,
 * one more object keeps the DPoP nonces every instance offers (design §29). A call that cannot reach its object throws, and the entry
 * refuses the proof (it cannot tell a replay). It takes no options.
 * @example
 * jwt({ jwksUrl, audience, dpop: 'required', dpopReplay: durableObjectReplayStore(env.DPOP_REPLAY) })
 */
export function durableObjectReplayStore(
  namespace: DurableObjectNamespaceLike,
  options?: Readonly<Record<string, never>>,
): DpopReplayStore {
  const helper = 'durableObjectReplayStore()';
  const binding = checkNamespace(helper, namespace);
  refuseOptions(helper, options);
  /** One call to the object named `name`; its JSON answer. */
  const call = async (name: string, body: Record<string, unknown>): Promise<Record<string, unknown>> => {
    if (typeof body.key !== 'string' || body.key === '')
      throw new AuthConfigError(`${helper}: a key must be a non-empty string`);
    let response: Response;
    try {
      response = await binding
        .get(binding.idFromName(name))
        .fetch(new Request('https://replay.agentward/', { method: 'POST', body: JSON.stringify(body) }));
    } catch (error) {
      throw unavailable('the DPoP replay store', error);
    }
    if (!response.ok) throw unavailable('the DPoP replay store', new Error(`the object answered ${response.status}`));
    return (await response.json()) as Record<string, unknown>;
  };
  return {
    seen: async (key, expiresAtSec, nowSec) =>
      (await call(`replay:${key?.[0]}`, { key, expiresAtSec, nowSec })).seen as boolean,
    // DPoP server nonces (design §29): one object keeps them all; an isolate asks twice a period.
    nonce: async (key, expiresAtSec, nowSec) =>
      (await call('replay:nonces', { key, expiresAtSec, nowSec, nonce: true })).nonce as string,
  };
}

/** Whole seconds, zero-padded: keys that sort as the instants they name. */
const instant = (sec: number) => String(Math.max(0, Math.ceil(sec))).padStart(12, '0');

/**
 * What the Durable Object behind `durableObjectReplayStore()` (`ReplayObject`, objects.ts) does
 * on its storage, without the `cloudflare:workers` base class. A proof's key is kept until it expires, indexed by its
 * expiry too, so each call forgets a few expired keys; calls run one after another.
 */
export class ReplayObjectCore {
  readonly #storage: ReplayStorageLike;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(state: { storage: ReplayStorageLike }) {
    this.#storage = state.storage;
  }

  async fetch(request: Request): Promise<Response> {
    const { key, expiresAtSec, nowSec, nonce } = (await request.json()) as {
      key: string;
      expiresAtSec: number;
      nowSec?: number;
      nonce?: true;
    };
    const now = nowSec ?? Date.now() / 1000;
    const done = this.#queue.then(
      (): Promise<string | boolean> =>
        nonce ? this.#nonce(key, expiresAtSec, now) : this.#seen(key, expiresAtSec, now),
    );
    this.#queue = done.catch(() => undefined);
    return Response.json(nonce ? { nonce: await done } : { seen: await done });
  }

  /** The nonce kept under `key`, made by the first call; expired nonces are forgotten as it is called. */
  async #nonce(key: string, expiresAtSec: number, now: number): Promise<string> {
    const storage = this.#storage;
    for (const [entry, kept] of await storage.list({ prefix: 'nonce:', limit: SWEEP }))
      if ((kept as [string, number])[1] <= now) await storage.delete(entry);
    const kept = (await storage.get(`nonce:${key}`)) as [string, number] | undefined;
    if (kept !== undefined && kept[1] > now) return kept[0];
    const value = newDpopNonce();
    await storage.put(`nonce:${key}`, [value, expiresAtSec]);
    return value;
  }

  async #seen(key: string, expiresAtSec: number, now: number): Promise<boolean> {
    const storage = this.#storage;
    const expired = await storage.list({ prefix: 'expires:', end: `expires:${instant(now)}:`, limit: SWEEP });
    for (const [entry] of expired) {
      await storage.delete(entry);
      // The key may have been taken again since, with a later expiry: only a lapsed one goes.
      const proof = `proof:${entry.slice('expires:'.length + 13)}`;
      const at = (await storage.get(proof)) as number | undefined;
      if (at !== undefined && at <= now) await storage.delete(proof);
    }
    const held = (await storage.get(`proof:${key}`)) as number | undefined;
    if (held !== undefined && held > now) return true;
    await storage.put(`proof:${key}`, expiresAtSec);
    await storage.put(`expires:${instant(expiresAtSec)}:${key}`, '');
    return false;
  }
}
