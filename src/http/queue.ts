// `GET <base>/approvals` without `sessionId` (design §33): the pending approvals a caller may
// decide, across sessions, oldest first, a page at a time (`limit` ≤ 100, an opaque `cursor`).
import type { AgentResources, ApprovalResource } from '../agent/resources.ts';
import type { OwnerKey } from '../agent/types.ts';
import { checkLimit } from '../agent/sessions.ts';
import { decodeBase64url, encodeBase64url } from '../auth/internal.ts';
import { isExpired, type ApprovalsConfig } from './approvals.ts';
import { badRequest } from './responses.ts';
import type { RouteRequest } from './route-request.ts';

/**
 * What `GET <base>/approvals` and MCP `read` answer (design §33): the pending approvals, and for
 * the queue (no `sessionId`) the cursor of the next page, `null` when none follows.
 */
export interface ApprovalsAnswer {
  readonly approvals: readonly object[];
  readonly nextCursor?: string | null;
}

/** MCP `read`'s arguments: a session's pending approvals, or a page of the queue. */
export interface ApprovalsQuery {
  readonly sessionId?: string | undefined;
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
}

/** A page asked for: how many, after which approval. */
export interface QueuePage {
  readonly limit: number;
  readonly after: readonly [createdAt: string, approvalId: string] | undefined;
}

const CURSOR_ERROR = 'cursor must be the nextCursor of a previous page';

/** `limit` and `cursor` of the query; 400 for anything else. */
export function queueQuery(request: RouteRequest): QueuePage {
  const query = new URL(request.url).searchParams;
  const limit = query.get('limit');
  const cursor = query.get('cursor');
  if (limit !== null && !/^[0-9]{1,3}$/.test(limit)) throw badRequest(LIMIT_ERROR);
  return queuePage(limit === null ? undefined : Number(limit), cursor ?? undefined);
}

/** A page asked for by `limit` (1 to 100, default 20) and the `cursor` of a previous page (MCP `read`'s arguments too); 400 for anything else. */
export function queuePage(limit: number | undefined, cursor: string | undefined): QueuePage {
  let asked: number;
  try {
    asked = checkLimit(limit);
  } catch {
    throw badRequest(LIMIT_ERROR);
  }
  return { limit: asked, after: cursor === undefined ? undefined : decodeQueueCursor(cursor) };
}

const LIMIT_ERROR = 'limit must be an integer from 1 to 100';

function decodeQueueCursor(cursor: string): readonly [string, string] {
  if (cursor.length > 1024) throw badRequest(CURSOR_ERROR);
  const bytes = decodeBase64url(cursor);
  let value: unknown;
  try {
    value = bytes === null ? undefined : JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    value = undefined;
  }
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'string' || typeof value[1] !== 'string')
    throw badRequest(CURSOR_ERROR);
  return [value[0], value[1]];
}

const encodeQueueCursor = (position: readonly [createdAt: string, approvalId: string]) =>
  encodeBase64url(new TextEncoder().encode(JSON.stringify(position)));

/** The most rows of the store's one page (the store contract's bound). */
const STORE_PAGE = 101;
/**
 * The most pending approvals one page reads from the store looking for ones the caller may
 * decide: a bound on a request's work when many in a row are not the caller's to see.
 */
export const MAX_QUEUE_SCAN = 1000;

/**
 * The page: the next `limit` pending approvals the caller may decide (`mayDecide`: authorize() on
 * each), of `owner`'s runs or every one. Those it may not decide are skipped, reading on through
 * the store's pages, so a page holds `limit` whenever that many follow within `MAX_QUEUE_SCAN`;
 * `nextCursor` follows the page's last approval, or (the scan's bound reached) the last one read.
 */
export async function approvalQueue(
  resources: AgentResources,
  page: QueuePage,
  owner: OwnerKey | undefined,
  mayDecide: (found: ApprovalResource) => boolean,
  approvals: ApprovalsConfig,
): Promise<ApprovalsAnswer> {
  const shown: ApprovalResource[] = [];
  let after = page.after;
  let scanned = 0;
  let more = true;
  // One more than the page: finding it says another page exists.
  while (shown.length <= page.limit && more && scanned < MAX_QUEUE_SCAN) {
    const limit = scanned === 0 ? page.limit + 1 : Math.min(STORE_PAGE, MAX_QUEUE_SCAN - scanned);
    const read = await resources.queue({
      limit,
      ...(owner !== undefined && { owner }),
      ...(after !== undefined && { after }),
    });
    scanned += limit;
    for (const row of read.found) if (mayDecide(row)) shown.push(row);
    more = read.more;
    after = read.last ?? after;
  }
  const items = shown.slice(0, page.limit);
  const last = items.at(-1);
  const nextCursor =
    shown.length > page.limit && last !== undefined
      ? encodeQueueCursor([last.createdAt, last.approvalId])
      : more && after !== undefined
        ? encodeQueueCursor(after)
        : null;
  const now = Date.now();
  return {
    approvals: items.map((row) => {
      const item: Record<string, unknown> = {
        id: row.approvalId,
        sessionId: row.sessionId,
        tool: row.tool,
        arguments: row.arguments,
        requester: row.requester === undefined ? null : { id: row.requester[2], authenticator: row.requester[0] },
        createdAt: row.createdAt,
      };
      if (approvals.ttlSec !== undefined)
        item.status = isExpired(approvals, row.createdAt, now) ? 'expired' : 'pending';
      return item;
    }),
    nextCursor,
  };
}
