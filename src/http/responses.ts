/**
 * A route's refusal: its status and the message that becomes `{"error":"<message>"}`. The route
 * handler catches it and answers with it; `code` is `HTTP_REFUSAL` and `status` tells refusals apart.
 */
export class HttpError extends Error {
  readonly code = 'HTTP_REFUSAL' as const;
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
  }
}

/** A 400 refusal: `message` says what is wrong with the request. */
export const badRequest = (message: string): HttpError => new HttpError(400, message);

/** The JSON text of each response `toResponse()` built, for servers that write bodies themselves. */
const texts = new WeakMap<Response, string>();

/**
 * A JSON answer before it is a `Response`. The routes answer with it; `agentHandler()` turns it
 * into a `Response`, and the node server writes it as it is, in one write with its
 * `Content-Length`: a `Response` with a body costs its body stream to build, and more again in
 * garbage collection on a loaded server (docs/design.md §30, "Speed tricks and what they bought").
 */
export class JsonReply {
  readonly status: number;
  readonly text: string;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, text: string, headers: Readonly<Record<string, string>>) {
    this.status = status;
    this.text = text;
    this.headers = headers;
  }
}

/** What a route answers: a `JsonReply`, or a `Response` (streams, refusals of auth, 204s). */
export type Reply = Response | JsonReply;

/** `reply` with `DPoP-Nonce` (RFC 9449 §8): a `JsonReply` copied, a `Response`'s own headers set (the routes make them all). */
export function withNonce(reply: Reply, nonce: string): Reply {
  if (reply instanceof JsonReply)
    return new JsonReply(reply.status, reply.text, { ...reply.headers, 'dpop-nonce': nonce });
  reply.headers.set('dpop-nonce', nonce);
  return reply;
}

/** The headers of a JSON answer (the JSON-RPC route's too). */
export const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json',
  'cache-control': 'no-store',
});

/** JSON answer of every non-streaming route; `no-store` because transcripts and results are private. */
export function jsonReply(body: unknown, status = 200, headers?: Record<string, string>): JsonReply {
  return new JsonReply(
    status,
    JSON.stringify(body),
    headers === undefined ? JSON_HEADERS : { ...JSON_HEADERS, ...headers },
  );
}

export function errorReply(status: number, message: string, headers?: Record<string, string>): JsonReply {
  return jsonReply({ error: message }, status, headers);
}

/** The `Response` of a reply. */
export function toResponse(reply: Reply): Response {
  if (reply instanceof Response) return reply;
  const response = new Response(reply.text, { status: reply.status, headers: reply.headers });
  texts.set(response, reply.text);
  return response;
}

export function jsonResponse(body: unknown, status = 200, headers?: Record<string, string>): Response {
  return toResponse(jsonReply(body, status, headers));
}

/**
 * The body of a response `toResponse()` built, while nobody has read it; else `undefined`.
 * The node bridge writes it at once with its `Content-Length`, instead of reading the body
 * stream back and writing it chunked (docs/design.md §30, "Speed tricks and what they bought").
 */
export function responseText(response: Response): string | undefined {
  return response.bodyUsed ? undefined : texts.get(response);
}

export function errorResponse(status: number, message: string, headers: Record<string, string> = {}): Response {
  return toResponse(errorReply(status, message, headers));
}

/** `AgentError` (and `StoreError`) codes a caller can act on: status and message (`null`: the agent's own message, which names the bad input). */
const AGENT_ERRORS: Readonly<Record<string, readonly [number, string | null]>> = {
  INVALID_INPUT: [400, null],
  SESSION_NOT_FOUND: [404, 'Session not found'],
  APPROVAL_NOT_FOUND: [404, 'Approval not found'],
  APPROVAL_PENDING: [409, 'The session is waiting for an approval decision'],
  FORBIDDEN: [403, 'Forbidden'],
  APPROVAL_LIMIT: [429, 'Too many pending approvals'],
  MODEL_ERROR: [502, 'The model failed'],
  SESSION_FULL: [409, 'Session is full'],
  TOOL_NOT_FOUND: [404, 'Tool not found'],
  // limits.tokens refused a model turn (design §25); the error carries the RateLimit fields.
  TOKEN_LIMIT: [429, 'Too Many Requests'],
  // A store that cannot reach its database (agentward/postgres's StoreError): the next request may work.
  STORE_UNAVAILABLE: [503, 'Service Unavailable'],
};

/**
 * The answer to an error thrown while serving a route: a route refusal or an `AgentError`
 * the caller can act on keeps its status; anything else is a bug, logged and answered with a
 * generic 500 that never carries the error's text.
 */
export function failureResponse(error: unknown): Response {
  return toResponse(failureReply(error));
}

/** `failureResponse()` as a reply. */
export function failureReply(error: unknown): JsonReply {
  const { status, message, headers } = failureOf(error);
  return errorReply(status, message, headers);
}

/** The status and message answering an error (`failureReply()`'s), logging those that are the server's fault. */
export function failureOf(error: unknown): { status: number; message: string; headers?: Record<string, string> } {
  if (error instanceof HttpError) return { status: error.status, message: error.message };
  // The caller went away and aborted the run: nobody reads this answer, and it is no bug to log.
  if (isAbort(error)) return { status: 503, message: 'Request aborted' };
  // AgentError codes, and STORE_UNAVAILABLE from any store (agentward/postgres's StoreError, or a store of your own).
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  const ours = error instanceof Error && (error.name === 'AgentError' || code === 'STORE_UNAVAILABLE');
  const known = ours && typeof code === 'string' && Object.hasOwn(AGENT_ERRORS, code) ? AGENT_ERRORS[code] : undefined;
  if (known !== undefined) {
    if (known[0] >= 500) console.error('agentward: an agent route failed', error);
    const { headers } = error as { headers?: Record<string, string> };
    return { status: known[0], message: known[1] ?? (error as Error).message, ...(headers && { headers }) };
  }
  console.error('agentward: an agent route failed; answering 500', error);
  return { status: 500, message: 'Internal Server Error' };
}

/** True for the reason of an aborted `AbortSignal` (a client that disconnected). */
export function isAbort(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError';
}
