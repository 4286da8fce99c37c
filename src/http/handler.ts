// The route handler (design §5, §25, §32): its options, checked at creation, and the one order
// every request on every surface goes through, as named steps: the metadata document, the MCP
// guard, limits.failures and auth, route (404) and method (405), authorize() (403), limits, then
// the operation (routes.ts, mcp.ts), whose session the agent's ownership rule checks as it starts.
import type {
  Agent,
  CallToolOptions,
  DecideOptions,
  Principal,
  RunResult,
  SendOptions,
  TurnMeter,
} from '../agent/types.ts';
import { AgentError } from '../agent/errors.ts';
import { isoNow } from '../agent/clock.ts';
import { HttpError } from './responses.ts';
import {
  AuthConfigError,
  kindOf,
  authEntries,
  routeAuth,
  checkOptionNames,
  adoptDpopAlgs,
  advertisedDpopAlgs,
  readScopeImplies,
  callerKey,
  releasePresentedToken,
  watchExchanges,
  type Authenticate,
  type EntryGrant,
  type RefusalListener,
  type AuthOption,
  type ProtectedResourceMetadata,
} from '../auth/internal.ts';
import { nodeEnv } from './env.ts';
import { badRequest, errorReply, failureReply, jsonReply, type Reply, toResponse, withNonce } from './responses.ts';
import { pathOf, type RouteRequest, type Seen, webRouteRequest } from './route-request.ts';
import { metadataPaths, protectedResourceRoute, type ProtectedResourceOptions } from './protected-resource.ts';
import { rpcTooMany } from './json-rpc.ts';
import { readRouteScopes, type RouteScopes } from './scopes.ts';
import { mcpGuard, mcpRoute, readMcpOptions, type McpConfig, type McpOptions } from './mcp.ts';
import type { CallIds, McpAgent } from './mcp-tools.ts';
import { limiter, readLimits, type LimitedRoute, type Limiter, type LimitsOptions } from './limits.ts';
import { MCP_TOOLS, requiredScopes, runsModel, type McpTool, type Operation, type ScopeConfig } from './operations.ts';
import { matchRoute, operationOf, serveRoute, sessionApprovals, uiRoute, withExpiry, type Route } from './routes.ts';
import { authorize, type AuthorizeInput, type Decision, type Refused, type Surface } from './authorize.ts';
import { expiryOf, readApprovals, type ApprovalsOptions } from './approvals.ts';
import { AUDIT_EVENTS, AUTHORIZED, resourcesOf, type ApprovalResource, type AuditSink } from '../agent/resources.ts';
import { isAnonymous, ownerKey } from '../agent/sessions.ts';
import { poolOf } from '../agent/pools.ts';
import {
  approvalQueue,
  queuePage,
  queueQuery,
  type ApprovalsAnswer,
  type ApprovalsQuery,
  type QueuePage,
} from './queue.ts';
import { auditSink, readAudit, type AuditOption, type AuditRecord } from './audit.ts';
import { jsonObject, readBodyBytes } from './body.ts';
import { parseUiRequest, type UiRequest } from './ui-stream.ts';
import { isPlainObject } from '../agent/tools.ts';
import { readTelemetry, type TelemetryOptions } from '../agent/telemetry.ts';
import { RequestTrace } from './telemetry.ts';

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
   * `/ui` message, MCP `ask`; `read`: `GET <base>/chat/:id`, `GET <base>/approvals`, MCP `read`; `approve`:
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
   * when a run can wait for an approval, `decide` and `read` (the approvals the caller may decide),
   * behind the same auth as every route.
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
  /**
   * A function that receives one `AuditRecord` per request past the guards, allowed or refused
   * (design §32): time, request id, surface, operations, outcome, status, reason, the caller's key
   * and type, the session, approval and tool, and on a 403 the scopes needed; never a token, a
   * password, a proof or a header value. What it throws or rejects never changes the answer, and is
   * reported on stderr at most once a minute. `{ log, required? }` takes the function as `log`
   * (`required: true` is not supported yet).
   */
  audit?: AuditOption;
  /**
   * Who may list and decide pending approvals (design §33), closed: `by` (`'owner'`, the default;
   * `'approvers'`: also whoever holds `scopes.approve`; `'others'`: as `'approvers'`, but never the
   * caller that started the run: 403 `self-approval`), `scopes` per tool (`{ deploy: ['ops:approve'] }`,
   * needed beside `scopes.approve`), `ttlSec` (older pending approvals are shown `expired` and
   * decided as denied, reason `expired`). `by` other than `'owner'` needs `scopes.approve`.
   */
  approvals?: ApprovalsOptions;
}

export type { RouteScopes } from './scopes.ts';

/** The options of `agentHandler()`; `serve()` takes them too. */
export const HANDLER_OPTION_NAMES = Object.freeze([
  'basePath',
  'auth',
  'onRefused',
  'protectedResource',
  'scopes',
  'scopeImplies',
  'mcp',
  'limits',
  'telemetry',
  'audit',
  'approvals',
]);

/** The name the option errors start with. */
const HELPER = 'agentHandler()';

function normalizeBasePath(basePath: unknown, helper: string): string {
  if (typeof basePath !== 'string' || (basePath !== '' && !/^\/[^?#]*$/.test(basePath))) {
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
 * `Accept: text/event-stream`), `GET /chat/:id`, `GET /approvals?sessionId=…` (without
 * `sessionId`: the queue of approvals the caller may decide, `?limit=&cursor=`),
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

/** The agent routes behind `agentHandler()`, on any view of a request, answering replies; `seen` hears the accepted principal. */
export type AgentRoutes = (request: RouteRequest, seen?: Seen) => Promise<Reply>;

/** An `auth` key holding nothing is an error (design §20): `auth: env.AGENT_TOKEN`, unset, must not open every route. */
export function refuseEmptyAuth(helper: string, options: object): void {
  const { auth } = options as { auth?: unknown };
  if (Object.hasOwn(options, 'auth') && (auth === undefined || auth === null || auth === '')) {
    throw new AuthConfigError(
      `${helper}: auth is ${kindOf(auth)}: an unset environment variable? Omit auth for an open route, or use anonymous()`,
    );
  }
}

/**
 * An audit log or a limit store on the pool whose connection each turn of the agent's store holds
 * (one PostgreSQL pool for all three) is an error (design §34): their writes inside a turn wait
 * for a connection of that pool, and with as many turns running as the pool has connections,
 * nothing ever proceeds. A limit store is refused even with no `tokens` (whose counts are the
 * ones written inside a turn): one pool for the counters keeps working whatever policy comes next.
 */
function refuseSharedPool(helper: string, storePool: object | undefined, options: AgentHandlerOptions): void {
  if (storePool === undefined) return;
  const { audit, limits } = options;
  if (typeof audit === 'object' && audit !== null && poolOf(audit.log) === storePool)
    throw new AuthConfigError(
      `${helper}: audit.log and store share one PostgreSQL pool; give the audit log a pool of its own; got the same pool`,
    );
  if (poolOf(limits?.store) === storePool)
    throw new AuthConfigError(
      `${helper}: limits.store and store share one PostgreSQL pool; give the limit store a pool of its own; got the same pool`,
    );
}

/** `agentHandler()` without the Web `Request` and `Response` around it: the node server uses it directly, as `helper` (`serve()`) in errors. */
export function agentRoutes(agent: Agent, options: AgentHandlerOptions = {}, helper = HELPER): AgentRoutes {
  if (typeof agent !== 'object' || agent === null || typeof agent.name !== 'string')
    throw new AuthConfigError(`${helper}: agent must be an agent made by createAgent(…); got ${kindOf(agent)}`);
  if (typeof options !== 'object' || options === null)
    throw new AuthConfigError(`${helper}: options must be an object`);
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
  // With telemetry or audit the refusals are always heard: the span and the record name the reason (design §28, §32).
  const onRefused = options.onRefused ?? (telemetry || options.audit !== undefined ? ignoreRefusal : undefined);
  const authenticate = auth === undefined ? undefined : routeAuth(auth, { onRefused });
  const metadata =
    options.protectedResource === undefined ? undefined : protectedResourceRoute(helper, options.protectedResource);
  // One list of DPoP algorithms: the 401's `DPoP algs` and the document's (design §20).
  if (metadata !== undefined && auth !== undefined)
    adoptDpopAlgs(metadata, helper, advertisedDpopAlgs(authEntries(auth)));
  const scopes = readRouteScopes(helper, options.scopes, auth);
  const mcp = readMcpOptions(helper, options.mcp, agent.name, auth !== undefined, agent.toolNames);
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
  const audit = readAudit(helper, options.audit);
  const approvals = readApprovals(helper, options.approvals, scopes?.approve, auth);
  /** With `approvals.ttlSec`: a send denies its session's expired approval first (design §33). */
  const expiredIf = expiryOf(approvals);
  /** What authorize() reads of the agent's sessions and approvals (an agent of createAgent's). */
  const resources = resourcesOf(agent);
  refuseSharedPool(helper, resources?.storePool, options);
  // Ownership and the approvals option are decided by authorize() when it needs a resource to do so (design §32).
  const decidesResources =
    resources !== undefined &&
    (owned || approvals.by !== 'owner' || approvals.scopes.size > 0 || approvals.ttlSec !== undefined);
  /** Under 'owned', a send's session is decided by authorize() once the body names it (design §32). */
  const decidesSends = owned && resources !== undefined;

  /** A request past its route: the steps of design §25 in order, each a short function below; the first to answer ends it. */
  const steps = async (call: Call): Promise<Reply> =>
    guard(call) ?? (await signIn(call)) ?? routed(call) ?? (await perform(call));

  // RFC 9449 §8: with DPoP nonces, every answer to a request an entry offered one carries it.
  return async function routeAgentRequest(request: RouteRequest, seen?: Seen): Promise<Reply> {
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
    const call = newCall(request, route, telemetry && new RequestTrace(telemetry));
    let reply: Reply;
    try {
      reply = await (call.trace === undefined
        ? steps(call)
        : call.trace.start(request.method, route, () => steps(call)));
    } catch (error) {
      reply = failureReply(error);
    }
    answered(call, reply, seen);
    return call.nonce ? withNonce(reply, call.nonce) : reply;
  };

  /** The Origin and Host checks of the MCP route come first: a page that rebound its DNS name learns nothing, not even a 401. */
  function guard(call: Call): Reply | undefined {
    if (call.route?.name !== 'mcp') return undefined;
    const refused = mcpGuard(mcp as McpConfig, call.request);
    if (refused !== undefined) call.guarded = true;
    return refused;
  }

  /** `limits.failures`, then the auth list (health needs none): the principal and what its entry grants, or the refusal. */
  async function signIn(call: Call): Promise<Reply | undefined> {
    if (authenticate === undefined || call.route?.name === 'health') return undefined;
    const run = () =>
      (authenticate as Authenticate)(call.request, { deferScopes: true, routeScopes: () => pathScopes(call) });
    // limits.failures: a failure slot of the address is taken before any entry runs, given back unless 401.
    const result = limits?.failures ? await limits.admit(call.request, run, authenticate.builtInOnly) : await run();
    if (!result.ok) {
      const { response, refusal } = result;
      // A 429 of limits.failures comes before any entry ran: a limit refused it, not auth.
      call.refusal =
        response.status === 429
          ? { reason: 'limit' }
          : { reason: refusal?.reason ?? 'unauthenticated', entry: refusal?.entry };
      // limits.failures' 429 comes before the body is read: on MCP its JSON-RPC error has no id to answer (design §29).
      return call.route?.name === 'mcp' ? rpcTooMany(null, response) : response;
    }
    call.principal = result.principal;
    call.grant = result.grant;
    // A token exchange made on this caller's behalf while the request runs joins its log (design §34): what was asked, never a token.
    if (audit !== undefined)
      watchExchanges(result.principal, (asked) => audit.event(call.requestId, { type: 'token-exchanged', ...asked }));
    call.nonce = result.dpopNonce;
    call.trace?.accepted(result.principal);
    return undefined;
  }

  /** 404 for a path that names no route (after auth: behind auth an unknown path is 401), 405 for a method the route does not list. */
  function routed(call: Call): Reply | undefined {
    const { route, request } = call;
    // DELETE of a session is a route of 'owned' agents only: elsewhere it does not exist.
    if (route === undefined || (route.name === 'session' && request.method === 'DELETE' && !owned))
      return refuse(call, { allow: false, status: 404, reason: 'not-found' });
    if (operationOf(route, request.method) !== undefined) return undefined;
    return refuse(call, decide(call, undefined) as Refused);
  }

  /** The operation, once authorized, under the limits: an HTTP route's, `/ui`'s or an MCP call's. */
  async function perform(call: Call): Promise<Reply> {
    const { route, request, principal } = call;
    const operation = operationOf(route, request.method)!;
    if (operation === 'health') return serveRoute(agent, route!, request, principal, undefined);
    if (operation === 'mcp') return mcpCall(call);
    if (operation === 'ui') return uiCall(call);
    // GET <base>/approvals without sessionId: the queue (design §33).
    if (route!.name === 'approvals' && call.sessionId === undefined) return queueCall(call);
    const resource = decidesResources ? await resourceOf(call, route!) : undefined;
    const refused = authorized(call, [operation], undefined, resource) ?? (await keep(call));
    if (refused !== undefined) return refused;
    if (decidesSends && operation === 'send') call.continues = (sessionId) => continuing(call, sessionId);
    if (operation === 'send') call.expiredIf = expiredIf;
    // authorize() decided whose session this is: the operation compares no owner again.
    const decided = resource === undefined ? undefined : { expired: call.expired, approvals };
    if (limits === undefined) return await serveRoute(agent, route!, request, principal, undefined, call, decided);
    return await limits.run(limits.caller(request, principal), runsModel([operation]), (meter) =>
      serveRoute(agent, route!, request, principal, meter, call, decided),
    );
  }

  /** The session or approval a route's operation touches, for authorize(); `undefined`: the operation checks it itself (a send). */
  async function resourceOf(call: Call, route: Route): Promise<Partial<AuthorizeInput> | undefined> {
    const found = resources!;
    const mode = agent.sessions;
    if (route.name === 'session') return { session: { mode, owner: await found.sessionOwner(route.id!) } };
    if (route.name === 'approvals') return approvalsResource(call.sessionId!);
    if (route.name === 'decide') return { approval: { mode, found: await found.approval(route.id!) } };
    return undefined;
  }

  /** The session whose pending approvals a read lists, for authorize() (`GET <base>/approvals?sessionId=`, MCP `read`). */
  async function approvalsResource(sessionId: string): Promise<Partial<AuthorizeInput>> {
    // Under 'shared' with the default rule, a session's approvals are anyone's who knows its id (as before).
    if (!owned && approvals.by === 'owner') return {};
    return { session: { mode: agent.sessions, owner: await resources!.sessionOwner(sessionId), approvals: true } };
  }

  /**
   * A send's session, its id read from the body: authorize() decides whether the caller may
   * continue it, and refuses as an unknown id answers (design §32). An id no session has is the
   * agent's to answer (a new session, or 400 for an anonymous caller's chosen id). authorize()
   * decides on this path; the agent's own §9 check stays behind it as a defence in depth, as the
   * owner read here and the turn are not atomic (a session deleted and made again by another
   * owner in between) and the agent's turn lock serialises only the turns.
   */
  async function continuing(call: Call, sessionId: string): Promise<Reply | undefined> {
    const owner = await resources!.sessionOwner(sessionId);
    if (owner === undefined) return undefined;
    const decision = decide(call, call.operations, undefined, { session: { mode: agent.sessions, owner } });
    if (decision.allow) return undefined;
    // An anonymous caller's chosen id is refused by the agent as for a new session (400): someone else's session answers the same.
    if (isAnonymous(call.principal!)) return undefined;
    return refuse(call, decision);
  }

  /** `GET <base>/approvals` without `sessionId`: the pending approvals the caller may decide, oldest first, a page at a time. */
  async function queueCall(call: Call): Promise<Reply> {
    const refused = authorized(call, READ, undefined, { queue: true }) ?? (await keep(call));
    if (refused !== undefined) return refused;
    if (resources === undefined) return errorReply(400, 'sessionId query parameter is required');
    const listed = await queueOf(call, queueQuery(call.request));
    return listed === undefined ? errorReply(400, 'sessionId query parameter is required') : jsonReply(listed);
  }

  /**
   * The queue's page, once authorize() allowed the read (design §33): the one listing of
   * `GET <base>/approvals` and MCP `read`. `undefined` where no queue can be listed (no store's
   * listing, or under `'owner'` no principal to own a session): the caller must name a session.
   */
  async function queueOf(call: Call, page: QueuePage): Promise<ApprovalsAnswer | undefined> {
    if (resources === undefined) return undefined;
    // Under 'owner', the runs the caller started (its own sessions'); else every one it may decide.
    const principal = call.principal;
    if (approvals.by === 'owner' && principal === undefined) return undefined;
    // An anonymous caller owns nothing: its sessions are reachable by their ids alone, never listed (design §9).
    if (approvals.by === 'owner' && isAnonymous(principal!)) return { approvals: [], nextCursor: null };
    const owner = approvals.by === 'owner' ? ownerKey(principal!) : undefined;
    const tool = call.surface === 'mcp' ? 'read' : undefined;
    const mayDecide = (found: ApprovalResource) =>
      decide(call, READ, tool, { approval: { mode: agent.sessions, found } }).allow;
    return approvalQueue(resources, page, owner, mayDecide, approvals);
  }

  /**
   * MCP `read`, its scopes already decided (with `scopes.approve` for the queue, design §33):
   * without `sessionId` the queue's page, as `GET <base>/approvals` answers; with it, that
   * session's pending approvals, as `GET <base>/approvals?sessionId=` answers, a session the
   * caller may not read answering as an unknown one does. A read never runs the model.
   */
  async function mcpRead(call: Call, { sessionId, limit, cursor }: ApprovalsQuery): Promise<ApprovalsAnswer> {
    if (sessionId === undefined) {
      const listed = await queueOf(call, queuePage(limit, cursor));
      if (listed === undefined)
        throw badRequest('sessionId is required: there is no queue of pending approvals to list for this caller');
      return listed;
    }
    if (limit !== undefined || cursor !== undefined)
      throw badRequest(
        "limit and cursor page the queue (read without sessionId); a session's pending approvals come in one answer",
      );
    const resource = decidesResources ? await approvalsResource(sessionId) : undefined;
    if (resource !== undefined) {
      const decision = decide(call, READ, 'read', resource);
      if (!decision.allow) {
        call.refusal = { reason: decision.reason, scopes: decision.scopes };
        throw new AgentError('SESSION_NOT_FOUND', 'no session has this id');
      }
    }
    // authorize() decided whose session it is: the agent compares no owner again (as on the HTTP route).
    return sessionApprovals(
      agent,
      sessionId,
      resource === undefined ? call.principal : undefined,
      resource === undefined ? undefined : approvals,
    );
  }

  /** `/ui`: its body says what it does (send, decide, or both), then the decision, then the run. */
  async function uiCall(call: Call): Promise<Reply> {
    // Whom the limits count, known before the body is read (clientAddress may read the Request).
    const caller = limits?.caller(call.request, call.principal);
    const body = jsonObject(await readBodyBytes(call.request));
    const ui = parseUiRequest(body);
    call.sessionId = ui.sessionId;
    call.approvalId = ui.decisions[0]?.approvalId;
    const operations = ui.text === undefined ? DECIDE : ui.decisions.length === 0 ? SEND : SEND_AND_DECIDE;
    const refused =
      authorized(call, operations) ??
      (decidesSends && ui.text !== undefined ? await continuing(call, ui.sessionId) : undefined);
    if (refused !== undefined) return refused;
    const checked = await uiDecisions(call, ui);
    if (checked !== undefined && !(checked instanceof Set)) return checked;
    const kept = await keep(call);
    if (kept !== undefined) return kept;
    const metadata = isPlainObject(body.metadata) ? body.metadata : undefined;
    const serve = (meter: TurnMeter | undefined) =>
      uiRoute(agent, ui, metadata, call.principal, meter, call.auditEvents, checked, expiredIf);
    return await (limits === undefined ? serve(undefined) : limits.run(caller!, true, serve));
  }

  /** MCP: the message says the tool, then the decision (the route's scopes, and a tool's), then the call; only tools/call is counted. */
  function mcpCall(call: Call): Promise<Reply> {
    // Whom the limits count, known before the body is read (clientAddress may read the Request).
    const caller = limits?.caller(call.request, call.principal);
    // A read never runs the model: limits.tokens does not refuse it, as it refuses no GET <base>/approvals.
    const limited = limits && ((serve: LimitedRoute) => (limits as Limiter).run(caller!, call.tool !== 'read', serve));
    // Authorized, then (audit.required) the request's record written before anything runs (design §34).
    const forbidden = async (tool: McpTool | undefined, args: unknown, agentTool?: string) => {
      // An agent tool's name is the caller's text until the agent says it has it: cut for the record (design §32).
      call.tool = tool ?? agentTool?.slice(0, 64);
      // The ids a tool call names, for the record: only ids of a plausible length, never a caller's flood.
      const { sessionId, approvalId } = (isPlainObject(args) ? args : {}) as Record<string, unknown>;
      if (typeof sessionId === 'string' && sessionId.length <= MAX_RECORDED_ID) call.sessionId = sessionId;
      if (typeof approvalId === 'string' && approvalId.length <= MAX_RECORDED_ID) call.approvalId = approvalId;
      return (
        authorized(
          call,
          tool === undefined ? NONE : [MCP_TOOLS[tool]],
          tool,
          agentTool !== undefined ? { agentTool } : tool === 'read' ? { queue: readsQueue(args) } : undefined,
        ) ?? (await keep(call))
      );
    };
    // A direct call of an agent tool makes its own session (and approval): the record names them.
    const noted = ({ sessionId, approvalId }: CallIds) => Object.assign(call, { sessionId, approvalId });
    // The run's events join the audit log, as on the HTTP routes (design §34).
    const logged = <T extends object>(options: T | undefined): T =>
      (call.auditEvents === undefined ? (options ?? {}) : { ...options, [AUDIT_EVENTS]: call.auditEvents }) as T;
    // MCP `decide` asks authorize() about the approval before the agent decides it, as the HTTP route does.
    // MCP `ask` naming a session asks authorize() about it before the run, as a send over HTTP does.
    // MCP `read` lists what GET <base>/approvals lists, through the same code (design §33).
    const readApprovals = (query: ApprovalsQuery) => mcpRead(call, query);
    const served: McpAgent =
      decidesResources || audit !== undefined
        ? {
            ...agent,
            decide: (id: string, options: DecideOptions) =>
              decidesResources ? mcpDecide(call, id, logged(options)) : agent.decide(id, logged(options)),
            send: (message: string, options?: SendOptions) => mcpAsk(call, message, logged(options)),
            callTool: (name: string, args: unknown, options?: CallToolOptions) =>
              agent.callTool(name, args, logged(options)),
            readApprovals,
          }
        : { ...agent, readApprovals };
    return mcpRoute(served, mcp as McpConfig, call.request, call.principal, forbidden, limited, telemetry, noted);
  }

  /**
   * MCP `ask` once authorize() has seen the session it names (under 'owned'): a refusal is the
   * tool's error, as the agent's own would be. With `approvals.ttlSec`, an expired approval of the
   * session is denied first, as on every send.
   */
  async function mcpAsk(call: Call, message: string, options: SendOptions = {}): Promise<RunResult> {
    const refused =
      !decidesSends || options.sessionId === undefined ? undefined : await continuing(call, options.sessionId);
    if (refused !== undefined) throw new AgentError('SESSION_NOT_FOUND', 'no session has this id');
    return agent.send(message, expiredIf === undefined ? options : withExpiry(options, expiredIf));
  }

  /** MCP `decide` once authorize() has seen the approval: a refusal is the tool's error, as the agent's own would be. */
  async function mcpDecide(call: Call, approvalId: string, options: DecideOptions): Promise<RunResult> {
    const decision = decide(call, DECIDE, 'decide', {
      approval: { mode: agent.sessions, found: await resources!.approval(approvalId) },
    });
    if (!decision.allow) {
      call.refusal = { reason: decision.reason, scopes: decision.scopes };
      if (decision.reason === 'self-approval' && onRefused !== undefined)
        tellRefused(onRefused, undefined, 'self-approval');
      if (decision.status === 404)
        throw new AgentError('APPROVAL_NOT_FOUND', 'no pending approval has this id (unknown or already decided)');
      throw new HttpError(403, 'Forbidden');
    }
    return agent.decide(approvalId, {
      ...options,
      [AUTHORIZED]: { expired: decision.expired === true },
    } as DecideOptions);
  }

  /** The approvals a `/ui` request answers, each decided by authorize() (design §33); those not found are the route's to answer. */
  async function uiDecisions(call: Call, ui: UiRequest): Promise<Reply | Set<string> | undefined> {
    if (!decidesResources || ui.decisions.length === 0) return undefined;
    const expired = new Set<string>();
    for (const { approvalId } of ui.decisions) {
      const found = await resources!.approval(approvalId);
      if (found === undefined) continue;
      call.approvalId = approvalId;
      const decision = decide(call, call.operations, undefined, { approval: { mode: agent.sessions, found } });
      // A chat's approval is found through its session: refused as unknown, it answers as an unknown session does.
      if (!decision.allow)
        return refuse(call, decision.status === 404 ? { ...decision, missing: 'session' } : decision);
      if (decision.expired === true) expired.add(approvalId);
    }
    return expired;
  }

  /** What the route and method need besides the entry's scopes, known from the path (`/ui`: as a send; MCP: the route's): a custom entry's 403 names them too. */
  function pathScopes({ route, request }: Call): readonly string[] {
    const operation = operationOf(route, request.method);
    if (operation === undefined || operation === 'health') return NONE;
    const operations = operation === 'mcp' ? NONE : [operation === 'ui' ? 'send' : operation];
    return requiredScopes(scopeConfig, operations, operation === 'mcp' ? {} : undefined, undefined);
  }

  /** `authorize()` on what the call knows (design §32), and the resource it touches. */
  function decide(
    call: Call,
    operations: readonly Operation[] | undefined,
    tool?: McpTool,
    resource?: Partial<AuthorizeInput>,
  ): Decision {
    return authorize({
      ...resource,
      surface: call.surface,
      operations,
      methods: call.route?.methods,
      principal: call.principal,
      grant: call.grant,
      config: scopeConfig,
      tool,
      approvals,
    });
  }

  /** The decision on `operations`: `undefined` when allowed, else the refusal's reply. */
  function authorized(
    call: Call,
    operations: readonly Operation[],
    tool?: McpTool,
    resource?: Partial<AuthorizeInput>,
  ): Reply | undefined {
    call.operations = operations;
    if (call.surface === 'ui') call.trace?.operations(operations);
    const decision = decide(call, operations, tool, resource);
    if (decision.allow) {
      call.expired = decision.expired === true;
      if (audit !== undefined) call.auditEvents = auditSink(audit, call.requestId);
      return undefined;
    }
    return refuse(call, decision);
  }

  /**
   * With `audit.required`: the allowed request's record is written before its operation runs
   * (its `status` the decision's 200); one that cannot be written is answered 503 (design §34).
   */
  async function keep(call: Call): Promise<Reply | undefined> {
    if (audit === undefined || !audit.required) return undefined;
    if (await audit.keep(auditRecord(call, 200))) {
      call.kept = true;
      return undefined;
    }
    call.refusal = { reason: 'audit-unavailable' };
    return errorReply(503, 'Service Unavailable', { 'retry-after': '5' });
  }

  /** The reply of a refusal, which the call keeps for its record, its span and `onRefused` (one source). */
  function refuse(call: Call, decision: Refused): Reply {
    call.refusal = { reason: decision.reason, entry: call.grant?.entry, scopes: decision.scopes };
    if (decision.status === 405)
      return errorReply(405, 'Method Not Allowed', { allow: (decision.allowed ?? []).join(', ') });
    // As an unknown id answers: the caller cannot tell "not yours" from "none".
    if (decision.status === 404)
      return errorReply(
        404,
        decision.missing === 'session'
          ? 'Session not found'
          : decision.missing === 'approval'
            ? 'Approval not found'
            : 'Not Found',
      );
    // No token can make the run's starter its own second pair of eyes: a plain 403, no challenge (design §33).
    if (decision.reason === 'self-approval') {
      call.refusal = { reason: decision.reason };
      if (onRefused !== undefined) tellRefused(onRefused, undefined, 'self-approval');
      return errorReply(403, 'Forbidden');
    }
    // An entry's own scopes refused here, once the operation is known, are a refusal onRefused hears as the entry would have said it.
    if (onRefused !== undefined && call.grant !== undefined) tellRefused(onRefused, call.grant.entry, 'scope');
    return (authenticate as Authenticate).insufficientScope(call.request, decision.scopes ?? []);
  }

  /** The answer made: the span ended, the caller's view told, the record kept, each from the call (design §32). */
  function answered(call: Call, reply: Reply, seen: Seen | undefined): void {
    if (call.refusal === undefined && reply.status === 429) call.refusal = { reason: 'limit' };
    if (call.refusal === undefined && reply.status === 404 && call.route !== undefined && call.operations.length > 0)
      call.refusal = { reason: 'not-found' };
    call.trace?.replied(reply, call.refusal);
    // The token the caller presented is reachable while the request is answered, and no longer (a run still streaming holds it).
    if (call.principal !== undefined) releasePresentedToken(call.principal);
    if (seen !== undefined) seen.principal = call.principal;
    // A request whose record was kept before its operation gets a second one only when refused after it (MCP decide's approval).
    if (
      audit !== undefined &&
      !call.guarded &&
      call.route?.name !== 'health' &&
      (!call.kept || call.refusal !== undefined)
    )
      audit.record(auditRecord(call, reply.status));
  }
}

/** Why a request was refused: the reason word, the entry (auth, or the accepting one's), and the scopes of a 403. */
interface CallRefusal {
  readonly reason: string;
  readonly entry?: string | undefined;
  readonly scopes?: readonly string[] | undefined;
}

/** One request's values, passed from step to step (design §32): nothing is written onto the request. */
interface Call {
  readonly request: RouteRequest;
  readonly route: Route | undefined;
  readonly trace: RequestTrace | undefined;
  readonly surface: Surface;
  /** What the request does, once known. */
  operations: readonly Operation[];
  principal: Principal | undefined;
  grant: EntryGrant | undefined;
  /** The DPoP nonce the accepting entry offered: every answer carries it. */
  nonce: string | undefined;
  /** Why the request was refused, when it was. */
  refusal: CallRefusal | undefined;
  /** The MCP guard answered: the request never got past the guards (no record). */
  guarded: boolean;
  /** The MCP tool a `tools/call` names: `ask`, `decide`, `read` or an agent tool (cut to 64 characters). */
  tool: string | undefined;
  sessionId: string | undefined;
  approvalId: string | undefined;
  /** authorize() found the approval past `approvals.ttlSec`: it is decided as denied. */
  expired: boolean;
  /** This record's id (a random UUID), which the run's audit events carry too. */
  readonly requestId: string;
  /** With `audit.required`: the record was written before the operation ran. */
  kept: boolean;
  /** The run's audit events, into the handler's log (design §34). */
  auditEvents?: AuditSink | undefined;
  /** With `approvals.ttlSec`, on a send: whether a pending approval has expired (design §33). */
  expiredIf?: ((createdAt: string | undefined) => boolean) | undefined;
  /** A send's check of the session its body names (`continuing`), once the body is read. */
  continues?: ((sessionId: string) => Promise<Reply | undefined>) | undefined;
}

const newCall = (request: RouteRequest, route: Route | undefined, trace: RequestTrace | undefined): Call => ({
  request,
  route,
  trace,
  surface: route?.name === 'mcp' ? 'mcp' : route?.name === 'ui' ? 'ui' : 'http',
  operations: NONE,
  principal: undefined,
  grant: undefined,
  nonce: undefined,
  refusal: undefined,
  guarded: false,
  tool: undefined,
  // The ids a path or query carries; `/ui` says its own once its body is read.
  sessionId: route?.name === 'session' ? route.id : route?.name === 'approvals' ? sessionQuery(request) : undefined,
  approvalId: route?.name === 'decide' ? route.id : undefined,
  expired: false,
  requestId: crypto.randomUUID(),
  kept: false,
});

/** Whether MCP `read`'s arguments ask for the queue (no `sessionId`), which needs `scopes.approve` too under `approvals.by` other than `'owner'`. */
const readsQueue = (args: unknown) => !isPlainObject(args) || args.sessionId === undefined;

/** The `sessionId` of `GET <base>/approvals?sessionId=`, read only with a query. */
const sessionQuery = (request: RouteRequest) =>
  request.url.includes('?') ? (new URL(request.url).searchParams.get('sessionId') ?? undefined) : undefined;

/** The record of one answer (design §32): never a token, a password, a proof or a header value. */
function auditRecord(call: Call, status: number): AuditRecord {
  const { refusal, principal } = call;
  // MCP answers a refused `decide` in its tool result (200): the record still says it was refused.
  const refused = REFUSED.has(status) || (status === 200 && refusal !== undefined);
  const record: { -readonly [K in keyof AuditRecord]: AuditRecord[K] } = {
    time: isoNow(),
    requestId: call.requestId,
    surface: call.surface,
    operations: call.operations,
    outcome: refused ? 'refused' : 'allowed',
    status,
  };
  if (refused) record.reason = refusal?.reason ?? 'refused';
  const entry = refusal?.entry ?? call.grant?.entry;
  if (entry !== undefined) record.entry = entry;
  if (principal !== undefined) {
    const [tenant, issuer, authenticator, id] = callerKey(principal);
    record.caller = { tenant, issuer, authenticator, id, type: principal.type };
  }
  if (call.sessionId !== undefined) record.sessionId = call.sessionId;
  if (call.approvalId !== undefined) record.approvalId = call.approvalId;
  if (call.tool !== undefined) record.tool = call.tool;
  if (status === 403 && refusal?.scopes !== undefined) record.scopes = refusal.scopes;
  return record;
}

/** The statuses of a refusal. */
const REFUSED: ReadonlySet<number> = new Set([401, 403, 404, 405, 429]);

/** Tells `onRefused` of a 403 for scopes, as the entry would have; what it throws is logged, never the answer. */
function tellRefused(onRefused: RefusalListener, entry: string | undefined, reason: 'scope' | 'self-approval'): void {
  try {
    const result = onRefused(entry === undefined ? { reason } : { entry, reason }) as unknown;
    if (result instanceof Promise) result.catch(refusalFailed);
  } catch (error) {
    refusalFailed(error);
  }
}
const refusalFailed = (error: unknown) => console.error('agentward: onRefused failed', error);

const ignoreRefusal = () => undefined;

const NONE: readonly Operation[] = Object.freeze([]);
/** The longest id a record takes from a tool call's arguments. */
const MAX_RECORDED_ID = 256;
const SEND: readonly Operation[] = ['send'];
const DECIDE: readonly Operation[] = ['decide'];
const READ: readonly Operation[] = ['read'];
const SEND_AND_DECIDE: readonly Operation[] = ['send', 'decide'];
