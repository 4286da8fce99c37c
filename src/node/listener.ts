import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { wwwAuthenticateLines } from '../auth/responses.ts';
import { errorResponse } from '../http/responses.ts';

/** A Web handler, such as the route handler of `agentHandler()`. */
export type WebHandler = (request: Request) => Response | Promise<Response>;

/** A `node:http` request listener; Express and Fastify (through `reply.raw`) take it too. */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface NodeListenerOptions {
  /**
   * The origin of the `Request` URLs the handler sees, e.g. `https://agent.example.com`.
   * Default: the address the connection came in on (`http://127.0.0.1:3000`), never the
   * request's `Host` header. The route handler looks only at the path and the query.
   */
  origin?: string;
}

/** What `serve()` adds to the bridge: its own routing, and a view of each request in flight. */
export interface BridgeOptions {
  origin?: string;
  /** Called when a request arrives, with the controller that aborts its `signal`. */
  onRequest?(controller: AbortController, res: ServerResponse): void;
  /** Called before the response's head is written. */
  beforeWrite?(res: ServerResponse): void;
}

/**
 * Adapts a Web handler (`(Request) => Response`) to node:http's `(req, res)`, for
 * `http.createServer`, Express and Fastify. The request body is streamed to the handler, the
 * response body (server-sent events among them) is streamed back with back-pressure, a client
 * that disconnects aborts the request's `signal` (so its run stops), and each challenge of a
 * 401 is written as its own `WWW-Authenticate` header line. A handler that throws is logged
 * and answered `500 {"error":"Internal Server Error"}`. Express's `req.originalUrl` is used
 * when present, so the handler sees the full path under any mount point: keep the handler's
 * `basePath` equal to the path it is mounted at, and mount it before any body parser.
 * @example
 * import { createServer } from 'node:http';
 * createServer(toNodeListener(agentHandler(agent, { basePath: '/agent', auth }))).listen(3000);
 */
export function toNodeListener(handler: WebHandler, options: NodeListenerOptions = {}): NodeListener {
  if (typeof handler !== 'function') throw new TypeError('toNodeListener(): handler must be a function from a Request to a Response');
  if (options.origin !== undefined && !/^https?:\/\/[^/?#]+$/.test(options.origin)) {
    throw new TypeError('toNodeListener(): origin must be a URL origin such as "https://agent.example.com" (no path)');
  }
  return nodeBridge((request) => handler(request), { origin: options.origin });
}

/** The bridge under `toNodeListener()` and `serve()`; the handler also gets the node request and response. */
export function nodeBridge(handler: (request: Request, req: IncomingMessage, res: ServerResponse) => Response | Promise<Response>, options: BridgeOptions = {}): NodeListener {
  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const controller = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    options.onRequest?.(controller, res);
    const path = (req as { originalUrl?: unknown }).originalUrl;
    const url = typeof path === 'string' ? path : (req.url ?? '');
    // The origin is the server's own, never the Host header: routes see only the path and query.
    const request = url.startsWith('/') ? toRequest(req, (options.origin ?? localOrigin(req)) + url, controller.signal) : undefined;
    let response: Response;
    if (request === undefined) {
      response = errorResponse(400, 'Bad Request');
    } else {
      try {
        response = await handler(request, req, res);
        if (!(response instanceof Response)) throw new TypeError('the handler did not return a Response');
      } catch (error) {
        console.error('agentgate: a request failed; answering 500', error);
        response = errorResponse(500, 'Internal Server Error');
      }
    }
    options.beforeWrite?.(res);
    await writeResponse(response, res);
  }
  return (req, res) => {
    answer(req, res).catch((error: unknown) => {
      console.error('agentgate: writing a response failed', error);
      res.destroy();
    });
  };
}

/** `http://<local address>:<port>` of the connection: the server's own origin. */
function localOrigin(req: IncomingMessage): string {
  const { localAddress, localPort } = req.socket;
  if (localAddress === undefined || localPort === undefined) return 'http://localhost';
  const host = localAddress.startsWith('::ffff:') ? localAddress.slice(7) : localAddress;
  return `http://${host.includes(':') ? `[${host}]` : host}:${localPort}`;
}

/** The Web `Request` of a node request, its body streamed; `undefined` when the URL or a header cannot be one. */
function toRequest(req: IncomingMessage, url: string, signal: AbortSignal): Request | undefined {
  try {
    return webRequest(req, url, signal);
  } catch {
    return undefined;
  }
}

function webRequest(req: IncomingMessage, url: string, signal: AbortSignal): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  const method = req.method ?? 'GET';
  const length = req.headers['content-length'];
  const hasBody = method !== 'GET' && method !== 'HEAD' && ((length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined);
  if (!hasBody) return new Request(url, { method, headers, signal });
  return new Request(url, { method, headers, signal, body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } as RequestInit);
}

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const head: string[] = [];
  for (const [name, value] of response.headers) {
    if (name !== 'www-authenticate') head.push(name, value);
  }
  const challenge = response.headers.get('www-authenticate');
  if (challenge !== null) for (const line of wwwAuthenticateLines(response) ?? [challenge]) head.push('www-authenticate', line);
  res.writeHead(response.status, head);
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  res.once('close', cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) await drained(res);
    }
    res.end();
  } catch (error) {
    console.error('agentgate: a response body failed while streaming', error);
    res.destroy();
  } finally {
    res.off('close', cancel);
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
