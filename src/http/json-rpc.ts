// JSON-RPC answers that echo the request's id as it was written (design §29): `JSON.parse` reads
// `9007199254740993` as 9007199254740992, so the id's source text is kept and spliced into the
// answer instead of its parsed value.
import { JSON_HEADERS, JsonReply } from './responses.ts';

/** An id as the request wrote it: the JSON text of a string or an integer, or `null` when there is none to answer. */
export type IdText = string;

/** One token of JSON text: a string, a punctuator, or a number or literal. */
const TOKEN = /[\t\n\r ]*("(?:[^"\\]|\\.)*"|[{}[\],:]|[^\t\n\r {}[\],:"]+)/y;

/**
 * The source text of the top-level member `id` of `text`, JSON text of an object that `JSON.parse`
 * accepted; the last one when it is repeated, as `JSON.parse` keeps the last. `undefined` when the
 * object has no such member, or its value is an object or an array.
 */
export function idSource(text: string): IdText | undefined {
  TOKEN.lastIndex = 0;
  let depth = 0;
  let expectKey = false;
  let key: string | undefined;
  let valueNext = false;
  let found: string | undefined;
  for (let match = TOKEN.exec(text); match !== null; match = TOKEN.exec(text)) {
    const token = match[1] as string;
    if (depth === 1 && valueNext) {
      valueNext = false;
      if (key === 'id') found = token === '{' || token === '[' ? undefined : token;
    }
    if (token === '{' || token === '[') {
      depth++;
      expectKey = depth === 1;
    } else if (token === '}' || token === ']') depth--;
    else if (depth === 1) {
      if (token === ',') expectKey = true;
      else if (token === ':') valueNext = true;
      else if (expectKey) {
        key = JSON.parse(token) as string;
        expectKey = false;
      }
    }
  }
  return found;
}

/** Fatal, and never given `stream: true`: it keeps nothing from one body to the next. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** UTF-8 `bytes` as JSON: the value and its text, or `undefined` for invalid UTF-8 or JSON. */
export function readJson(bytes: Uint8Array): { value: unknown; text: string } | undefined {
  try {
    const text = utf8.decode(bytes);
    return { value: JSON.parse(text), text };
  } catch {
    return undefined;
  }
}

/** A JSON-RPC answer `{"jsonrpc":"2.0","id":<id as written>,…member}`: `member` is `{ result }` or `{ error }`. */
export function rpcReply(
  id: IdText | null,
  member: Record<string, unknown>,
  status = 200,
  headers: Readonly<Record<string, string>> = JSON_HEADERS,
): JsonReply {
  return new JsonReply(status, `{"jsonrpc":"2.0","id":${id ?? 'null'},${JSON.stringify(member).slice(1)}`, headers);
}

/**
 * A 503 of `audit.required` (the request's record could not be written, design §34) as the MCP
 * route answers it, as it answers a 429 of the limits: the same status and `Retry-After`, with a
 * JSON-RPC error carrying the request's id and `data: { retryAfter }`.
 */
export function rpcUnavailable(id: IdText | null, reply: JsonReply): JsonReply {
  const retryAfter = Number(reply.headers['retry-after'] ?? 5);
  const error = { code: SERVICE_UNAVAILABLE, message: 'Service Unavailable', data: { retryAfter } };
  return rpcReply(id, { error }, 503, { ...JSON_HEADERS, 'retry-after': String(retryAfter) });
}

/** The JSON-RPC error code of a request whose record could not be written (an implementation-defined server error). */
const SERVICE_UNAVAILABLE = -32001;

/** The JSON-RPC error code of a request refused by the server's limits (an implementation-defined server error). */
const TOO_MANY_REQUESTS = -32000;

/**
 * A 429 of the limits as the MCP route answers it (design §29): the same status and fields
 * (`Retry-After`, `RateLimit-Policy`, `RateLimit`), with a JSON-RPC error carrying the request's id
 * and `data: { retryAfter }` in place of `{"error":"Too Many Requests"}`, so that a client that
 * reads only JSON-RPC errors can say why. Any other answer is returned as it is.
 */
export function rpcTooMany<R extends JsonReply | Response>(id: IdText | null, reply: R): R | JsonReply {
  if (reply.status !== 429) return reply;
  const headers: Record<string, string> = { ...JSON_HEADERS };
  if (reply instanceof JsonReply) Object.assign(headers, reply.headers);
  else for (const [name, value] of reply.headers) headers[name] = value;
  delete headers['content-length'];
  const retryAfter = Number(headers['retry-after'] ?? 1);
  const error = { code: TOO_MANY_REQUESTS, message: 'Too Many Requests', data: { retryAfter } };
  return rpcReply(id, { error }, 429, headers);
}
