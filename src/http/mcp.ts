// The agent as a remote MCP server (design §18): `POST <base>/mcp`, the Streamable HTTP
// transport without sessions, answering each JSON-RPC 2.0 request with one JSON answer.
// The tools themselves (`ask`, `decide`, `read`) are in mcp-tools.ts; this file is the wire.
import type { Principal, TurnMeter } from '../agent/types.ts';
import { AuthConfigError, isScopeList, checkOptionNames } from '../auth/internal.ts';
import { readBodyBytes } from './body.ts';
import { type IdText, idSource, readJson, rpcReply, rpcTooMany, rpcUnavailable } from './json-rpc.ts';
import {
  agentToolOf,
  auditUnavailable,
  type CallIds,
  callTool,
  listTools,
  toolOf,
  type McpAgent,
} from './mcp-tools.ts';
import type { McpTool } from './operations.ts';
import { errorReply, failureReply, JsonReply, type Reply } from './responses.ts';
import type { RouteRequest } from './route-request.ts';
import { VERSION } from './version.ts';
import type { Telemetry } from '../agent/telemetry.ts';
import { tracedToolCall } from './telemetry.ts';
import { isRecord, nonEmptyString } from '../agent/shapes.ts';

/** `mcp` of `agentHandler()` and `serve()`. */
export interface McpOptions {
  /** The server's name in `initialize` (default: the agent's name). */
  name?: string;
  /** A display name for hosts. */
  title?: string;
  /**
   * Scopes each tool requires of the principal's verified claims; without them, 403
   * `insufficient_scope` naming them. Besides `ask`, `decide` and `read`, any agent tool `tools`
   * exposes (design §36): its call needs the entry's scopes, `scopes.mcp` and these, no scope group.
   */
  scopes?: { ask?: readonly string[]; decide?: readonly string[]; read?: readonly string[] } & Readonly<
    Record<string, readonly string[]>
  >;
  /**
   * List the agent's own tools as MCP tools beside `ask`, `decide` and `read` (design §36): `'agent'` all
   * of them, or the names given. Off by default. A call runs through the agent's tool path
   * (arguments checked, approval asked: a call that needs one answers `awaiting-approval` and is
   * decided with `decide`). A `tools` function of the agent is called with the caller's principal,
   * so each caller sees the tools it gets; one named `ask`, `decide` or `read` is left out (a fixed
   * tool of one of those names exposed here is an error at creation).
   */
  tools?: 'agent' | readonly string[];
  /** Origins (`https://host[:port]`) besides the server's own whose browsers may call the route. */
  allowedOrigins?: readonly string[];
  /**
   * The names (`host`, any port, or `host:port`) clients address the server by. Set, a request
   * whose `Host` is not one of them gets 403 before auth, on any listener (DNS rebinding); on a
   * loopback listener they are allowed besides the loopback names. Set it on any non-loopback host.
   */
  allowedHosts?: readonly string[];
}

/** The checked `mcp` option. */
export interface McpConfig {
  readonly name: string;
  readonly title: string | undefined;
  readonly scopes: Readonly<Record<string, readonly string[]>>;
  /** The agent tools exposed: all (`'agent'`), those named, or none. */
  readonly tools: 'agent' | readonly string[] | undefined;
  readonly allowedOrigins: ReadonlySet<string>;
  /** `allowedHosts`, lower case: when set, the only names the server answers to. */
  readonly hosts: ReadonlySet<string> | undefined;
  /** `allowedHosts` and the hosts (`host[:port]`) of `allowedOrigins`: names a loopback server may also be addressed by. */
  readonly allowedHosts: ReadonlySet<string>;
}

/** The protocol revisions served, newest first. */
export const MCP_PROTOCOL_VERSIONS: readonly string[] = Object.freeze(['2026-07-28', '2025-11-25', '2025-06-18']);
/** The revision whose requests must mirror their method and tool name in headers (SEP-2243). */
const MIRRORED = MCP_PROTOCOL_VERSIONS[0];
/** The answer to an `initialize` asking for a revision not served: the newest one with a handshake. */
const HANDSHAKE_DEFAULT = MCP_PROTOCOL_VERSIONS[1];

/** 2026-07-28: the request's own revision, in its `_meta` envelope. */
const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
/** 2026-07-28: an answer that depends on the caller (its scopes) may not be cached. */
const UNCACHED = { ttlMs: 0, cacheScope: 'private' };
const CAPABILITIES = { tools: {} };
/** The answer to a notification, or to a client's answer: accepted, nothing to say. */
const accepted = () => new Response(null, { status: 202 });

/** JSON-RPC 2.0 and MCP error codes. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
/** SEP-2243: a mirror header missing or unlike the body. */
const HEADER_MISMATCH = -32020;
/** 2026-07-28: a protocol revision this server does not serve. */
const UNSUPPORTED_VERSION = -32022;

/** The MCP route's own tools: no agent tool exposed may take their names. */
const BUILT_IN_TOOLS: readonly string[] = Object.freeze(['ask', 'decide', 'read']);

/**
 * Reads `mcp`: `undefined`/`false` (no route), `true`, or the options, closed; errors at creation.
 * `agentTools`: the agent's tool names when they are fixed (a `tools` function's are known per call only).
 */
export function readMcpOptions(
  helper: string,
  value: unknown,
  agentName: string,
  hasAuth: boolean,
  agentTools?: readonly string[],
): McpConfig | undefined {
  if (value === undefined || value === false) return undefined;
  const options = value === true ? {} : value;
  /** An entry of a list, quoted and cut short, for the message that refuses it. */
  const quoted = (entry: unknown) => JSON.stringify(String(entry)).slice(0, 80);
  if (!isRecord(options))
    throw new AuthConfigError(
      `${helper}: mcp must be true or { name?, title?, scopes?, tools?, allowedOrigins?, allowedHosts? }`,
    );
  checkOptionNames(`${helper}: mcp`, options, ['name', 'title', 'scopes', 'tools', 'allowedOrigins', 'allowedHosts']);
  const { name = agentName, title, scopes = {}, tools, allowedOrigins = [], allowedHosts } = options as McpOptions;
  nonEmptyString(name, `${helper}: mcp.name`, (message) => new AuthConfigError(message));
  if (title !== undefined) nonEmptyString(title, `${helper}: mcp.title`, (message) => new AuthConfigError(message));
  const exposed = readExposedTools(helper, tools, agentTools);
  if (typeof scopes !== 'object' || scopes === null)
    throw new AuthConfigError(
      exposed === undefined
        ? `${helper}: mcp.scopes must be { ask?, decide?, read? }`
        : `${helper}: mcp.scopes must be { ask?, decide?, read?, <agent tool>? }`,
    );
  // Closed: the built-in tools, and the agent tools exposed (any name when a tools function decides them per caller).
  if (exposed !== 'agent' || agentTools !== undefined)
    checkOptionNames(`${helper}: mcp.scopes`, scopes, [
      ...BUILT_IN_TOOLS,
      ...(exposed === 'agent' ? (agentTools ?? []) : (exposed ?? [])),
    ]);
  for (const [tool, list] of Object.entries(scopes)) {
    if (list !== undefined && !isScopeList(list))
      throw new AuthConfigError(`${helper}: mcp.scopes.${tool} must be a non-empty list of RFC 6749 scope tokens`);
    if (list?.includes('offline_access'))
      throw new AuthConfigError(
        `${helper}: mcp.scopes.${tool} must not include offline_access: it asks for a refresh token, no access token carries it, so no token could satisfy it`,
      );
  }
  if (Object.values(scopes).some((list) => list !== undefined) && !hasAuth)
    throw new AuthConfigError(`${helper}: mcp.scopes need auth (without it no caller has claims to grant them)`);
  if (!Array.isArray(allowedOrigins))
    throw new AuthConfigError(`${helper}: mcp.allowedOrigins must be a list of origins such as "https://app.example"`);
  for (const origin of allowedOrigins) {
    if (
      typeof origin !== 'string' ||
      !/^https?:\/\//.test(origin) ||
      !URL.canParse(origin) ||
      new URL(origin).origin !== origin
    ) {
      throw new AuthConfigError(
        `${helper}: mcp.allowedOrigins holds ${quoted(origin)}, not an origin (http(s)://host[:port], nothing after it)`,
      );
    }
  }
  if (allowedHosts !== undefined && (!Array.isArray(allowedHosts) || allowedHosts.length === 0)) {
    throw new AuthConfigError(
      `${helper}: mcp.allowedHosts must be a non-empty list of host names, such as "agent.example.com" or "agent.example.com:8443"`,
    );
  }
  for (const host of allowedHosts ?? []) {
    if (typeof host !== 'string' || !HOST.test(host) || Number(/:(\d+)$/.exec(host)?.[1] ?? 0) > 65535) {
      throw new AuthConfigError(
        `${helper}: mcp.allowedHosts holds ${quoted(host)}, not a host (name, IPv4 or [IPv6], then an optional :port; no scheme or path)`,
      );
    }
  }
  const hosts = allowedHosts === undefined ? undefined : new Set(allowedHosts.map((host) => host.toLowerCase()));
  const frozen = (list: readonly string[] | undefined) => (list === undefined ? undefined : Object.freeze([...list]));
  // Without a prototype: a tool named "toString" finds no scopes it was not given.
  const toolScopes: Record<string, readonly string[]> = Object.create(null);
  for (const [tool, list] of Object.entries(scopes)) if (list !== undefined) toolScopes[tool] = frozen(list)!;
  return Object.freeze({
    name,
    title,
    scopes: Object.freeze(toolScopes),
    tools: exposed,
    allowedOrigins: new Set(allowedOrigins),
    hosts,
    allowedHosts: new Set([...(hosts ?? []), ...allowedOrigins.map((origin) => new URL(origin).host)]),
  });
}

/**
 * `mcp.tools`: `'agent'`, or a non-empty list of the agent's tool names (checked against them when
 * they are fixed); no exposed tool may be named `ask`, `decide` or `read` (design §36).
 */
function readExposedTools(
  helper: string,
  tools: unknown,
  agentTools: readonly string[] | undefined,
): 'agent' | readonly string[] | undefined {
  if (tools === undefined) return undefined;
  const clash = (names: readonly string[]) => names.find((name) => BUILT_IN_TOOLS.includes(name));
  if (tools === 'agent') {
    const taken = clash(agentTools ?? []);
    if (taken !== undefined)
      throw new AuthConfigError(
        `${helper}: mcp.tools: the agent's tool "${taken}" takes the name of the MCP route's own tool; rename it`,
      );
    return 'agent';
  }
  if (!Array.isArray(tools) || tools.length === 0 || !tools.every((name) => typeof name === 'string' && name !== ''))
    throw new AuthConfigError(`${helper}: mcp.tools must be 'agent' or a non-empty list of the agent's tool names`);
  const names = tools as readonly string[];
  const taken = clash(names);
  if (taken !== undefined)
    throw new AuthConfigError(
      `${helper}: mcp.tools names "${taken}", the MCP route's own tool: rename the agent's tool`,
    );
  const unknown = agentTools === undefined ? undefined : names.find((name) => !agentTools.includes(name));
  if (unknown !== undefined)
    throw new AuthConfigError(
      `${helper}: mcp.tools names ${JSON.stringify(unknown.slice(0, 64))}, which is not one of the agent's tools`,
    );
  return Object.freeze([...new Set(names)]);
}

/** A `Host` value: a DNS name or IPv4 address, or a bracketed IPv6 address, then an optional port. */
const HOST =
  /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/** Whether `host` (lower case) is in `hosts`: as it is, or by its name alone when the entry names no port. */
const hostIn = (hosts: ReadonlySet<string>, host: string) => hosts.has(host) || hosts.has(host.replace(/:\d+$/, ''));

/** Names a loopback interface answers to: a page of any other name reached it through DNS rebinding. */
const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i;

/**
 * The Origin and Host checks of design §18 and §20, before auth: `undefined` to go on, else the 403.
 * With `allowedHosts`, the `Host` must be one of them. A present `Origin` must be the server's
 * own (the origin of the URL it serves, or the `Host` the client addressed) or one of
 * `allowedOrigins`. On a server listening on loopback only (`request.loopback`, known to the
 * node server), a `Host` that is not a loopback name (or allowed) is a page that rebound its
 * DNS name to this machine.
 */
export function mcpGuard(config: McpConfig, request: RouteRequest): Reply | undefined {
  const forbidden = (why: string) => errorReply(403, `Forbidden: ${why}`);
  const host = request.headers.get('host');
  // A Web Request made without a Host header (a test's, a framework's) names its host in its URL.
  if (config.hosts !== undefined && !hostIn(config.hosts, (host ?? new URL(request.url).host).toLowerCase())) {
    return forbidden('this server does not answer to that host name (mcp.allowedHosts)');
  }
  if (
    request.loopback === true &&
    (host === null || (!LOOPBACK_HOST.test(host) && !hostIn(config.allowedHosts, host.toLowerCase())))
  ) {
    return forbidden('this server answers to a loopback host name only');
  }
  const origin = request.headers.get('origin');
  if (origin === null || config.allowedOrigins.has(origin)) return undefined;
  const own = URL.canParse(origin) ? new URL(origin) : undefined;
  if (
    own !== undefined &&
    own.origin === origin &&
    (origin === new URL(request.url).origin || (host !== null && own.host === host.toLowerCase()))
  )
    return undefined;
  return forbidden('requests from this origin are not allowed (mcp.allowedOrigins)');
}

interface Message {
  /** The id as the request wrote it (design §29); absent in a notification. */
  id?: IdText;
  method?: string;
  params?: Record<string, unknown>;
}

const rpcResult = (id: IdText, result: unknown) => rpcReply(id, { result });
const rpcError = (id: IdText | null, code: number, message: string, status = 200, data?: unknown) =>
  rpcReply(id, { error: { code, message, ...(data !== undefined && { data }) } }, status);

/** A JSON-RPC "Invalid Request" (400 unless said): `what` says which rule the message broke. */
const invalid = (id: IdText | null, what: string, status = 400) =>
  rpcError(id, INVALID_REQUEST, `Invalid request: ${what}`, status);

const isId = (id: unknown) => typeof id === 'string' || Number.isInteger(id);

/** The id of a parsed body, as written, when the body is an object whose `id` is a valid one; else `null`. */
function idIn(parsed: { value: unknown; text: string } | undefined): IdText | null {
  if (parsed === undefined || !isRecord(parsed.value) || !isId(parsed.value.id)) return null;
  return idSource(parsed.text) ?? null;
}

/** One JSON-RPC message of the body, or the error answer for a body that is not one. */
function readMessage(parsed: { value: unknown; text: string } | undefined): Message | Reply {
  if (parsed === undefined) return rpcError(null, PARSE_ERROR, 'Parse error: the body is not JSON', 400);
  const { value } = parsed;
  // The 2025-06-18 revision removed JSON-RPC batching; the later ones did not bring it back.
  if (Array.isArray(value)) return invalid(null, 'batches are not supported');
  if (!isRecord(value)) return invalid(null, 'not a JSON-RPC message');
  const { jsonrpc, id, method, params } = value;
  const answerId = idIn(parsed);
  const validId = answerId !== null;
  if (jsonrpc !== '2.0') return invalid(answerId, 'jsonrpc must be "2.0"');
  if (id !== undefined && !validId) return invalid(null, 'id must be a string or an integer');
  if (method === undefined) {
    // A client's answer to a server request: this server sends none, so there is nothing to match it to.
    if (validId && ('result' in value || 'error' in value)) return accepted();
    return invalid(answerId, 'method is missing');
  }
  if (typeof method !== 'string') return invalid(answerId, 'method must be a string');
  if (params !== undefined && !isRecord(params)) return invalid(answerId, 'params must be an object');
  return { ...(validId && { id: answerId }), method, ...(params !== undefined && { params }) };
}

/**
 * A header that repeats the body and differs from it, as the end of "Header mismatch: …", or `undefined`:
 * `MCP-Protocol-Version` against the body's `_meta` revision (2026-07-28); SEP-2243's `Mcp-Method`
 * (and `Mcp-Name` for `tools/call`), required by 2026-07-28, else checked when present.
 */
function headerMismatch(
  message: Message,
  request: RouteRequest,
  header: string | null,
  claimed: string | undefined,
): string | undefined {
  const required = (claimed ?? header) === MIRRORED;
  const differs = (name: string, what: string, expected: unknown, required: boolean) => {
    const value = request.headers.get(name);
    if (value === null ? required : value !== expected)
      return `the ${name} header is ${value === null ? 'missing' : `not the body's ${what}`}`;
  };
  return (
    (claimed === undefined ? undefined : differs('MCP-Protocol-Version', 'protocol version', claimed, false)) ??
    differs('Mcp-Method', 'method', message.method, required) ??
    (message.method === 'tools/call' ? differs('Mcp-Name', 'tool name', message.params?.name, required) : undefined)
  );
}

/**
 * Answers one POST to `<base>/mcp`, after `mcpGuard()` and auth. `forbidden` answers the 403
 * step-up challenge when the principal lacks the scopes of the route, or of the tool a
 * `tools/call` names (design §15, §25), once the message is read. `limit` runs each `tools/call`
 * under the handler's limits (design §22), handing it the meter its model turns pass (`limits.tokens`).
 * `noted` hears the session and approval an agent tool's call made, for the request's record (design §32).
 * `forbidden` also writes the request's record first under `audit.required`; a 503 (the record
 * could not be written, design §34) answers the request's id, as a 429 does, and nothing runs.
 */
export async function mcpRoute(
  agent: McpAgent,
  config: McpConfig,
  request: RouteRequest,
  principal: Principal | undefined,
  forbidden: (tool: McpTool | undefined, args: unknown, agentTool?: string) => Promise<Reply | undefined>,
  limit?: (call: (meter: TurnMeter | undefined) => Promise<Reply>) => Promise<Reply>,
  telemetry?: Telemetry,
  noted?: (ids: CallIds) => void,
): Promise<Reply> {
  const header = request.headers.get('mcp-protocol-version');
  const bytes = await readBodyBytes(request);
  if (bytes === null) return invalid(null, 'the body is over 1 MiB', 413);
  // The body is read first, so that this error too answers the request's id.
  const parsed = readJson(bytes);
  if (header !== null && !MCP_PROTOCOL_VERSIONS.includes(header)) return unsupported(idIn(parsed));
  const message = readMessage(parsed);
  if (!('method' in message) || typeof message.method !== 'string') return message as Reply;
  // 2026-07-28 names the revision in the body too; the header must then agree with it.
  const meta = message.params?._meta;
  const claimed =
    typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)[PROTOCOL_VERSION_KEY] : undefined;
  if (claimed !== undefined && (typeof claimed !== 'string' || !MCP_PROTOCOL_VERSIONS.includes(claimed)))
    return unsupported(message.id ?? null);
  const mismatch = headerMismatch(message, request, header, claimed as string | undefined);
  if (mismatch !== undefined) return rpcError(message.id ?? null, HEADER_MISMATCH, `Header mismatch: ${mismatch}`, 400);
  const version = (claimed as string | undefined) ?? header;
  // Scopes before anything is done: the route's, and a tool call's its tool's (design §25).
  const tool = message.method === 'tools/call' ? toolOf(agent, message.params?.name) : undefined;
  const agentTool = message.method === 'tools/call' ? agentToolOf(config, message.params?.name) : undefined;
  const refused = await forbidden(tool, tool === undefined ? undefined : message.params?.arguments, agentTool);
  if (refused instanceof JsonReply && refused.status === 503) return rpcUnavailable(message.id ?? null, refused);
  if (refused !== undefined) return refused;
  // A notification (initialized, cancelled, …) is accepted and needs no answer.
  if (message.id === undefined) return accepted();
  const { id, method, params = {} } = message;
  // Every 2026-07-28 result says whether it is complete.
  const answer = (result: Record<string, unknown>) =>
    rpcResult(id, version === MIRRORED ? { resultType: 'complete', ...result } : result);
  switch (method) {
    case 'initialize': {
      const asked = params.protocolVersion;
      return answer({
        protocolVersion: typeof asked === 'string' && MCP_PROTOCOL_VERSIONS.includes(asked) ? asked : HANDSHAKE_DEFAULT,
        capabilities: CAPABILITIES,
        serverInfo: serverInfo(config),
      });
    }
    case 'server/discover':
      // 2026-07-28's probe: the revisions served and what this server offers, without a handshake.
      return answer({
        supportedVersions: MCP_PROTOCOL_VERSIONS,
        capabilities: CAPABILITIES,
        ...UNCACHED,
        _meta: { [SERVER_INFO_KEY]: serverInfo(config) },
      });
    case 'ping':
      return answer({});
    case 'tools/list':
      // 2026-07-28 makes a list cacheable and requires saying for how long: not at all, it depends on the caller's scopes.
      return answer({ tools: await listTools(agent, config, principal), ...(version === MIRRORED && UNCACHED) });
    case 'tools/call': {
      const { name, arguments: args = {} } = params;
      if (typeof name !== 'string') return rpcError(id, INVALID_PARAMS, 'Invalid params: name must be a string');
      if (!isRecord(args)) return rpcError(id, INVALID_PARAMS, 'Invalid params: arguments must be an object');
      const call = async (meter: TurnMeter | undefined): Promise<Reply> => {
        const result = await callTool(agent, config, name, args as Record<string, unknown>, {
          principal,
          signal: request.signal,
          meter,
          noted,
        });
        if (result === undefined)
          return rpcError(id, INVALID_PARAMS, `Unknown tool: ${name.length <= 64 ? name : `${name.slice(0, 64)}…`}`);
        return result instanceof Response || result instanceof JsonReply
          ? result
          : answer(result as unknown as Record<string, unknown>);
      };
      // A refusal of the limits, before the call or by limits.tokens during it, answers the request's id (design §29);
      // so does an audit event that could not be written under audit.required (design §34).
      const unwritten = (error: unknown) => {
        if (!auditUnavailable(error)) throw error;
        return rpcUnavailable(id, failureReply(error));
      };
      const limited = () =>
        limit === undefined
          ? call(undefined).catch(unwritten)
          : limit(call).then(
              (reply) => rpcTooMany(id, reply),
              (error: unknown) => {
                if ((error as { code?: unknown } | null)?.code !== 'TOKEN_LIMIT') return unwritten(error);
                return rpcTooMany(id, failureReply(error));
              },
            );
      return telemetry === undefined ? limited() : tracedToolCall(telemetry, id, name, params._meta, limited, version);
    }
    default:
      return rpcError(id, METHOD_NOT_FOUND, 'Method not found');
  }
}

const unsupported = (id: IdText | null) =>
  rpcError(id, UNSUPPORTED_VERSION, 'Unsupported protocol version', 400, { supported: MCP_PROTOCOL_VERSIONS });

function serverInfo(config: McpConfig) {
  return { name: config.name, ...(config.title !== undefined && { title: config.title }), version: VERSION };
}
