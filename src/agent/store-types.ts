// What an agent's store keeps (sessions with their transcript and audit, checkpoints of paused
// runs, memory notes) and the `Store` interface every store implements (design §6, §9, §10).
import type { Principal } from '../auth/internal.ts';
import type { Message } from './types.ts';

/** Who decided an approval (design §33): the decider's id, authenticator and issuer; never its claims or token. */
export interface DecidedBy {
  id: string;
  authenticator: string;
  issuer?: string;
}

/** A decision on an approval, kept beside the transcript for audit. */
export interface AuditEntry {
  type: 'approval-decided';
  approvalId: string;
  tool: string;
  approved: boolean;
  reason?: string;
  /** Absent: trusted code decided (no principal). */
  decidedBy?: DecidedBy;
  /** When it was decided (ISO 8601). */
  decidedAt: string;
  /** The same instant, under its earlier name. */
  at: string;
}

/**
 * Who owns a session: `[authenticator, issuer ?? null, id]` of the principal that created it, and
 * its `tenant` fourth when it has one (docs/tenants.md). Two principals own the same session only
 * when all parts are equal: the same `sub` in two tenants owns nothing of the other's. Stores
 * keep it as JSON text, indexed with `updated_at`; a key without a tenant is the three parts alone,
 * as sessions stored before tenants were.
 */
export type OwnerKey = readonly [authenticator: string, issuer: string | null, id: string, tenant?: string];

export interface SessionRecord {
  id: string;
  messages: Message[];
  audit: AuditEntry[];
  createdAt: string;
  updatedAt: string;
  /** Set once, when an `'owned'` agent creates the session with a principal; absent: no owner (only trusted code reaches it). */
  owner?: OwnerKey;
  /** The first user message, cut to 80 characters. */
  title?: string;
}

/** One row of `Store.listSessions`. */
export interface SessionSummary {
  id: string;
  createdAt: string;
  updatedAt: string;
  title: string;
  /** How many checkpoints (pending approvals) the session has. */
  pendingApprovals: number;
}

/** A page of one owner's sessions in the order `updatedAt` descending, then `id` descending. */
export interface SessionQuery {
  owner: OwnerKey;
  /** At most this many rows (1 to 101). */
  limit: number;
  /** Only rows strictly after this one in that order (keyset paging). */
  after?: { updatedAt: string; id: string };
}

/** A page of pending approvals across sessions (design §33's queue), oldest first: `createdAt`, then `approvalId`. */
export interface PendingQuery {
  /** Only the checkpoints of runs this key started (an owner's queue); absent: every one. */
  owner?: OwnerKey;
  /** At most this many (1 to 101). */
  limit: number;
  /** Only checkpoints strictly after this one in that order (keyset paging). */
  after?: { createdAt: string; approvalId: string };
}

/** A paused run, JSON-serializable: everything needed to resume it after a restart. */
export interface Checkpoint {
  approvalId: string;
  sessionId: string;
  /** The principal the run started with (absent for an anonymous or static run's caller). */
  principal?: Principal;
  /** The owner key of the principal the run started with, for the bound on pending approvals (absent: trusted code). */
  owner?: OwnerKey;
  metadata: Record<string, unknown>;
  /** When the run paused (ISO 8601); the queue's order. */
  createdAt?: string;
  [field: string]: unknown;
}

/**
 * Where an agent keeps sessions, transcripts, checkpoints and memory. Async so a database can
 * stand behind it. Every call is answerable by an indexed lookup: by session id, by approval
 * id, by the checkpoints' session id, by owner; none needs a scan of other sessions' data.
 * `tests/helpers/store-contract.ts` holds the tests every store passes.
 */
export interface Store {
  loadSession(id: string): Promise<SessionRecord | undefined>;
  /** Creates or replaces the record (with its `owner` and `title`). */
  saveSession(record: SessionRecord): Promise<void>;
  loadCheckpoint(approvalId: string): Promise<Checkpoint | undefined>;
  saveCheckpoint(checkpoint: Checkpoint): Promise<void>;
  /** Removes a checkpoint; `true` only for the one caller that removed it (decide-once). */
  deleteCheckpoint(approvalId: string): Promise<boolean>;
  /** The checkpoints of one session, found through the session (never by reading other sessions' checkpoints). */
  listCheckpoints(sessionId: string): Promise<Checkpoint[]>;
  loadMemory(namespace: string): Promise<string[]>;
  appendMemory(namespace: string, note: string): Promise<void>;
  /** How many checkpoints carry this `owner` (an index on the checkpoints' owner, not a scan). */
  countCheckpoints?(owner: OwnerKey): Promise<number>;
  /**
   * Pending approvals across sessions, oldest first, a page at a time (design §33's queue): an
   * index on the checkpoints' `createdAt` (and owner), never a scan of sessions. Optional: without
   * it `GET <base>/approvals` needs `sessionId`.
   */
  listPendingApprovals?(query: PendingQuery): Promise<Checkpoint[]>;
  /** One owner's sessions, a page at a time (required by `sessions: 'owned'`). */
  listSessions?(query: SessionQuery): Promise<SessionSummary[]>;
  /** Removes a session with all its checkpoints; `true` when there was anything to remove (required by `sessions: 'owned'`). */
  deleteSession?(id: string): Promise<boolean>;
  /**
   * Runs one turn of a session under a per-session lock and hands it the store to use for the
   * turn's reads and writes (a database store: one connection holding a transaction-scoped lock).
   * Without it, the agent serializes the turns of a session itself (within one running instance).
   */
  withSession?<T>(sessionId: string, turn: (store: Store) => Promise<T>): Promise<T>;
  /**
   * The owner stored with a session, read without its transcript: `undefined` when there is no
   * such session, `null` when it has no owner. With it, an `'owned'` agent compares the owner
   * before it loads (and parses) the record, so "not yours" costs what "unknown" costs (design §19).
   */
  sessionOwner?(id: string): Promise<OwnerKey | null | undefined>;
  /**
   * Optional: at most the size `limits.sessionBytes` counts of the stored session (the UTF-8 bytes
   * of its JSON), read without loading the record; `undefined` for no such session. A message the
   * session cannot hold is then refused before its record is parsed (design §19). Never more than
   * the real size: a larger answer would refuse sessions that still have room.
   */
  sessionBytesAtLeast?(id: string): Promise<number | undefined>;
}
