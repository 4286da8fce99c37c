import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAgent } from '../agent/agent.ts';
import { answersWithEcho } from '../agent/echo-mark.ts';
import { checkStore } from '../agent/options.ts';
import type { Agent, AgentOptions, Store } from '../agent/types.ts';
import {
  API_TOKEN_ID,
  apiTokenDigestEntry,
  B64TOKEN,
  MIN_TOKEN_LENGTH,
  notASecret,
  sha256,
  AuthConfigError,
  checkOptionNames,
  kindOf,
  authEntries,
  type AuthOption,
} from '../auth/internal.ts';
import { agentRoutes, HANDLER_OPTION_NAMES, refuseEmptyAuth, type AgentHandlerOptions } from '../http/handler.ts';
import type { Seen } from '../http/route-request.ts';
import type { Channel } from './channel.ts';
import { fileStore } from './file-store.ts';
import { type NodeListener, nodeBridge, type NodeRequest } from './listener.ts';
import { DEV_INSPECT, devInspector } from './dev-inspect.ts';
import { playgroundRoute } from './playground.ts';
import { requestLog, requestLogFormat, type RequestLogFormat } from './request-log.ts';

export interface ServeOptions {
  /**
   * The agent, or the options of `createAgent`: then the server creates it with `store`
   * (default: `fileStore(AGENT_DATA_DIR or './.data')`). A created agent keeps the store it
   * was created with: give it `createAgent({ store: fileStore(dir) })`.
   */
  agent: Agent | AgentOptions;
  /** The same list or one entry as the route handler's `auth`; `AGENT_API_TOKEN` is appended. */
  auth?: AuthOption;
  /** Hears why a bearer token was refused, once per refused request (`routeAuth`'s `onRefused`); never the token. */
  onRefused?: AgentHandlerOptions['onRefused'];
  /** RFC 9728 metadata served without auth at `/.well-known/oauth-protected-resource` + the resource's path (`agentHandler`'s). */
  protectedResource?: AgentHandlerOptions['protectedResource'];
  /** Serve the agent as a remote MCP server at `POST <base>/mcp` (`agentHandler`'s `mcp`). */
  mcp?: AgentHandlerOptions['mcp'];
  /** Scopes per group of routes (`agentHandler`'s `scopes`): a principal without them gets 403 `insufficient_scope`. */
  scopes?: AgentHandlerOptions['scopes'];
  /** Scope hierarchies for `scopes` and `mcp.scopes` (`agentHandler`'s `scopeImplies`). */
  scopeImplies?: AgentHandlerOptions['scopeImplies'];
  /** Limits per principal and 401s per client address (`agentHandler`'s `limits`); the client address is the socket's unless `clientAddress` says. */
  limits?: AgentHandlerOptions['limits'];
  /**
   * OpenTelemetry spans of each request (`agentHandler`'s `telemetry`, design §28); an agent given
   * as options gets it too, unless its own `telemetry` says otherwise.
   */
  telemetry?: AgentHandlerOptions['telemetry'];
  /** One `AuditRecord` per request past the guards, allowed or refused (`agentHandler`'s `audit`, design §32). */
  audit?: AgentHandlerOptions['audit'];
  /** As `agentHandler`'s `approvals` (design §33). */
  approvals?: AgentHandlerOptions['approvals'];
  /** Prefix of the agent routes; default `/agent`. */
  basePath?: string;
  /** Default 3000; `0` picks a free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Mounted at `/channels/<key>`, outside the auth list: each verifies its own requests. */
  channels?: Readonly<Record<string, Channel>>;
  /** The store of an agent given as options. */
  store?: Store;
  /** One line per request on stdout: `text`, `json` or `off`; default `AGENT_LOG`, else `text`. Never a credential. */
  log?: RequestLogFormat;
  /** Serve the browser chat page at `<basePath>/playground` (outside auth: the user pastes a token into it); default false. */
  playground?: boolean;
  /** How long `close()` lets requests and channel runs in flight finish before aborting them; default 10 000. */
  shutdownTimeoutMs?: number;
  /**
   * Limits on slow clients, in milliseconds: a request's head must arrive within `headersMs` and
   * its whole body within `bodyMs` after that (default 30 000 each); past either, 408 and the
   * connection closes.
   */
  timeouts?: { headersMs?: number; bodyMs?: number };
}

const SERVE_OPTION_NAMES = Object.freeze([
  ...HANDLER_OPTION_NAMES,
  'agent',
  'port',
  'host',
  'channels',
  'store',
  'log',
  'playground',
  'shutdownTimeoutMs',
  'timeouts',
]);

/** Slow clients (design §19): the head within 30 s, then the whole body within 30 s. */
export const SERVE_TIMEOUTS = Object.freeze({ headersMs: 30_000, bodyMs: 30_000 });

function readTimeouts(value: unknown): { headersMs: number; bodyMs: number } {
  if (value === undefined) return SERVE_TIMEOUTS;
  if (typeof value !== 'object' || value === null)
    throw new AuthConfigError('serve(): timeouts must be { headersMs?, bodyMs? }');
  checkOptionNames('serve(): timeouts', value, ['headersMs', 'bodyMs']);
  const { headersMs = SERVE_TIMEOUTS.headersMs, bodyMs = SERVE_TIMEOUTS.bodyMs } = value as {
    headersMs?: unknown;
    bodyMs?: unknown;
  };
  for (const [name, ms] of [
    ['headersMs', headersMs],
    ['bodyMs', bodyMs],
  ] as const) {
    if (!Number.isInteger(ms) || (ms as number) < 1 || (ms as number) > 3_600_000)
      throw new AuthConfigError(`serve(): timeouts.${name} must be a whole number of milliseconds from 1 to 3600000`);
  }
  return { headersMs: headersMs as number, bodyMs: bodyMs as number };
}

/** The checks of serve()'s own plain values: what `createServer().listen()` would refuse later, or misread. */
function checkServeValues(values: { port: unknown; host: unknown; shutdownTimeoutMs: unknown; playground: unknown }) {
  const { port, host, shutdownTimeoutMs, playground } = values;
  if (!Number.isInteger(port) || (port as number) < 0 || (port as number) > 65535)
    throw new AuthConfigError(`serve(): port must be an integer from 0 to 65535; got ${kindOf(port)}`);
  if (typeof host !== 'string' || host === '')
    throw new AuthConfigError(`serve(): host must be a non-empty string; got ${kindOf(host)}`);
  if (!Number.isInteger(shutdownTimeoutMs) || (shutdownTimeoutMs as number) < 0)
    throw new AuthConfigError(
      `serve(): shutdownTimeoutMs must be a whole number of milliseconds; got ${kindOf(shutdownTimeoutMs)}`,
    );
  if (playground !== undefined && typeof playground !== 'boolean')
    throw new AuthConfigError(`serve(): playground must be true or false; got ${kindOf(playground)}`);
}

/** `channels` by the path each is mounted at: keys letters, digits, `-`, `_`; values channels. */
function readChannels(channels: unknown): Map<string, Channel> {
  if (typeof channels !== 'object' || channels === null || Array.isArray(channels))
    throw new AuthConfigError(`serve(): channels must be an object of names to channels; got ${kindOf(channels)}`);
  const channelByPath = new Map<string, Channel>();
  for (const [key, channel] of Object.entries(channels)) {
    if (!/^[A-Za-z0-9_-]+$/.test(key))
      throw new AuthConfigError(
        `serve(): channel key ${JSON.stringify(key.slice(0, 64))} must be letters, digits, "-" or "_"`,
      );
    if (typeof channel !== 'function')
      throw new AuthConfigError(`serve(): channel "${key}" must be a channel such as slackChannel(…)`);
    channelByPath.set(`/channels/${key}`, channel as Channel);
  }
  return channelByPath;
}

export interface AgentServer {
  /** The server's origin, e.g. `http://127.0.0.1:3000` (the agent routes are under `basePath`). */
  readonly url: string;
  /** Stops accepting connections, lets requests in flight finish (within `shutdownTimeoutMs`, then aborts them), and resolves once all is closed. */
  close(): Promise<void>;
}

/**
 * Serves an agent over `node:http`: the agent routes under `basePath` behind `auth`, the
 * channels at `/channels/<key>` outside it. `AGENT_API_TOKEN`, read now, appends
 * `apiToken(AGENT_API_TOKEN)` after the configured entries (it is the whole list when none
 * are configured). A client that disconnects aborts its request's `signal`, so its run stops.
 * Each `WWW-Authenticate` challenge is written as its own header line.
 * @example
 * const server = await serve({ agent, auth: [jwt({ secret, audience: 'agent' })], port: 8787 });
 * process.once('SIGTERM', () => server.close());
 */
export async function serve(options: ServeOptions): Promise<AgentServer> {
  if (typeof options !== 'object' || options === null)
    throw new AuthConfigError('serve(): options { agent } are required');
  checkOptionNames('serve()', options, SERVE_OPTION_NAMES);
  refuseEmptyAuth('serve()', options);
  const { basePath = '/agent', port = 3000, host = '127.0.0.1', channels = {}, shutdownTimeoutMs = 10_000 } = options;
  checkServeValues({ port, host, shutdownTimeoutMs, playground: options.playground });
  const timeouts = readTimeouts(options.timeouts);
  const channelByPath = readChannels(channels);
  const agent = serverAgent(options);
  const log = requestLog(requestLogFormat(options.log));
  const auth = serverAuth(options.auth, process.env.AGENT_API_TOKEN);
  if (agent.sessions === 'owned' && auth === undefined) {
    throw new AuthConfigError(
      "serve(): an agent with sessions: 'owned' needs auth (or AGENT_API_TOKEN): without it no caller has a principal to own a session",
    );
  }
  // `agentward dev` only: the principal or refusal of each answer, for the playground.
  const dev =
    (options as { [DEV_INSPECT]?: unknown })[DEV_INSPECT] === true
      ? devInspector(basePath, auth, options.onRefused)
      : undefined;
  const routes = agentRoutes(
    agent,
    {
      basePath,
      ...(auth !== undefined && { auth }),
      onRefused: dev?.onRefused ?? options.onRefused,
      protectedResource: options.protectedResource,
      scopes: options.scopes,
      scopeImplies: options.scopeImplies,
      mcp: options.mcp,
      limits: options.limits,
      telemetry: options.telemetry,
      audit: options.audit,
      approvals: options.approvals,
    },
    'serve()',
  );
  const { mcp } = options;
  if (
    mcp !== undefined &&
    mcp !== false &&
    (mcp === true || mcp.allowedHosts === undefined) &&
    !LOOPBACK_HOST.test(host)
  ) {
    console.warn(
      `agentward: serve() listens on ${host} with the MCP route and no mcp.allowedHosts: a page that rebinds its DNS name to this server reaches the route; set mcp.allowedHosts to the names clients use`,
    );
  }
  const playground =
    options.playground === true
      ? playgroundRoute(basePath, { sessions: agent.sessions, dev: dev !== undefined, echo: answersWithEcho(agent) })
      : undefined;

  const inFlight = new Set<NodeRequest>();
  const background = new Set<Promise<unknown>>();
  const waitUntil = (task: Promise<unknown>) => {
    const settled = task.then(
      () => undefined,
      () => undefined,
    );
    background.add(settled);
    void settled.then(() => background.delete(settled));
  };
  let whenIdle: (() => void) | undefined;
  let closing: Promise<void> | undefined;

  let listener: NodeListener | undefined;
  const server = createServer(
    {
      // node answers a head slower than this with 408 and closes the connection itself.
      headersTimeout: timeouts.headersMs,
      // Past head and body both, node drops the connection, whatever the route is doing.
      requestTimeout: timeouts.headersMs + timeouts.bodyMs + 1_000,
      // How often node looks at those two: often enough for the limits to hold within a second.
      connectionsCheckingInterval: Math.min(1_000, Math.ceil(timeouts.headersMs / 2)),
    },
    (req, res) => listener?.(req, res),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: boundPort } = server.address() as AddressInfo;
  const origin = `http://${urlHost(host)}:${boundPort}`;

  listener = nodeBridge(
    (request, req, res) => {
      // What the routes saw of this request (its principal), for the log line: never written onto the request.
      const seen: Seen = {};
      log.track(req, res, seen);
      const url = req.url ?? '';
      const query = url.indexOf('?');
      const path = query === -1 ? url : url.slice(0, query);
      const channel = channelByPath.get(path);
      if (channel) return channel(request.request(), { agent, waitUntil });
      return (
        playground?.(path, request.method) ??
        (dev === undefined ? routes(request, seen) : dev.serve(path, request, res, routes, seen))
      );
    },
    {
      origin,
      onRequest(request) {
        inFlight.add(request);
      },
      onClose(request) {
        inFlight.delete(request);
        if (inFlight.size === 0) whenIdle?.();
      },
      beforeWrite(res) {
        if (closing !== undefined) res.shouldKeepAlive = false;
      },
      bodyTimeoutMs: timeouts.bodyMs,
    },
  );

  function close(): Promise<void> {
    closing ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const requestsDone = new Promise<void>((resolve) => {
        whenIdle = resolve;
        if (inFlight.size === 0) resolve();
      });
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, shutdownTimeoutMs, 'timeout')));
      // Channel runs outlive their requests, and a request in flight may still start one.
      const finished = (async () => {
        await requestsDone;
        while (background.size > 0) await Promise.all(background);
      })();
      const outcome = await Promise.race([finished, timedOut]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        console.error(
          `agentward: ${inFlight.size} request(s) still running after ${shutdownTimeoutMs} ms; aborting them`,
        );
        for (const request of inFlight) request.abort();
      }
      server.closeAllConnections();
      await closed;
    })();
    return closing;
  }

  return { url: origin, close };
}

/**
 * Installs SIGTERM and SIGINT handlers that close `server` gracefully, then exit 0 (1 when
 * closing failed). The handlers are removed at the first signal, so a second one ends the
 * process at once. The CLI and the built server use it; `serve()` itself installs nothing.
 */
export function closeOnSignals(
  server: Pick<AgentServer, 'close'>,
  signals: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'],
): void {
  const onSignal = (signal: NodeJS.Signals) => {
    for (const name of signals) process.off(name, onSignal);
    console.log(`agentward: ${signal} received; finishing requests in flight`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('agentward: closing the server failed', error);
        process.exit(1);
      },
    );
  };
  for (const name of signals) process.on(name, onSignal);
}

function serverAgent(options: ServeOptions): Agent {
  const { agent, store } = options;
  if (store !== undefined) checkStore(store, 'serve(): store');
  if (typeof agent !== 'object' || agent === null)
    throw new AuthConfigError(`serve(): agent must be an agent (createAgent(…)) or its options; got ${kindOf(agent)}`);
  if (typeof (agent as Agent)?.send === 'function') {
    if (store !== undefined)
      console.warn(
        'agentward: serve() was given a created agent and a store; the agent keeps the store it was created with',
      );
    return agent as Agent;
  }
  const agentOptions = agent as AgentOptions;
  return createAgent({
    ...(options.telemetry !== undefined && { telemetry: options.telemetry }),
    ...agentOptions,
    store: store ?? agentOptions.store ?? fileStore(process.env.AGENT_DATA_DIR || '.data'),
  });
}

/**
 * The configured entries, then `apiToken(AGENT_API_TOKEN)` when it is set; no auth at all when
 * neither is. An empty AGENT_API_TOKEN is not a token, and not "unset" either (an unset variable
 * passed through, as by compose's `${AGENT_API_TOKEN}`): the server refuses to start. The entry
 * keeps the specification's id `'api-token'`; one warning when an entry of the list has it too.
 */
export function serverAuth(auth: AuthOption | undefined, token: string | undefined): AuthOption | undefined {
  if (readApiTokenEnv(token) === undefined) return auth;
  const entries = auth === undefined ? [] : authEntries(auth);
  if (entries.some((entry) => (entry as { [API_TOKEN_ID]?: string })[API_TOKEN_ID] === 'api-token')) {
    console.warn(
      'agentward: AGENT_API_TOKEN and an apiToken() entry of the auth list both have the id "api-token": their callers are one principal (give that entry its own id)',
    );
  }
  return [...entries, apiTokenDigestEntry(sha256(token as string), 'api-token', false)];
}

/**
 * AGENT_API_TOKEN as the server reads it: `undefined` when unset. Empty, outside the b64token
 * syntax, or not a secret (apiToken()'s rules: 16 characters or more, not a word an unset
 * variable turns into, design §26): an error naming the rule it broke, never its value.
 */
export function readApiTokenEnv(token = process.env.AGENT_API_TOKEN): string | undefined {
  if (token === undefined) return token;
  if (!B64TOKEN.test(token)) {
    throw new AuthConfigError(
      `serve(): AGENT_API_TOKEN must be a non-empty RFC 6750 b64token (letters, digits, -._~+/ and trailing =); got ${token === '' ? 'an empty string (unset it, or set it to a token)' : 'a string outside that syntax'}`,
    );
  }
  const weak = notASecret(token, MIN_TOKEN_LENGTH);
  if (weak !== undefined) throw new AuthConfigError(`serve(): AGENT_API_TOKEN ${weak}`);
  return token;
}

/** Listening addresses only this machine reaches. */
const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|::1|\[::1\])$/i;

/** The host of a URL for a listening address: `0.0.0.0` and `::` as `localhost`, IPv6 in brackets. */
export function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}
