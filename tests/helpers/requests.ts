/** Request builders shared by the auth tests. */

export const URL_OF_ROUTE = 'https://agent.example/agent';

/** A GET request to the route, with `authorization` when given. */
export function requestWith(authorization?: string): Request {
  const headers = new Headers();
  if (authorization !== undefined) headers.set('authorization', authorization);
  return new Request(URL_OF_ROUTE, { headers });
}

/** Standard base64 (with padding) of raw bytes, without `Buffer`. */
export function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** `Basic <base64(user:password)>` with the UTF-8 bytes of both, as RFC 7617 with charset="UTF-8". */
export function basicAuthorization(user: string, password: string): string {
  return `Basic ${base64(new TextEncoder().encode(`${user}:${password}`))}`;
}

export function bearerAuthorization(token: string): string {
  return `Bearer ${token}`;
}

/** A request carrying HTTP Basic credentials. */
export function basicRequest(user: string, password: string): Request {
  return requestWith(basicAuthorization(user, password));
}

/** A request to the route carrying a bearer token: the one `bearer` of the helpers (jwt.ts and jwks.ts re-export it). */
export function bearerRequest(token: string): Request {
  return requestWith(bearerAuthorization(token));
}
