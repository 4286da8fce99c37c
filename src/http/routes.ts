// The agent routes (design §5): which route a path names, and what each one does once the
// handler has authenticated the caller and checked its scopes and limits.
import type { Agent, Principal, SendOptions, TurnMeter } from '../agent/types.ts';
import { isPlainObject } from '../agent/tools.ts';
import { addUsage } from '../agent/model-turn.ts';
import { jsonObject, parseDecisionBody, parseSendBody, readBodyBytes } from './body.ts';
import { acceptsEventStream, chatEventFormat, streamRun, type StreamedRun } from './event-stream.ts';
import { badRequest, HttpError, jsonReply, type Reply } from './responses.ts';
import type { RouteRequest } from './route-request.ts';
import type { ScopeGroup } from './scopes.ts';
import { parseUiRequest, UI_STREAM_HEADERS, uiEventFormat, type UiDecision } from './ui-stream.ts';

/** A route a path names, with the methods it answers and the id its path carries. */
export type Route =
  | { name: 'health' | 'approvals' | 'sessions'; methods: readonly ['GET'] }
  | { name: 'send' | 'chat' | 'ui'; methods: readonly ['POST'] }
  | { name: 'mcp'; methods: readonly ['POST'] }
  | { name: 'session'; methods: readonly ['GET'] | readonly ['GET', 'DELETE']; id: string }
  | { name: 'decide'; methods: readonly ['POST']; id: string };

const SCOPE_GROUP: Readonly<Partial<Record<Route['name'], ScopeGroup>>> = {
  send: 'send',
  chat: 'send',
  ui: 'send',
  session: 'read',
  approvals: 'read',
  decide: 'approve',
  sessions: 'sessions',
  mcp: 'mcp',
};

/** The scope group of a route (`agentHandler`'s `scopes`): `DELETE` of a session is in `sessions`. */
export const scopeGroup = (route: Route, method: string): ScopeGroup | undefined =>
  route.name === 'session' && method === 'DELETE' ? 'sessions' : SCOPE_GROUP[route.name];

const GET = ['GET'] as const;
const POST = ['POST'] as const;
const route = (name: Route['name'], methods: readonly string[], id?: string) => ({ name, methods, id }) as Route;

function decodeSegment(segment: string): string | undefined {
  try {
    const decoded = decodeURIComponent(segment);
    return decoded === '' ? undefined : decoded;
  } catch {
    return undefined;
  }
}

/**
 * The route a path names under `basePath`, or `undefined` (404). One trailing `/` is ignored.
 * `GET /sessions` and `DELETE /chat/:id` exist for `'owned'` agents only.
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
      return route('send', POST);
    case 'health':
      return id === undefined ? route('health', GET) : undefined;
    case 'chat':
      return id === undefined ? route('chat', POST) : route('session', owned ? ['GET', 'DELETE'] : GET, id);
    case 'approvals':
      return id === undefined ? route('approvals', GET) : route('decide', POST, id);
    case 'ui':
      return id === undefined ? route('ui', POST) : undefined;
    case 'sessions':
      return owned && id === undefined ? route('sessions', GET) : undefined;
    case 'mcp':
      return mcp && id === undefined ? route('mcp', POST) : undefined;
    default:
      return undefined;
  }
}

/** The routes that run the model: `limits.tokens` refuses them once the window's total is spent. */
export const TURNS = new Set(['send', 'chat', 'decide', 'ui']);

/** The query of the request's URL, parsed only by the routes that take one. */
const queryOf = (request: RouteRequest) => new URL(request.url).searchParams;

/**
 * Each route in a function of its own, so a waiting send keeps only its own frame, and the
 * closures of `/ui` and of a streamed `/chat` capture their variables on those routes alone.
 */
export function serveRoute(
  agent: Agent,
  route: Exclude<Route, { name: 'mcp' }>,
  request: RouteRequest,
  principal: Principal | undefined,
  meter: TurnMeter | undefined,
): Reply | Promise<Reply> {
  switch (route.name) {
    case 'send':
    case 'chat':
      return sendRoute(agent, route.name === 'chat', request, principal, meter);
    case 'session':
      return request.method === 'DELETE'
        ? deleteRoute(agent, route.id, principal)
        : transcriptRoute(agent, route.id, principal);
    case 'approvals':
      return approvalsRoute(agent, request, principal);
    case 'sessions':
      return sessionsRoute(agent, request, principal!);
    case 'decide':
      return decideRoute(agent, route.id, request, principal, meter);
    case 'ui':
      return uiRoute(agent, request, principal, meter);
    case 'health':
      return jsonReply({ status: 'ok' });
  }
}

async function sendRoute(
  agent: Agent,
  chat: boolean,
  request: RouteRequest,
  principal: Principal | undefined,
  meter: TurnMeter | undefined,
): Promise<Reply> {
  const { message, sessionId, metadata } = parseSendBody(jsonObject(await readBodyBytes(request)));
  // A stream's run stops when its body is cancelled (streamRun), never on the request's signal: Deno warns on a read of that.
  if (chat && acceptsEventStream(request)) return streamChat(agent, message, { principal, sessionId, metadata, meter });
  return jsonReply(await agent.send(message, { principal, sessionId, metadata, signal: request.signal, meter }));
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

async function approvalsRoute(agent: Agent, request: RouteRequest, principal: Principal | undefined): Promise<Reply> {
  const sessionId = queryOf(request).get('sessionId');
  if (!sessionId) throw badRequest('sessionId query parameter is required');
  return jsonReply({ approvals: await agent.pendingApprovals(sessionId, { principal }) });
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
): Promise<Reply> {
  const { approved, reason } = parseDecisionBody(jsonObject(await readBodyBytes(request)));
  return jsonReply(await agent.decide(id, { approved, reason, principal, signal: request.signal, meter }));
}

async function uiRoute(
  agent: Agent,
  request: RouteRequest,
  principal: Principal | undefined,
  meter: TurnMeter | undefined,
): Promise<Reply> {
  const body = jsonObject(await readBodyBytes(request));
  const ui = parseUiRequest(body);
  const metadata = isPlainObject(body.metadata) ? body.metadata : undefined;
  if (ui.kind === 'message') {
    const run: StreamedRun = (onEvent, signal) =>
      agent.send(ui.text, { principal, sessionId: ui.sessionId, metadata, signal, onEvent, meter });
    return streamRun(run, uiEventFormat(`msg-${crypto.randomUUID()}`), UI_STREAM_HEADERS);
  }
  // An approval decided through a chat must wait in that chat's session.
  const pending = new Set((await agent.pendingApprovals(ui.sessionId, { principal })).map((approval) => approval.id));
  if (!ui.decisions.every(({ approvalId }) => pending.has(approvalId))) throw new HttpError(404, 'Approval not found');
  const run: StreamedRun = async (onEvent, signal) => {
    const decide = ({ approvalId, approved, reason }: UiDecision) =>
      agent.decide(approvalId, { approved, reason, principal, signal, onEvent, meter });
    const [first, ...rest] = ui.decisions;
    let result = await decide(first);
    let { usage } = result;
    for (const decision of rest) {
      result = await decide(decision);
      if (result.usage !== undefined) usage = addUsage(usage, result.usage);
    }
    return usage === undefined ? result : { ...result, usage };
  };
  return streamRun(run, uiEventFormat(ui.messageId), UI_STREAM_HEADERS);
}
