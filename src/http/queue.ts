// `GET <base>/approvals` without `sessionId` (design §33): the pending approvals a caller may
// decide, across sessions, oldest first, a page at a time (`limit` ≤ 100, an opaque `cursor`).
import type { AgentResources, ApprovalResource } from '../agent/resources.ts';
import type { OwnerKey } from '../agent/types.ts';
import { checkLimit } from '../agent/sessions.ts';
import { decodeBase64url, encodeBase64url } from '../auth/internal.ts';
import { isExpired, type ApprovalsConfig } from './approvals.ts';
import { badRequest, jsonReply, type Reply } from './responses.ts';
import type { RouteRequest } from './route-request.ts';

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
  if (limit !== null && !/^[0-9]{1,3}$/.test(limit)) throw badRequest('limit must be an integer from 1 to 100');
  let asked: number;
  try {
    asked = checkLimit(limit === null ? undefined : Number(limit));
  } catch {
    throw badRequest('limit must be an integer from 1 to 100');
  }
  return { limit: asked, after: cursor === null ? undefined : decodeQueueCursor(cursor) };
}

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

const encodeQueueCursor = (row: ApprovalResource) =>
  encodeBase64url(new TextEncoder().encode(JSON.stringify([row.createdAt, row.approvalId])));

/**
 * The page: the store's next `limit` pending approvals (of `owner`'s runs, or every one), those the
 * caller may decide (`mayDecide`: authorize() on each) shown; `nextCursor` follows the store's page,
 * so a page may hold fewer than `limit` and the next still more.
 */
export async function approvalQueue(
  resources: AgentResources,
  page: QueuePage,
  owner: OwnerKey | undefined,
  mayDecide: (found: ApprovalResource) => boolean,
  approvals: ApprovalsConfig,
): Promise<Reply> {
  const rows = await resources.queue({
    limit: page.limit + 1,
    ...(owner !== undefined && { owner }),
    ...(page.after !== undefined && { after: page.after }),
  });
  const shown = rows.slice(0, page.limit);
  const last = shown.at(-1);
  const now = Date.now();
  return jsonReply({
    approvals: shown.filter(mayDecide).map((row) => {
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
    nextCursor: rows.length > page.limit && last !== undefined ? encodeQueueCursor(last) : null,
  });
}
