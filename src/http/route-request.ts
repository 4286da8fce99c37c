import type { Principal } from '../agent/types.ts';
import { readBoundedBody } from '../auth/internal.ts';

/**
 * What the agent routes read of a request. `agentHandler()` reads it off a Web `Request`; the
 * node server off node's own request, building a `Request` only for what needs one (an auth
 * entry of your own, a channel, the metadata route): on a loaded node server a `Request` costs
 * about as much again as a bare node:http answer (docs/design.md §30, "Speed tricks and what they bought").
 */
export interface RouteRequest {
  readonly method: string;
  /** The whole URL: the routes read its path and query. */
  readonly url: string;
  readonly headers: { get(name: string): string | null };
  /**
   * Aborted when the client goes away. Read only by the routes that run the agent and answer
   * JSON: Deno.serve warns on the first response of a request whose `signal` was read.
   */
  readonly signal: AbortSignal;
  /** The body, reading no further than `limit` bytes: `null` once it goes past. Read once. */
  readBody(limit: number): Promise<Uint8Array | null>;
  /** The Web `Request`: the same one on every call. */
  request(): Request;
  /**
   * The connection came in on a loopback address (the node server says so; a Web `Request`
   * does not), so a `Host` that is not a loopback name is a page that rebound its DNS name here.
   */
  readonly loopback?: boolean;
  /** The address of the client's socket, when the server says (`serve()`, `toNodeListener()`); never read off a header. */
  readonly clientAddress?: string | undefined;
}

/**
 * What the routes tell the server that called them of one request (the node server's request log
 * and playground): an object of the caller's, filled as the answer is made. The routes write nothing
 * onto the request they were given (design §32).
 */
export interface Seen {
  /** The principal auth accepted, if any. */
  principal?: Principal;
}

/**
 * The socket address of each `Request` the node bridge built (`toNodeListener()` of a handler of
 * your own that hands its `Request` on to `agentHandler()`): kept beside the request, where no
 * header can reach it.
 */
export const socketAddresses = new WeakMap<Request, string>();

/** The route view of a Web `Request`. */
export function webRouteRequest(request: Request): RouteRequest {
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    get signal() {
      return request.signal;
    },
    readBody: (limit) => readBoundedBody(request.body, limit),
    request: () => request,
    get clientAddress() {
      return socketAddresses.get(request);
    },
  };
}

/**
 * A URL's path, read off the string when it is plain: an origin, then segments of letters,
 * digits and `-_~.` (none starting with `.`, so no dot segment), then at most a query. Such a
 * path is already what the WHATWG parser would make of it. Any other URL goes through
 * `new URL`, which costs more (docs/design.md §30, "Speed tricks and what they bought").
 * `undefined` for a URL that does not parse.
 */
const PLAIN_URL = /^https?:\/\/[^/?#\\]+((?:\/[\w~-][\w.~-]*)*\/?)(?:\?[^#]*)?$/;

export function pathOf(url: string): string | undefined {
  const plain = PLAIN_URL.exec(url)?.[1];
  if (plain) return plain;
  try {
    return new URL(url).pathname;
  } catch {
    return undefined;
  }
}
