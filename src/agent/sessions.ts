// Session ownership (design §9) and the listing order every store shares.
import { callerKey, decodeBase64url, encodeBase64url, kindOf, sameCaller, type CallerKey } from '../auth/internal.ts';
import { invalidInput } from './errors.ts';
import { isoNow } from './clock.ts';
import type {
  Message,
  OwnerKey,
  PendingQuery,
  Principal,
  SessionMode,
  SessionQuery,
  SessionRecord,
  SessionSummary,
  Store,
} from './types.ts';

const TITLE_LENGTH = 80;
export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;

/**
 * The owner key stored with a session (design §9's shape, kept by every store): the caller key's
 * parts, its tenant fourth when it has one (a key without one is as sessions were stored before).
 */
export const ownerKey = (principal: Principal): OwnerKey => {
  const [tenant, issuer, authenticator, id] = callerKey(principal);
  const owner = issuer === '' ? null : issuer;
  return tenant === '' ? [authenticator, owner, id] : [authenticator, owner, id, tenant];
};

/** The caller key of a stored owner: sessions stored under §9's key are their owners' still, on every store. */
export const ownerCaller = (owner: OwnerKey): CallerKey => [owner[3] ?? '', owner[1] ?? '', owner[0], owner[2]];

/** `anonymous()` principals, and any principal with `authenticator: 'anonymous'`, own nothing. */
export const isAnonymous = (principal: Principal): boolean => principal.authenticator === 'anonymous';

function isOwnerKey(value: unknown): value is OwnerKey {
  return (
    Array.isArray(value) &&
    (value.length === 3 || (value.length === 4 && typeof value[3] === 'string' && value[3] !== '')) &&
    typeof value[0] === 'string' &&
    (value[1] === null || typeof value[1] === 'string') &&
    typeof value[2] === 'string'
  );
}

/** Is `owner` the key of `principal`? One caller key against the other (design §32). */
const ownedBy = (owner: OwnerKey, principal: Principal): boolean =>
  sameCaller(ownerCaller(owner), callerKey(principal));

/**
 * May `principal` use `session` under `mode`? Trusted code (no principal) and `'shared'` agents
 * may use every session. Under `'owned'`: the owner may; a session an anonymous caller made is
 * reachable by its (server-made, unguessable) id only; a session without an owner (made while
 * the agent was `'shared'`, or by trusted code) by no principal.
 */
export function mayUse(mode: SessionMode, session: SessionRecord, principal: Principal | undefined): boolean {
  return mayUseOwner(mode, session.owner, principal);
}

/**
 * The ownership rule (design §9, §32): `mayUse` on the owner alone (`Store.sessionOwner`: read
 * without the transcript). The one place an owner is compared with a caller: the agent's calls, in
 * process or from the route handler, and the handler's `authorize()` all ask it.
 */
export function mayUseOwner(mode: SessionMode, owner: unknown, principal: Principal | undefined): boolean {
  if (mode === 'shared' || principal === undefined) return true;
  if (!isOwnerKey(owner)) return false;
  if (owner[0] === 'anonymous') return true;
  return ownedBy(owner, principal);
}

/**
 * Whether the stored owner already rules the principal out, read without the transcript when
 * the store can (`sessionOwner`): `'unknown'` (no such session), `'refused'` (not the caller's),
 * or `undefined` (load the record and decide on it). Unknown and not yours then cost the same.
 */
export async function ownerVerdict(
  mode: SessionMode,
  store: Store,
  sessionId: string,
  principal: Principal | undefined,
): Promise<'unknown' | 'refused' | undefined> {
  if (mode !== 'owned' || principal === undefined || typeof store.sessionOwner !== 'function') return undefined;
  const owner = await store.sessionOwner(sessionId);
  if (owner === undefined) return 'unknown';
  return mayUseOwner(mode, owner, principal) ? undefined : 'refused';
}

/** The session `principal` may use under `mode`, or `undefined`: unknown and not the caller's look the same. */
export async function usableSession(
  mode: SessionMode,
  store: Store,
  sessionId: string,
  principal: Principal | undefined,
): Promise<SessionRecord | undefined> {
  if ((await ownerVerdict(mode, store, sessionId, principal)) !== undefined) return undefined;
  const session = await store.loadSession(sessionId);
  return session !== undefined && mayUse(mode, session, principal) ? session : undefined;
}

/** A new session record, empty. */
export function newSession(id: string): SessionRecord {
  const now = isoNow();
  return { id, messages: [], audit: [], createdAt: now, updatedAt: now };
}

/** The first user message, cut to 80 characters (code points, so no surrogate is split). */
export function sessionTitle(messages: readonly Message[]): string {
  const first = messages.find((message) => message.role === 'user');
  return first === undefined ? '' : titleOf(first.content);
}

// A text of at most 80 UTF-16 units has at most 80 code points: it is its own title, without
// splitting it into an array. A longer one is cut from its first 160 units, which hold its first 80
// code points whole, never the whole message split (docs/design.md §30, "Speed tricks and what they bought").
export const titleOf = (text: string): string =>
  text.length <= TITLE_LENGTH
    ? text
    : Array.from(text.slice(0, 2 * TITLE_LENGTH))
        .slice(0, TITLE_LENGTH)
        .join('');

/** `SessionSummary` of a record, for stores that keep whole records. */
export function summaryOf(record: SessionRecord, pendingApprovals: number): SessionSummary {
  const { id, createdAt, updatedAt } = record;
  return { id, createdAt, updatedAt, title: record.title ?? sessionTitle(record.messages), pendingApprovals };
}

/** The listing order: `updatedAt` descending, then `id` descending. Negative when `a` comes first. */
export function listingOrder(a: { updatedAt: string; id: string }, b: { updatedAt: string; id: string }): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt > b.updatedAt ? -1 : 1;
  return a.id === b.id ? 0 : a.id > b.id ? -1 : 1;
}

/** One page of `rows` (any order) as `Store.listSessions` answers `query`: for stores that hold the owner's rows in hand. */
export function pageOf<T extends { updatedAt: string; id: string }>(rows: T[], query: SessionQuery): T[] {
  const { after, limit } = query;
  return rows
    .filter((row) => after === undefined || listingOrder(after, row) < 0)
    .sort(listingOrder)
    .slice(0, limit);
}

/** The queue's order (design §33): `createdAt`, then `approvalId`, ascending. Negative when `a` comes first. */
export function queueOrder(
  a: { createdAt?: string | undefined; approvalId: string },
  b: { createdAt?: string | undefined; approvalId: string },
): number {
  const at = a.createdAt ?? '';
  const bt = b.createdAt ?? '';
  if (at !== bt) return at < bt ? -1 : 1;
  return a.approvalId === b.approvalId ? 0 : a.approvalId < b.approvalId ? -1 : 1;
}

/** One page of checkpoints (any order) as `Store.listPendingApprovals` answers `query`: for stores that hold them in hand. */
export function pendingPage<T extends { createdAt?: string | undefined; approvalId: string }>(
  rows: T[],
  query: PendingQuery,
): T[] {
  const { after, limit } = query;
  return rows
    .filter((row) => after === undefined || queueOrder(after, row) < 0)
    .sort(queueOrder)
    .slice(0, limit);
}

export function encodeCursor(row: { updatedAt: string; id: string }): string {
  return encodeBase64url(new TextEncoder().encode(JSON.stringify([row.updatedAt, row.id])));
}

/** The position a cursor names; `INVALID_INPUT` for anything that is not one of ours. */
export function decodeCursor(cursor: unknown): { updatedAt: string; id: string } {
  const invalid = () => invalidInput('listSessions(): cursor must be the nextCursor of a previous page');
  if (typeof cursor !== 'string' || cursor.length > 2048) throw invalid();
  let value: unknown;
  try {
    const bytes = decodeBase64url(cursor);
    if (bytes === null) throw invalid();
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'string' || typeof value[1] !== 'string')
    throw invalid();
  return { updatedAt: value[0], id: value[1] };
}

export function checkLimit(limit: unknown): number {
  if (limit === undefined) return DEFAULT_PAGE;
  // Number.isInteger is false for anything but a number.
  if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_PAGE) {
    throw invalidInput(`listSessions(): limit must be an integer from 1 to ${MAX_PAGE}; got ${kindOf(limit)}`);
  }
  return limit as number;
}
