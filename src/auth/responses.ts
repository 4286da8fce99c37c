// SPDX-License-Identifier: MIT
const BODIES = {
  401: '{"error":"Unauthorized"}',
  403: '{"error":"Forbidden"}',
  500: '{"error":"Internal Server Error"}',
} as const;

const challengeLines = new WeakMap<Response, readonly string[]>();

/**
 * Every response the auth layer produces: JSON body, `Cache-Control: no-store`, one
 * `WWW-Authenticate` per challenge line (a 401's, or a 403's `insufficient_scope`; never a 500's).
 */
export function authResponse(status: 401 | 403 | 500, challenges: readonly string[] = []): Response {
  const lines = status === 500 ? [] : challenges;
  const headers = new Headers({ 'content-type': 'application/json', 'cache-control': 'no-store' });
  for (const line of lines) headers.append('www-authenticate', line);
  const response = new Response(BODIES[status], { status, headers });
  challengeLines.set(response, lines);
  return response;
}

/**
 * The `WWW-Authenticate` challenges of an auth response, one per header line (empty on a 403
 * or 500); `undefined` for a response the auth layer did not build. Fetch `Headers`
 * joins repeated values with commas, which a quoted realm makes ambiguous; servers that write
 * header lines themselves (the node server) read them from here.
 */
export function wwwAuthenticateLines(response: Response): readonly string[] | undefined {
  return challengeLines.get(response);
}

/** The body of an auth response while it is unread, for servers that write bodies themselves; else `undefined`. */
export function authResponseText(response: Response): string | undefined {
  return challengeLines.has(response) && !response.bodyUsed
    ? BODIES[response.status as keyof typeof BODIES]
    : undefined;
}
