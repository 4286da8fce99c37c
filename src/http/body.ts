import { isPlainObject } from '../agent/tools.ts';
import { badRequest, HttpError } from './responses.ts';
import type { RouteRequest } from './route-request.ts';
import { readJson } from './json-rpc.ts';
import { nonEmptyString } from '../agent/shapes.ts';

/** Largest request body a route reads (1 MiB). */
export const MAX_BODY_BYTES = 1024 * 1024;

const tooLarge = () => new HttpError(413, 'Request body too large (limit 1 MiB)');

/**
 * The request body, reading at most `MAX_BODY_BYTES`: a larger `Content-Length` is refused
 * before reading (413), and a body without one is counted as it streams in: `null` past the limit.
 */
export function readBodyBytes(request: Pick<RouteRequest, 'headers' | 'readBody'>): Promise<Uint8Array | null> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) return Promise.reject(tooLarge());
  return request.readBody(MAX_BODY_BYTES);
}

/**
 * A body of `readBodyBytes()` as a JSON object: past the limit is a 413; anything else than an
 * object (no body, invalid UTF-8 or JSON, an array) is a 400. Apart from `readBodyBytes()`, so a
 * route awaits one promise for its body, not two (docs/design.md §30, "Speed tricks and what they bought").
 */
export function jsonObject(bytes: Uint8Array | null): Record<string, unknown> {
  if (bytes === null) throw tooLarge();
  const parsed = readJson(bytes);
  if (parsed === undefined) throw badRequest('Request body must be valid JSON');
  if (!isPlainObject(parsed.value)) throw badRequest('Request body must be a JSON object');
  return parsed.value;
}

/** The request body as a JSON object (`readBodyBytes()`, then `jsonObject()`). */
export async function readJsonObject(
  request: Pick<RouteRequest, 'headers' | 'readBody'>,
): Promise<Record<string, unknown>> {
  return jsonObject(await readBodyBytes(request));
}

/** `{ message, sessionId?, metadata? }` of `POST <base>` and `POST <base>/chat`. */
export function parseSendBody(body: Record<string, unknown>): {
  message: string;
  sessionId?: string;
  metadata?: Record<string, unknown>;
} {
  const { message, sessionId, metadata } = body;
  if (typeof message !== 'string') throw badRequest('message must be a string');
  if (sessionId !== undefined) nonEmptyString(sessionId, 'sessionId', badRequest);
  if (metadata !== undefined && !isPlainObject(metadata)) throw badRequest('metadata must be a JSON object');
  return { message, ...(sessionId !== undefined && { sessionId }), ...(metadata !== undefined && { metadata }) };
}

/** `{ approved, reason? }` of `POST <base>/approvals/:approvalId`. */
export function parseDecisionBody(body: Record<string, unknown>): { approved: boolean; reason?: string } {
  const { approved, reason } = body;
  if (typeof approved !== 'boolean') throw badRequest('approved must be a boolean');
  if (reason !== undefined && typeof reason !== 'string') throw badRequest('reason must be a string');
  return { approved, ...(reason !== undefined && { reason }) };
}
