/** A route's refusal: its status and the message that becomes `{"error":"<message>"}`. */
export class HttpError extends Error {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.headers = headers;
  }
}

/** JSON answer of every non-streaming route; `no-store` because transcripts and results are private. */
export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  });
}

export function errorResponse(status: number, message: string, headers: Record<string, string> = {}): Response {
  return jsonResponse({ error: message }, status, headers);
}

const AGENT_ERRORS: Readonly<Record<string, number>> = { INVALID_INPUT: 400, SESSION_NOT_FOUND: 404, APPROVAL_NOT_FOUND: 404 };
const NOT_FOUND_MESSAGES: Readonly<Record<string, string>> = { SESSION_NOT_FOUND: 'Session not found', APPROVAL_NOT_FOUND: 'Approval not found' };

/**
 * The answer to an error thrown while serving a route: a route refusal or an `AgentError`
 * the caller can act on keeps its status; anything else is a bug, logged and answered with a
 * generic 500 that never carries the error's text.
 */
export function failureResponse(error: unknown): Response {
  if (error instanceof HttpError) return errorResponse(error.status, error.message, { ...error.headers });
  const code = (error as { code?: unknown } | null)?.code;
  const status = typeof code === 'string' ? AGENT_ERRORS[code] : undefined;
  if (status === 400) return errorResponse(400, String((error as Error).message));
  if (status === 404) return errorResponse(404, NOT_FOUND_MESSAGES[code as string] ?? 'Not Found');
  console.error('agentgate: an agent route failed; answering 500', error);
  return errorResponse(500, 'Internal Server Error');
}
