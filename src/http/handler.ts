// The route handler (design §5, §25): its options, checked at creation, and the one order every
// request on every surface goes through: the metadata document and health, the MCP guard,
// limits.failures, auth, route (404), method (405), scopes (403), limits, then the operation
// (routes.ts, mcp.ts), which checks ownership as it starts.
import type { Agent, Principal, TurnMeter } from '../agent/types.ts';
import {
  AuthConfigError,
  kindOf,
  authEntries,
  routeAuth,
  checkOptionNames,
  adoptDpopAlgs,
  advertisedDpopAlgs,
  readScopeImplies,
  type Authenticate,
  type AuthFn,
  type RefusalListener,
  type AuthOption,
  type ProtectedResourceMetadata,
} from '../auth/internal.ts';
import { nodeEnv } from './env.ts';
import { errorReply, failureReply, type Reply, toResponse, withNonce } from './responses.ts';
import { pathOf, type RouteRequest, webRouteRequest } from './route-request.ts';
import { metadataPaths, protectedResourceRoute, type ProtectedResourceOptions } from './protected-resource.ts';
import { rpcTooMany } from './json-rpc.ts';
import { readRouteScopes, type RouteScopes } from './scopes.ts';
import { mcpGuard, mcpRoute, readMcpOptions, type McpConfig, type McpOptions } from './mcp.ts';
import { limiter, readLimits, type LimitedRoute, type Limiter, type LimitsOptions } from './limits.ts';
import {
  MCP_TOOLS,
  missingScopes,
  requiredScopes,
  runsModel,
  type McpTool,
  type Operation,
  type ScopeConfig,
} from './operations.ts';
import { matchRoute, operationOf, serveRoute, uiRoute, type Route, type RouteOperation } from './routes.ts';
import { jsonObject, readBodyBytes } from './body.ts';
import { parseUiRequest } from './ui-stream.ts';
import { isPlainObject } from '../agent/tools.ts';
import { readTelemetry, type TelemetryOptions } from '../agent/telemetry.ts';
import { RequestTrace } from './telemetry.ts';
import { freeze, isObject, isString } from '../agent/shapes.ts';

export interface AgentHandlerOptions {
  /** Prefix of every route, e.g. `/agent`; default `''`. */
  basePath?: string;
  /** A list of entries, one entry, a token string, or a boolean function. Without it every route is open. */
  auth?: AuthOption;
  /** Hears why a bearer token was refused, once per refused request (`routeAuth`'s `onRefused`); never the token. */
  onRefused?: RefusalListener;
  /**
   * RFC 9728 metadata, answered without auth at `/.well-known/oauth-protected-resource` + the
   * resource's path, at the origin's root outside `basePath`: mount the handler so it receives that
   * path too. Give it `protectedResourceMetadata()`'s result, the same one as `resourceMetadata` on
   * `jwt()`/`oidc()`, or its options.
   */
  protectedResource?: ProtectedResourceOptions | ProtectedResourceMetadata;
  /**
   * Scopes each group of routes requires of the principal's verified claims (`scope`, or `scp`), all
   * of them; else 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` (design §15),
   * which MCP clients answer by asking the user for those scopes. `send`: `POST <base>`, `/chat`, a
   * `/ui` message, MCP `ask`; `read`: `GET <base>/chat/:id`, `GET <base>/approvals`; `approve`:
   * `POST <base>/approvals/:id`, a `/ui` approval response, MCP `decide`; `sessions`: `GET
   * <base>/sessions`, `DELETE <base>/chat/:id`; `mcp`: `<base>/mcp`. A request needs the union of
   * its groups, the entry's own scopes and on MCP the tool's, and the 403 names it whole (design
   * §25). A principal without claims (API token, Basic) grants no scope. Needs `auth`.
   */
  scopes?: RouteScopes;
  /**
   * Scope hierarchies for `scopes` and `mcp.scopes` (design §29): a principal whose claims hold a key
   * holds every scope it implies, transitively, e.g. `{ 'agent:admin': ['agent:chat', 'agent:approve'] }`.
   * A cycle is an error at creation; challenges still name the scopes as configured.
   */
  scopeImplies?: Readonly<Record<string, readonly string[]>>;
  /**
   * Serve the agent as a remote MCP server at `POST <base>/mcp` (design §18): the tools `ask` and,
   * when a run can wait for an approval, `decide`, behind the same auth as every route.
   */
  mcp?: boolean | McpOptions;
  /**
   * Limits per principal (design §22): `requests` and `tokens` per window, `concurrent` requests
   * in flight, and `failures` (401s per client address, before auth). Past one, 429 with
   * `Retry-After` and the RateLimit fields. Counted in `store` (default: this process's memory).
   */
  limits?: LimitsOptions;
  /**
   * OpenTelemetry (design §28): each request in an `agentward {operation}` span with the auth
   * outcome, the refusing limit and the principal (`enduser.id`, unless `recordPrincipal: false`),
   * and each MCP `tools/call` in a span of its own. Never a token, a password or an `Authorization`
   * value. Give the agent the same option (`createAgent({ telemetry })`) for the run's spans.
   */
  telemetry?: TelemetryOptions;
}

export type { RouteScopes } from './scopes.ts';

/** The options of `agentHandler()`; `serve()` takes them too. */
export const HANDLER_OPTION_NAMES = freeze([
  'basePath',
  'auth',
  'onRefused',
  'protectedResource',
  'scopes',
  'scopeImplies',
  'mcp',
  'limits',
  'telemetry',
]);

/** The name the option errors start with. */
const HELPER = 'agentHandler()';

function normalizeBasePath(basePath: unknown, helper: string): string {
  if (!isString(basePath) || (basePath !== '' && !/^\/[^?#]*$/.test(basePath))) {
    throw new AuthConfigError(`${helper}: basePath must be "" or a path starting with "/", without query or fragment`);
  }
  return basePath.replace(/\/+$/, '');
}

/**
 * The route handler: a function from a Web `Request` to a `Response` serving an agent on any
 * runtime or framework that speaks `Request` (Workers, Bun.serve, Deno.serve, Hono, Next.js).
 *
 * Routes under `basePath`: `GET /health` (never behind auth), `POST /` and `POST /chat`
 * (`{ message, sessionId?, metadata? }`; `/chat` streams server-sent events when asked with
 * `Accept: text/event-stream`), `GET /chat/:id`, `GET /approvals?sessionId=…`,
 * `POST /approvals/:approvalId` (`{ approved, reason? }`) and `POST /ui` (the AI SDK `useChat`
 * endpoint); for an agent with `sessions: 'owned'` also `GET /sessions?limit=&cursor=` (the
 * caller's sessions) and `DELETE /chat/:id`; with `mcp`, `POST /mcp` (the agent as a remote MCP
 * server, after its Origin and Host checks). Auth runs before routing, so an unknown path
 * behind auth answers 401, not 404. The accepted principal reaches the run and every
 * ownership check; nothing in the body can set it. An `'owned'` agent without `auth` is a
 * configuration error: without a principal every call would be trusted. With `protectedResource`,
 * its RFC 9728 document is answered at its well-known path before auth.
 * @example
 * const handler = agentHandler(agent, { basePath: '/agent', auth: [jwt({ secret, audience: 'agent' }), basic({ users })] });
 * export default { fetch: handler };
 */
export function agentHandler(agent: Agent, options: AgentHandlerOptions = {}): (request: Request) => Promise<Response> {
  const routes = agentRoutes(agent, options);
  const handler = async (request: Request) => {
    answering.add(request);
    try {
      return toResponse(await routes(webRouteRequest(request)));
    } finally {
      answering.delete(request);
    }
  };
  // toNodeListener(agentHandler(…)) serves through the routes themselves, as serve() does.
  Object.defineProperty(handler, ROUTES, { value: routes });
  return handler;
}

/**
 * The requests whose answer is being made. Node lets a collected `Request`'s signal stop following
 * the signal it was made with, so a run waiting on it would never hear its client leave: the
 * handler holds each `Request` until its answer is made (design §25).
 */
const answering = new Set<Request>();

/** The key under which a handler of `agentHandler()` keeps its routes (for the node bridge). */
export const ROUTES: unique symbol = Symbol('agentward.routes') as never;

/** The agent routes behind `agentHandler()`, on any view of a request, answering replies. */
export type AgentRoutes = (request: RouteRequest) => Promise<Reply>;

/** An `auth` key holding nothing is an error (design §20): `auth: env.AGENT_TOKEN`, unset, must not open every route. */
export function refuseEmptyAuth(helper: string, options: object): void {
  const { auth } = options as { auth?: unknown };
  if (Object.hasOwn(options, 'auth') && (auth === undefined || auth === null || auth === '')) {
    throw new AuthConfigError(
      `${helper}: auth is ${kindOf(auth)}: an unset environment variable? Omit auth for an open route, or use anonymous()`,
    );
  }
}

/** `agentHandler()` without the Web `Request` and `Response` around it: the node server uses it directly, as `helper` (`serve()`) in errors. */
export function agentRoutes(agent: Agent, options: AgentHandlerOptions = {}, helper = HELPER): AgentRoutes {
  if (!isObject(agent as unknown) || !isString(agent.name))
    throw new AuthConfigError(`${helper}: agent must be an agent made by createAgent(…); got ${kindOf(agent)}`);
  if (!isObject(options as unknown)) throw new AuthConfigError(`${helper}: options must be an object`);
  checkOptionNames(helper, options, HANDLER_OPTION_NAMES);
  refuseEmptyAuth(helper, options);
  const basePath = normalizeBasePath(options.basePath ?? '', helper);
  const owned = agent.sessions === 'owned';
  const { auth } = options;
  if (owned && auth === undefined) {
    throw new AuthConfigError(
      `${helper}: an agent with sessions: 'owned' needs auth (without it no caller has a principal to own a session)`,
    );
  }
  const telemetry = readTelemetry(options.telemetry, helper);
  // With telemetry the refusals are always heard: the span names the reason (design §28).
  const onRefused = options.onRefused ?? (telemetry && ignoreRefusal);
  const authenticate = auth === undefined ? undefined : routeAuth(auth, { onRefused });
  const metadata =
    options.protectedResource === undefined ? undefined : protectedResourceRoute(helper, options.protectedResource);
  // One list of DPoP algorithms: the 401's `DPoP algs` and the document's (design §20).
  if (metadata !== undefined && auth !== undefined)
    adoptDpopAlgs(metadata, helper, advertisedDpopAlgs(authEntries(auth)));
  const scopes = readRouteScopes(helper, options.scopes, auth);
  const mcp = readMcpOptions(helper, options.mcp, agent.name, auth !== undefined);
  const implies = readScopeImplies(helper, options.scopeImplies);
  if (implies !== undefined && scopes === undefined && Object.keys(mcp?.scopes ?? {}).length === 0)
    throw new AuthConfigError(`${helper}: scopeImplies needs scopes or mcp.scopes, whose checks it applies to`);
  const limitsOption = readLimits(helper, options.limits, auth !== undefined);
  const limits = limitsOption === undefined ? undefined : limiter(limitsOption);
  const documentPaths = metadata && metadataPaths(metadata, basePath, mcp !== undefined);
  if (authenticate === undefined && nodeEnv() === 'production') {
    console.warn(`agentward: ${helper} was created without auth; every agent route is open to anyone`);
  }

  const scopeConfig: ScopeConfig = { groups: scopes, tools: mcp?.scopes ?? {}, implies };
  // Without group or tool scopes a route needs nothing beyond the entry's own, which the entry checked.
  const anyScopes = scopes !== undefined || Object.keys(scopeConfig.tools).length > 0;
  /** What a route and method need besides the entry's scopes, known from the path before auth (`/ui`: as a send; MCP: the route's). */
  const routeScopes = (operation: RouteOperation | undefined) =>
    operation === undefined || operation === 'health'
      ? undefined
      : requiredScopes(
          scopeConfig,
          operation === 'mcp' ? [] : [operation === 'ui' ? 'send' : operation],
          operation === 'mcp' ? {} : undefined,
          undefined,
        );

  /** The 403 for operations on a surface whose scopes the principal lacks, naming the whole union (design §25). */
  const forbidden = (
    request: RouteRequest,
    principal: Principal | undefined,
    entryScopes: readonly string[] | undefined,
    operations: readonly Operation[],
    mcpTool?: { tool?: McpTool },
  ) => {
    const missing = missingScopes(scopeConfig, principal, operations, mcpTool, entryScopes);
    return missing && (authenticate as Authenticate).insufficientScope(request, missing);
  };

  // RFC 9449 §8: with DPoP nonces, every answer to a request an entry offered one carries it.
  return async function routeAgentRequest(request: RouteRequest): Promise<Reply> {
    const reply = await answerRequest(request);
    const nonce = request.dpopNonce;
    return nonce ? withNonce(reply, nonce) : reply;
  };

  /** A request's answer: the resolved path's route, in its span with telemetry; a failure's reply. */
  async function answerRequest(request: RouteRequest): Promise<Reply> {
    const trace = telemetry && new RequestTrace(telemetry);
    let reply: Reply;
    try {
      const pathname = pathOf(request.url);
      if (pathname === undefined) return errorReply(400, 'Bad Request');
      // The document at its own path, and at the MCP endpoint's (design §29).
      if (documentPaths?.has(pathname))
        return (metadata as ProtectedResourceMetadata).respond({
          method: request.method,
          url: metadata!.path,
        }) as Response;
      // The one place a path is read as a route (design §25).
      const route = matchRoute(pathname, basePath, owned, mcp !== undefined);
      reply = await (trace === undefined
        ? answer(request, route, undefined)
        : trace.start(request.method, route, () => answer(request, route, trace)));
    } catch (error) {
      reply = failureReply(error);
    }
    trace?.replied(reply);
    return reply;
  }

  /** A request on its route (or none: 404 after auth), through the order of design §25; `trace`: its span's, with telemetry. */
  async function answer(
    request: RouteRequest,
    route: Route | undefined,
    trace: RequestTrace | undefined,
  ): Promise<Reply> {
    // (A block: the order below kept its lines as they were before it moved out of routeAgentRequest.)
    {
      const operation = operationOf(route, request.method);
      // The Origin and Host checks come first: a page that rebound its DNS name learns nothing, not even a 401.
      const refused = route?.name === 'mcp' ? mcpGuard(mcp as McpConfig, request) : undefined;
      if (refused !== undefined) return refused;
      let principal: Principal | undefined;
      let entryScopes: readonly string[] | undefined;
      if (authenticate !== undefined && route?.name !== 'health') {
        // The built-in entries read only the headers: they are given the route view, and no Request is built.
        const run = () =>
          authenticate(
            authenticate.headersOnly ? (request as RouteRequest & Request) : request.request(),
            anyScopes ? routeScopes(operation) : undefined,
          );
        // limits.failures: a failure slot of the address is taken before any entry runs, given back unless 401.
        const result = limits?.failures ? await limits.admit(request, run) : await run();
        if (!result.ok) {
          trace?.refused(result.response, result.refusal);
          // limits.failures' 429 comes before the body is read: on MCP its JSON-RPC error has no id to answer (design §29).
          return route?.name === 'mcp' ? rpcTooMany(null, result.response) : result.response;
        }
        principal = request.principal = result.principal;
        trace?.accepted(principal);
        request.dpopNonce = result.dpopNonce;
        // Only read when some route or tool needs scopes: without them the entry's own were checked by the entry.
        if (anyScopes && result.entry !== undefined) entryScopes = scopesOf(result.entry);
      }
      // DELETE of a session is a route of 'owned' agents only: elsewhere it does not exist.
      if (route === undefined || (operation === undefined && route.name === 'session' && request.method === 'DELETE'))
        return errorReply(404, 'Not Found');
      if (operation === undefined) return errorReply(405, 'Method Not Allowed', { allow: route.methods.join(', ') });
      if (operation === 'health') return serveRoute(agent, route, request, principal, undefined);
      // Whom the limits count, known before the body is read (clientAddress may read the Request).
      const caller = limits?.caller(request, principal);
      if (operation === 'mcp') {
        // Only tools/call is counted: a client's handshake and listing cost nothing.
        const limited = limits && ((serve: LimitedRoute) => (limits as Limiter).run(caller!, true, serve));
        return await mcpRoute(
          agent,
          mcp as McpConfig,
          request,
          principal,
          (tool) =>
            anyScopes
              ? forbidden(request, principal, entryScopes, tool === undefined ? [] : [MCP_TOOLS[tool]], { tool })
              : undefined,
          limited,
          telemetry,
        );
      }
      if (operation === 'ui') {
        const body = jsonObject(await readBodyBytes(request));
        const ui = parseUiRequest(body);
        const operations = ui.text === undefined ? DECIDE : ui.decisions.length === 0 ? SEND : SEND_AND_DECIDE;
        trace?.operations(operations);
        const refusal = anyScopes ? forbidden(request, principal, entryScopes, operations) : undefined;
        if (refusal !== undefined) return refusal;
        const metadata = isPlainObject(body.metadata) ? body.metadata : undefined;
        const serve = (meter: TurnMeter | undefined) => uiRoute(agent, ui, metadata, principal, meter);
        return await (limits === undefined ? serve(undefined) : limits.run(caller!, true, serve));
      }
      const refusal = anyScopes ? forbidden(request, principal, entryScopes, [operation]) : undefined;
      if (refusal !== undefined) return refusal;
      if (limits === undefined) return await serveRoute(agent, route, request, principal, undefined);
      return await limits.run(caller!, runsModel([operation]), (meter) =>
        serveRoute(agent, route, request, principal, meter),
      );
    }
  }
}

const ignoreRefusal = () => undefined;

/** The scopes an entry requires (`jwt()`, `oidc()`, `introspection()` with `scopes`), as its challenge names them; read once per entry. */
const entryScopes = new WeakMap<AuthFn, readonly string[] | undefined>();
function scopesOf(entry: AuthFn): readonly string[] | undefined {
  if (!entryScopes.has(entry))
    entryScopes.set(entry, entry.challenges?.find((c) => c.params?.scope)?.params?.scope?.split(' '));
  return entryScopes.get(entry);
}

const SEND: readonly Operation[] = ['send'];
const DECIDE: readonly Operation[] = ['decide'];
const SEND_AND_DECIDE: readonly Operation[] = ['send', 'decide'];
