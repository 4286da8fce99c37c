import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import {
  AuthConfigError,
  authResponseText,
  wwwAuthenticateLines,
  readBoundedBody,
  checkOptionNames,
  kindOf,
} from '../auth/internal.ts';
import { AgentError } from '../agent/errors.ts';
import { ROUTES, type AgentRoutes } from '../http/handler.ts';
import { errorReply, HttpError, JsonReply, type Reply, responseText } from '../http/responses.ts';
import { socketAddresses, type RouteRequest } from '../http/route-request.ts';

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
  /** Called when a request arrives (not for a request whose target is not a path: it is answered 400 at once). */
  onRequest?(request: NodeRequest): void;
  /** Called once that request's response is over: sent, or its connection gone. */
  onClose?(request: NodeRequest): void;
  /** Called before the response's head is written. */
  beforeWrite?(res: ServerResponse): void;
  /** Milliseconds a request's body has to arrive whole once its head is in; then 408 and the connection closes. */
  bodyTimeoutMs?: number;
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
 * JSON answers of the route handler go out in one write with `Content-Length`; other bodies
 * are streamed. Given `agentHandler(…)` itself, it serves its routes without building a
 * `Request` (unless an auth entry of your own needs one) or a `Response` for a JSON answer.
 * The request's `signal` is the bridge's own: a copy made with `new Request(request)` does not
 * follow it unless given `signal: request.signal`.
 * @example
 * import { createServer } from 'node:http';
 * createServer(toNodeListener(agentHandler(agent, { basePath: '/agent', auth }))).listen(3000);
 */
export function toNodeListener(handler: WebHandler, options: NodeListenerOptions = {}): NodeListener {
  if (typeof handler !== 'function')
    throw new AuthConfigError('toNodeListener(): handler must be a function from a Request to a Response');
  if (typeof options !== 'object' || options === null)
    throw new AuthConfigError('toNodeListener(): options must be { origin? }');
  checkOptionNames('toNodeListener()', options, ['origin']);
  const { origin } = options;
  if (
    origin !== undefined &&
    !(typeof origin === 'string' && /^https?:\/\/[^/?#]+$/.test(origin) && URL.canParse(origin))
  ) {
    throw new AuthConfigError(
      'toNodeListener(): origin must be a URL origin such as "https://agent.example.com" (no path)',
    );
  }
  // agentHandler()'s own routes, when given one: no Request or Response is built for its JSON answers.
  const routes = (handler as { [ROUTES]?: AgentRoutes })[ROUTES];
  if (routes !== undefined) return nodeBridge((request) => routes(request), { origin: options.origin });
  const checked = (response: unknown): Reply =>
    response instanceof Response
      ? response
      : failed(
          new AuthConfigError(
            `toNodeListener(): the handler must return a Response (or a promise of one); got ${kindOf(response)}`,
          ),
        );
  return nodeBridge(
    (request) => {
      const result: unknown = handler(request.request());
      return typeof (result as PromiseLike<unknown> | null)?.then === 'function'
        ? Promise.resolve(result).then(checked)
        : checked(result);
    },
    { origin: options.origin },
  );
}

/** The bridge under `toNodeListener()` and `serve()`; the handler also gets the node request and response. */
export function nodeBridge(
  handler: (request: NodeRequest, req: IncomingMessage, res: ServerResponse) => Reply | Promise<Reply>,
  options: BridgeOptions = {},
): NodeListener {
  const { origin, onRequest, onClose, beforeWrite, bodyTimeoutMs } = options;
  let bodyTakenTold = false;
  const bodyTaken = (): Reply => {
    // Once per listener: the cause is the mounting, the same for every request.
    if (!bodyTakenTold)
      console.error(
        "agentward: the request body was already read by something mounted before the agent handler (a body parser such as express.json(), or Fastify's content-type parsers): mount it before any body parser; answering 500",
      );
    bodyTakenTold = true;
    return errorReply(500, 'Internal Server Error');
  };
  const deliver = (response: unknown, res: ServerResponse) => {
    try {
      if (!(response instanceof Response || response instanceof JsonReply))
        response = failed(
          new AuthConfigError(`serve(): a channel must answer with a Response; got ${kindOf(response)}`),
        );
      if (cutOff.has(res.req) && !res.req.complete) res.shouldKeepAlive = false;
      // A large JSON answer (a long transcript) was just serialized: it is written in the next turn of the event loop.
      if (response instanceof JsonReply && response.text.length > LARGE_REPLY && !deferred.has(response)) {
        deferred.add(response);
        return void setImmediate(deliver, response, res);
      }
      beforeWrite?.(res);
      const written = writeResponse(response as Reply, res);
      if (written !== undefined) written.catch((error: unknown) => writeFailed(error, res));
    } catch (error) {
      writeFailed(error, res);
    }
  };
  // One listener per response, made once per bridge: `on` rather than `once` ('close' comes once)
  // spares the wrapper `once` makes per call. node sends a pipelined response that waits its turn
  // no 'close' when the connection goes, so the connection's own 'close' (one listener per
  // connection) ends every response of this bridge still open on it.
  const open: unique symbol = Symbol('agentward.open');
  type Connection = Socket & { [open]?: Set<Tracked> };
  function closed(this: Tracked): void {
    const request = this[VIEW];
    if (request === undefined) return;
    this[VIEW] = undefined;
    (this.req.socket as Connection | null)?.[open]?.delete(this);
    request.closed(!this.writableFinished);
    onClose?.(request);
  }
  function connectionClosed(this: Connection): void {
    for (const res of this[open]!) closed.call(res);
  }
  return (req, res) => {
    const path = (req as { originalUrl?: unknown }).originalUrl;
    const url = typeof path === 'string' ? path : (req.url ?? '');
    // The origin is the server's own, never the Host header: routes see only the path and query.
    if (!url.startsWith('/')) return deliver(errorReply(400, 'Bad Request'), res);
    // A body parser mounted first (express.json(), Fastify's parsers) took the body: the handler would wait for it forever.
    if (req.readableDidRead || req.readableFlowing !== null || req.readableEnded) return deliver(bodyTaken(), res);
    const request = new NodeRequest(req, (origin ?? localOrigin(req)) + url);
    (res as Tracked)[VIEW] = request;
    res.on('close', closed);
    const connection = req.socket as Connection | null;
    if (connection !== null) {
      let responses = connection[open];
      if (responses === undefined) {
        responses = connection[open] = new Set();
        connection.once('close', connectionClosed);
      }
      responses.add(res);
    }
    onRequest?.(request);
    if (bodyTimeoutMs !== undefined && hasBody(req)) request.timeBody(bodyTimeoutMs);
    let result: Reply | Promise<Reply>;
    try {
      result = handler(request, req, res);
    } catch (error) {
      return deliver(failed(error), res);
    }
    if (typeof (result as Partial<Promise<Response>>)?.then !== 'function') return deliver(result, res);
    Promise.resolve(result).then(
      (response) => deliver(response, res),
      (error: unknown) => deliver(failed(error), res),
    );
  };
}

/** JSON answers longer than this are written a turn of the event loop after they were made (~17 ms to write 2 MiB). */
const LARGE_REPLY = 256 * 1024;
const deferred = new WeakSet<JsonReply>();

const VIEW = Symbol('agentward.request');
type Tracked = ServerResponse & { [VIEW]?: NodeRequest };
/** Requests whose body reader gave up before the end: their connection closes after the answer. */
const cutOff = new WeakSet<IncomingMessage>();
/** Stops queueing a request's body for the handler (a Web body stream) and discards the rest. */
const drains = new WeakMap<IncomingMessage, (error?: unknown) => void>();

const clientGone = () =>
  new DOMException('The client closed the connection before sending the whole body', 'AbortError');
const answeredFirst = () => new DOMException('The response was sent before the request body was read', 'AbortError');
const bodyTimedOut = () => new HttpError(408, 'Request Timeout');

function failed(error: unknown): Reply {
  // A request that cannot be a Web Request (NodeRequest.request()) is the client's error.
  if (error instanceof HttpError) return errorReply(error.status, error.message);
  console.error('agentward: a request failed; answering 500', error);
  return errorReply(500, 'Internal Server Error');
}

function writeFailed(error: unknown, res: ServerResponse): void {
  console.error('agentward: writing a response failed', error);
  res.destroy();
}

/** `http://<local address>:<port>` of the connection: the server's own origin. */
/** Whether the request's head announces a body (node's own rule: a length above 0, or chunks). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

function localOrigin(req: IncomingMessage): string {
  const { localAddress, localPort } = req.socket;
  if (localAddress === undefined || localPort === undefined) return 'http://localhost';
  const host = localAddress.startsWith('::ffff:') ? localAddress.slice(7) : localAddress;
  return `http://${host.includes(':') ? `[${host}]` : host}:${localPort}`;
}

/**
 * A body read in progress, kept on node's request: its listeners are the same two functions for
 * every request, not closures made per read.
 */
const READING = Symbol('agentward.reading');
interface BodyRead {
  chunks: Buffer[];
  size: number;
  readonly limit: number;
  resolve(bytes: Uint8Array | null): void;
  reject(error: unknown): void;
}
type Reading = IncomingMessage & { [READING]?: BodyRead };

function onBodyData(this: Reading, chunk: Buffer): void {
  const read = this[READING]!;
  read.size += chunk.byteLength;
  if (read.size <= read.limit) return void read.chunks.push(chunk);
  stopReading(this);
  cutOff.add(this);
  read.resolve(null);
  // Nobody reads on: node discards the rest as it comes.
  this.resume();
}

function onBodyEnd(this: Reading): void {
  const { chunks, size, resolve } = this[READING]!;
  this[READING] = undefined;
  // A Buffer is a Uint8Array: handed on as it is.
  resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
}

// node's request emits no 'error' without a listener: a connection that goes is heard through
// the response's or the connection's 'close' (NodeRequest.closed()), the client's doing, no
// failure of ours to log.
function stopReading(req: Reading): void {
  req[READING] = undefined;
  req.off('data', onBodyData).off('end', onBodyEnd);
}

/** A node request's headers as `Headers.get` reads them: a header's values joined with ", ". */
class NodeHeaders {
  readonly #raw: readonly string[];

  constructor(raw: readonly string[]) {
    this.#raw = raw;
  }

  /** Read off `rawHeaders`: node's own `req.headers` keeps only the first `Authorization`. */
  get(name: string): string | null {
    const raw = this.#raw;
    name = name.toLowerCase();
    let value: string | null = null;
    for (let i = 0; i < raw.length; i += 2) {
      const key = raw[i] as string;
      if (key.length === name.length && key.toLowerCase() === name)
        value = value === null ? (raw[i + 1] as string) : `${value}, ${raw[i + 1]}`;
    }
    return value;
  }
}

/**
 * The route view of a node request (`RouteRequest`): headers read off `rawHeaders`, the body
 * read off the node stream, and the Web `Request` built only when something asks for it.
 */
export class NodeRequest implements RouteRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: NodeHeaders;
  readonly #req: IncomingMessage;
  readonly #controller = new AbortController();
  #request: Request | undefined;
  #bodyRead = false;
  #bodyTimer: ReturnType<typeof setTimeout> | undefined;
  #timedOut = false;
  /** Set once the response is over: whether the client went away before it was out. */
  #over: 'gone' | 'answered' | undefined;

  constructor(req: IncomingMessage, url: string) {
    this.#req = req;
    this.method = req.method ?? 'GET';
    this.url = url;
    this.headers = new NodeHeaders(req.rawHeaders);
  }

  /** Aborted when the client goes away before the response is out, or by `abort()`. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  abort(): void {
    this.#controller.abort();
  }

  /** The connection came in on a loopback address: a client on this machine (a browser's page included). */
  get loopback(): boolean {
    const address = this.#req.socket?.localAddress;
    return address !== undefined && /^(?:127\.|::1$|::ffff:127\.)/.test(address);
  }

  /** The address of the client's socket (an IPv4-mapped IPv6 address as IPv4): what `limits` counts an anonymous caller by. */
  get clientAddress(): string | undefined {
    const address = this.#req.socket?.remoteAddress;
    return address?.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
  }

  request(): Request {
    if (this.#request !== undefined) return this.#request;
    if (this.#bodyRead) throw new AgentError('INTERNAL', 'NodeRequest.request(): the request body was already read');
    const request = toRequest(this.#req, this.url, this.signal);
    if (request === undefined) throw new HttpError(400, 'Bad Request');
    // A handler of your own that hands this Request to agentHandler() passes the address on with it.
    const address = this.clientAddress;
    if (address !== undefined) socketAddresses.set(request, address);
    return (this.#request = request);
  }

  /**
   * The body, no further than `limit` bytes: `null` once it goes past (the rest is discarded,
   * and the connection closes after the answer). A client that goes away first is an AbortError.
   */
  readBody(limit: number): Promise<Uint8Array | null> {
    if (this.#request !== undefined) return readBoundedBody(this.#request.body, limit);
    if (this.#bodyRead)
      return Promise.reject(new AgentError('INTERNAL', 'NodeRequest.readBody(): the request body was already read'));
    this.#bodyRead = true;
    if (this.#over !== undefined) return Promise.reject(this.#over === 'gone' ? clientGone() : answeredFirst());
    if (this.#timedOut) return Promise.reject(bodyTimedOut());
    const req = this.#req as Reading;
    const read = new Promise<Uint8Array | null>(
      (resolve, reject) => (req[READING] = { chunks: [], size: 0, limit, resolve, reject }),
    );
    req.on('data', onBodyData).on('end', onBodyEnd);
    return read;
  }

  /**
   * Gives the body `ms` to arrive whole (serve()'s `timeouts.bodyMs`): past it, a read waiting for
   * it fails with 408 (the route answers that, and the connection closes after), a later read
   * fails the same way, and a response already out leaves only the connection to close.
   */
  timeBody(ms: number): void {
    this.#bodyTimer = setTimeout(() => {
      const req = this.#req as Reading;
      if (req.complete) return;
      this.#timedOut = true;
      cutOff.add(req);
      if (this.#over !== undefined) return void req.socket?.destroy();
      const read = req[READING];
      if (read !== undefined) {
        stopReading(req);
        read.reject(bodyTimedOut());
        req.resume();
      } else {
        drains.get(req)?.(bodyTimedOut());
      }
    }, ms);
    this.#bodyTimer.unref?.();
  }

  /** The response is over: a client gone first aborts the signal; a body still unread is discarded. */
  closed(unfinished: boolean): void {
    // A body still arriving after the answer keeps its timer: the connection goes when it fires.
    if (this.#req.complete) clearTimeout(this.#bodyTimer);
    this.#over = unfinished ? 'gone' : 'answered';
    if (unfinished) this.#controller.abort();
    const req = this.#req as Reading;
    const read = req[READING];
    if (read !== undefined) {
      stopReading(req);
      read.reject(unfinished ? clientGone() : answeredFirst());
      req.resume();
    }
    drains.get(req)?.();
  }
}

/**
 * The Web `Request` of a node request, its body streamed; `undefined` when the URL or a header
 * cannot be one. Its `signal` is the bridge's own (aborted when the client disconnects): handed
 * to the `Request` constructor it costs a WeakRef, an abort listener and a finalizer registration
 * per request (docs/design.md §30, "Speed tricks and what they bought"), so the request keeps it
 * in a field. A copy (`new Request(request)`) does not follow it: pass `signal: request.signal` along.
 */
class BridgeRequest extends Request {
  readonly #signal: AbortSignal;

  constructor(url: string, init: RequestInit, signal: AbortSignal) {
    super(url, init);
    this.#signal = signal;
  }

  override get signal(): AbortSignal {
    return this.#signal;
  }
}

function toRequest(req: IncomingMessage, url: string, signal: AbortSignal): Request | undefined {
  try {
    const method = req.method ?? 'GET';
    const length = req.headers['content-length'];
    const hasBody =
      method !== 'GET' &&
      method !== 'HEAD' &&
      ((length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined);
    const init: RequestInit & { duplex?: 'half' } = hasBody
      ? { method, body: bodyStream(req), duplex: 'half' }
      : { method };
    const request = new BridgeRequest(url, init, signal);
    // Appended to the request's own headers: a Headers object handed to the constructor would be
    // built, then copied (docs/design.md §30, "Speed tricks and what they bought").
    const { headers } = request;
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
    return request;
  } catch {
    return undefined;
  }
}

/**
 * The request body as a Web stream, with back-pressure: the node stream is paused while the
 * queue is full. Cheaper than `Readable.toWeb()` (docs/design.md §30, "Speed tricks and what they bought").
 */
function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let queue!: ReadableStreamDefaultController<Uint8Array>;
  let settled = false;
  const settle = (error?: unknown) => {
    if (settled) return;
    settled = true;
    if (error === undefined) queue.close();
    else queue.error(error);
  };
  const onData = (chunk: Buffer) => {
    queue.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    if ((queue.desiredSize ?? 0) <= 0) req.pause();
  };
  drains.set(req, (error = answeredFirst()) => {
    // The response is over, the reader gave up, or the body was too slow: a read still waiting fails, the rest is discarded.
    req.off('data', onData);
    if (!req.complete) {
      settle(error);
      req.resume();
    }
  });
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        queue = controller;
        req.on('data', onData);
        req.once('end', () => settle());
        req.once('error', () => settle(clientGone()));
        req.once('close', () => {
          if (!req.complete) settle(clientGone());
        });
        req.pause();
      },
      pull() {
        req.resume();
      },
      cancel() {
        // The reader stopped (a body over its limit): node discards the rest, and the connection
        // closes once the answer (a 413) is out, rather than dying before it.
        settled = true;
        cutOff.add(req);
        drains.get(req)?.();
      },
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
  );
}

/** Writes `response` on `res`; a promise only while a streamed body is still going out. */
function writeResponse(response: Reply, res: ServerResponse): Promise<void> | undefined {
  if (response instanceof JsonReply) {
    const head: (string | number)[] = [];
    for (const name in response.headers) head.push(name, response.headers[name] as string);
    return writeText(res, response.status, head, response.text);
  }
  const text = responseText(response) ?? authResponseText(response);
  const head: (string | number)[] = [];
  let challenge = false;
  for (const [name, value] of response.headers) {
    if (name === 'www-authenticate') challenge = true;
    else if (text === undefined || name !== 'content-length') head.push(name, value);
  }
  if (challenge)
    for (const line of wwwAuthenticateLines(response) ?? [response.headers.get('www-authenticate')!])
      head.push('www-authenticate', line);
  if (text !== undefined) return writeText(res, response.status, head, text);
  res.writeHead(response.status, head as string[]);
  if (response.body === null) {
    res.end();
    return undefined;
  }
  return streamBody(response.body, res);
}

/** A known JSON body: one write with its Content-Length, as node:http itself would. */
function writeText(res: ServerResponse, status: number, head: (string | number)[], text: string): undefined {
  head.push('content-length', Buffer.byteLength(text));
  res.writeHead(status, head as string[]);
  res.end(text);
  return undefined;
}

async function streamBody(body: ReadableStream<Uint8Array>, res: ServerResponse): Promise<void> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  // A client gone, even before the answer: the body is cancelled, which stops a streamed run.
  if (res.destroyed) return cancel();
  res.once('close', cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) return cancel();
      if (!res.write(value)) await drained(res);
    }
    res.end();
  } catch (error) {
    console.error('agentward: a response body failed while streaming', error);
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
