// The agent routes (design §5): which route a path names, and what each one does once the
// handler has authenticated the caller and checked its scopes and limits.
import type { Agent, DecideOptions, Principal, RunResult, SendOptions, TurnMeter, Usage } from '../agent/types.ts';
import {
  AUDIT_EVENTS,
  AUTHORIZED,
  resourcesOf,
  type AuditEvents,
  type AuditSink,
  type Authorized,
} from '../agent/resources.ts';
import { isExpired, type ApprovalsConfig } from './approvals.ts';
import { AgentError } from '../agent/errors.ts';
import { addUsage } from '../agent/model-turn.ts';
import { jsonObject, parseDecisionBody, parseSendBody, readBodyBytes } from './body.ts';
import { acceptsEventStream, chatEventFormat, streamRun, type StreamedRun } from './event-stream.ts';
import { badRequest, HttpError, jsonReply, type Reply } from './responses.ts';
import type { RouteRequest } from './route-request.ts';
import type { Operation } from './operations.ts';
import type { ApprovalsAnswer } from './queue.ts';
import { UI_STREAM_HEADERS, uiEventFormat, type UiDecision, type UiRequest } from './ui-stream.ts';

/**
 * What a route does with a method: an operation (design §25); `ui`, the operation the body names
 * (send, decide, or both); `mcp`, the MCP route (the operation its tool names); `health`, none.
 */
export type RouteOperation = Operation | 'ui' | 'mcp' | 'health';

/**
 * A route a path names: its name, what each method it answers does, and the id its path carries.
 * `operations` is a `Map`, never an object: a method is the caller's string, and an object would
 * answer `toString`, `constructor` or `__proto__` with what it inherits (design §32).
 */
export interface Route {
  readonly name: 'health' | 'send' | 'chat' | 'session' | 'approvals' | 'decide' | 'ui' | 'sessions' | 'mcp';
  readonly operations: ReadonlyMap<string, RouteOperation>;
  /** The methods it answers, for `Allow`. */
  readonly methods: readonly string[];
  readonly id?: string;
}

const route = (name: Route['name'], operations: Record<string, RouteOperation>): Route =>
  Object.freeze({
    name,
    operations: new Map(Object.entries(operations)),
    methods: Object.freeze(Object.keys(operations)),
  });

/** What `method` does on `route`: `undefined` for a method the route does not list (405), whatever its name. */
export const operationOf = (route: Route | undefined, method: string): RouteOperation | undefined =>
  route?.operations.get(method);

/**
 * The route table (design §5, §25): what each method does on each path under `basePath`.
 * `matchRoute` below is the only reader of a path. `DELETE <base>/chat/:id` and `GET <base>/sessions`
 * are routes of `'owned'` agents only; `POST <base>/mcp` of a handler with `mcp`.
 */
const ROUTES = Object.freeze({
  /** `<base>` */
  send: route('send', { POST: 'send' }),
  /** `<base>/health` */
  health: route('health', { GET: 'health' }),
  /** `<base>/chat` */
  chat: route('chat', { POST: 'send' }),
  /** `<base>/chat/:id` */
  session: route('session', { GET: 'read' }),
  /** `<base>/chat/:id` of an `'owned'` agent */
  ownedSession: route('session', { GET: 'read', DELETE: 'sessions' }),
  /** `<base>/approvals?sessionId=` */
  approvals: route('approvals', { GET: 'read' }),
  /** `<base>/approvals/:id` */
  decide: route('decide', { POST: 'decide' }),
  /** `<base>/ui` */
  ui: route('ui', { POST: 'ui' }),
  /** `<base>/sessions` of an `'owned'` agent */
  sessions: route('sessions', { GET: 'sessions' }),
  /** `<base>/mcp` of a handler with `mcp` */
  mcp: route('mcp', { POST: 'mcp' }),
});

/** The route of a path with an id: the table's, and the id. */
const withId = (route: Route, id: string): Route => ({ ...route, id });

function decodeSegment(segment: string): string | undefined {
  try {
    const decoded = decodeURIComponent(segment);
    return decoded === '' ? undefined : decoded;
  } catch {
    return undefined;
  }
}

/**
 * The route a path names under `basePath`, or `undefined` (404): the only place a path is read
 * as a route. One trailing `/` is ignored.
 */
export function matchRoute(pathname: string, basePath: string, owned: boolean, mcp: boolean): Route | undefined {
  if (pathname !== basePath && !pathname.startsWith(`${basePath}/`)) return undefined;
  const rest = pathname.slice(basePath.length).replace(/\/$/, '');
  const parts = rest === '' ? [] : rest.slice(1).split('/');
  if (parts.length > 2) return undefined;
  const first = parts[0];
  const second = parts[1];
  const id = second === undefined ? undefined : decodeSegment(second);
  if (second !== undefined && id === undefined) return undefined;
  switch (first) {
    case undefined:
      return ROUTES.send;
    case 'health':
    case 'ui':
      return id === undefined ? ROUTES[first] : undefined;
    case 'chat':
      return id === undefined ? ROUTES.chat : withId(owned ? ROUTES.ownedSession : ROUTES.session, id);
    case 'approvals':
      return id === undefined ? ROUTES.approvals : withId(ROUTES.decide, id);
    case 'sessions':
      return owned && id === undefined ? ROUTES.sessions : undefined;
    case 'mcp':
      return mcp && id === undefined ? ROUTES.mcp : undefined;
    default:
      return undefined;
  }
}

/** The query of the request's URL, parsed only by the routes that take one. */
const queryOf = (request: RouteRequest) => new URL(request.url).searchParams;

/** What authorize() decided of the resource (design §32): whether the approval expired, and the `approvals` option. */
export interface Decided {
  readonly expired: boolean;
  readonly approvals?: ApprovalsConfig;
}

/** What a route learns of the request as it serves it, for the handler's record: the session a send names. */
export interface Noted {
  sessionId?: string | undefined;
  /** The handler's audit log for the run's events (design §34). */
  readonly auditEvents?: AuditSink | undefined;
  /** With `approvals.ttlSec`: whether a pending approval has expired; the send denies it first (design §33). */
  readonly expiredIf?: ((createdAt: string | undefined) => boolean) | undefined;
  /**
   * authorize() on the existing session a send names, once its body is read (design §32): the
   * refusal's reply, or `undefined` (allowed, or no such session: the send makes it).
   */
  readonly continues?: ((sessionId: string) => Promise<Reply | undefined>) | undefined;
}

/**
 * Each route in a function of its own, so a waiting send keeps only its own frame, and the
 * closures of `/ui` and of a streamed `/chat` capture their variables on those routes alone.
 * `/ui` (its body read first) and the MCP route are served by the handler.
 */
export function serveRoute(
  agent: Agent,
  route: Route,
  request: RouteRequest,
  principal: Principal | undefined,
  meter: TurnMeter | undefined,
  noted?: Noted,
  decided?: Decided,
): Reply | Promise<Reply> {
  // authorize() decided whose session it is (design §32): the agent is asked as trusted code, and compares no owner again.
  const reader = decided === undefined ? principal : undefined;
  switch (route.name) {
    case 'send':
    case 'chat':
      return sendRoute(agent, route.name === 'chat', request, principal, meter, noted);
    case 'session':
      return request.method === 'DELETE'
        ? deleteRoute(agent, route.id!, reader)
        : transcriptRoute(agent, route.id!, reader);
    case 'approvals':
      return approvalsRoute(agent, request, reader, decided);
    case 'sessions':
      return sessionsRoute(agent, request, principal!);
    case 'decide':
      return decideRoute(agent, route.id!, request, principal, meter, decided, noted?.auditEvents);
    case 'health':
      return jsonReply({ status: 'ok' });
    default:
      throw new AgentError(
        'INTERNAL',
        `agentHandler(): the route ${route.name} is the handler's own, never served here`,
      );
  }
}

async function sendRoute(
  agent: Agent,
  chat: boolean,
  request: RouteRequest,
  principal: Principal | undefined,
  meter: TurnMeter | undefined,
  noted: Noted | undefined,
): Promise<Reply> {
  const { message, sessionId, metadata } = parseSendBody(jsonObject(await readBodyBytes(request)));
  if (noted !== undefined) noted.sessionId = sessionId;
  const refused = sessionId === undefined ? undefined : await noted?.continues?.(sessionId);
  if (refused !== undefined) return refused;
  let logged: SendOptions & AuditEvents = { principal, sessionId, metadata, meter };
  if (noted?.auditEvents !== undefined) logged[AUDIT_EVENTS] = noted.auditEvents;
  if (noted?.expiredIf !== undefined) logged = withExpiry(logged, noted.expiredIf);
  // A stream's run stops when its body is cancelled (streamRun), never on the request's signal: Deno warns on a read of that.
  if (chat && acceptsEventStream(request)) return streamChat(agent, message, logged);
  return jsonReply(await agent.send(message, { ...logged, signal: request.signal }));
}

function streamChat(agent: Agent, message: string, options: SendOptions): Promise<Response> {
  return streamRun((onEvent, signal) => agent.send(message, { ...options, signal, onEvent }), chatEventFormat, {});
}

async function deleteRoute(agent: Agent, id: string, principal: Principal | undefined): Promise<Reply> {
  await agent.deleteSession(id, { principal });
  return new Response(null, { status: 204, headers: { 'cache-control': 'no-store' } });
}

async function transcriptRoute(agent: Agent, id: string, principal: Principal | undefined): Promise<Reply> {
  const { sessionId, messages } = await agent.transcript(id, { principal });
  return jsonReply({ sessionId, messages });
}

async function approvalsRoute(
  agent: Agent,
  request: RouteRequest,
  principal: Principal | undefined,
  decided: Decided | undefined,
): Promise<Reply> {
  const sessionId = queryOf(request).get('sessionId');
  if (!sessionId) throw badRequest('sessionId query parameter is required');
  return jsonReply(await sessionApprovals(agent, sessionId, principal, decided?.approvals));
}

/**
 * A session's pending approvals, as `GET <base>/approvals?sessionId=` and MCP `read` answer them.
 * `principal`: the caller the agent checks the session against, or `undefined` once authorize()
 * has decided it (design §32). With `approvals.ttlSec`, each is shown `pending` or `expired`.
 */
export async function sessionApprovals(
  agent: Agent,
  sessionId: string,
  principal: Principal | undefined,
  ttl: ApprovalsConfig | undefined,
): Promise<ApprovalsAnswer> {
  const pending = await agent.pendingApprovals(sessionId, { principal });
  const resources = resourcesOf(agent);
  if (ttl?.ttlSec === undefined || resources === undefined) return { approvals: pending };
  // Past approvals.ttlSec a pending approval is shown expired; a read never decides it (design §33).
  const shown = [];
  for (const approval of pending) {
    const found = await resources.approval(approval.id);
    const expired = found !== undefined && isExpired(ttl, found.createdAt);
    shown.push({ ...approval, status: expired ? 'expired' : 'pending' });
  }
  return { approvals: shown };
}

async function sessionsRoute(agent: Agent, request: RouteRequest, principal: Principal): Promise<Reply> {
  const query = queryOf(request);
  const limit = query.get('limit');
  const cursor = query.get('cursor');
  if (limit !== null && !/^[0-9]{1,3}$/.test(limit)) throw badRequest('limit must be an integer from 1 to 100');
  return jsonReply(
    await agent.listSessions({
      principal,
      ...(limit !== null && { limit: Number(limit) }),
      ...(cursor !== null && { cursor }),
    }),
  );
}

async function decideRoute(
  agent: Agent,
  id: string,
  request: RouteRequest,
  principal: Principal | undefined,
  meter: TurnMeter | undefined,
  decided: Decided | undefined,
  auditEvents: AuditSink | undefined,
): Promise<Reply> {
  const { approved, reason } = parseDecisionBody(jsonObject(await readBodyBytes(request)));
  const options: DecideOptions & Authorized & AuditEvents = {
    approved,
    reason,
    principal,
    signal: request.signal,
    meter,
  };
  if (auditEvents !== undefined) options[AUDIT_EVENTS] = auditEvents;
  return jsonReply(
    await agent.decide(
      id,
      decided === undefined ? options : { ...options, [AUTHORIZED]: { expired: decided.expired } },
    ),
  );
}

/**
 * `POST <base>/ui`, its body read (`ui`): a message streams a new assistant message; decisions
 * alone continue the assistant message that asked them. Decisions with a message are the user's
 * answers written before the message: those still pending are decided first, without events
 * (their calls belong to the message before), then the message streams as a new one.
 */
export async function uiRoute(
  agent: Agent,
  ui: UiRequest,
  metadata: Record<string, unknown> | undefined,
  principal: Principal | undefined,
  meter: TurnMeter | undefined,
  auditEvents?: AuditSink,
  expired?: ReadonlySet<string>,
  expiredIf?: (createdAt: string | undefined) => boolean,
): Promise<Reply> {
  const { sessionId, text, decisions } = ui;
  const logged = auditEvents === undefined ? {} : { [AUDIT_EVENTS]: auditEvents };
  /** The user's text sent, its events streamed (an expired approval of the session denied first). */
  const send: StreamedRun = (onEvent, signal) => {
    const options = { principal, sessionId, metadata, signal, onEvent, meter, ...logged };
    return agent.send(text!, expiredIf === undefined ? options : withExpiry(options, expiredIf));
  };
  // The assistant message the chunks make: a new one, or the one whose approvals were answered (decisions alone).
  const stream = (run: StreamedRun) =>
    streamRun(run, uiEventFormat(ui.messageId ?? `msg-${crypto.randomUUID()}`), UI_STREAM_HEADERS);
  if (decisions.length === 0) return stream(send);
  // An approval decided through a chat must wait in that chat's session.
  const pending = new Set((await agent.pendingApprovals(sessionId, { principal })).map((approval) => approval.id));
  if (text === undefined && !decisions.every(({ approvalId }) => pending.has(approvalId)))
    throw new HttpError(404, 'Approval not found');
  const run: StreamedRun = async (onEvent, signal) => {
    const decide = ({ approvalId, approved, reason }: UiDecision, streamed: boolean) =>
      agent.decide(approvalId, {
        approved,
        reason,
        principal,
        signal,
        onEvent: streamed ? onEvent : undefined,
        meter,
        ...logged,
        // Past approvals.ttlSec (authorize() said so): decided as denied.
        ...(expired?.has(approvalId) && { [AUTHORIZED]: { expired: true } }),
      });
    let result: RunResult | undefined;
    let usage: Usage | undefined;
    const spent = (next: RunResult) => {
      if (next.usage !== undefined) usage = addUsage(usage, next.usage);
      return (result = next);
    };
    for (const decision of decisions)
      if (text === undefined) spent(await decide(decision, true));
      else if (pending.has(decision.approvalId)) spent(await decide(decision, false));
    if (text !== undefined) spent(await send(onEvent, signal));
    return usage === undefined ? result! : { ...result!, usage };
  };
  return stream(run);
}

/** A send's options with what `approvals.ttlSec` says of its session's pending approval (design §33). */
export const withExpiry = <T extends SendOptions>(
  options: T,
  expiredIf: (createdAt: string | undefined) => boolean,
): T & Authorized => ({ ...options, [AUTHORIZED]: { expiredIf } });
