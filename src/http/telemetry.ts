// The route handler's spans (design §28): `agentward {operation}` around each request, with the
// auth outcome, the refusing limit and the principal, and an MCP `tools/call` span. Reached only
// with the `telemetry` option; never a token, a password, a cookie or an Authorization value.
import {
  endSpan,
  inSpan,
  INTERNAL,
  startSpan,
  OPERATION,
  SERVER,
  TOOL_NAME,
  spanFailed,
  type Telemetry,
  type TelemetrySpan,
  type TelemetrySpanOptions,
} from '../agent/telemetry.ts';
import type { Principal } from '../agent/types.ts';
import type { IdText } from './json-rpc.ts';
import { JsonReply, type Reply } from './responses.ts';
import { MCP_TOOLS } from './operations.ts';
import { operationOf, type Route } from './routes.ts';

const OUTCOME = 'agentward.auth.outcome';
const AUTHENTICATOR = 'agentward.auth.authenticator';
/** The helper name of the entry that refused (`jwt`, `apiToken`, …): a field of its own, never spelled as the authenticator. */
const ENTRY = 'agentward.auth.entry';

/** The characters of a caller's JSON-RPC id a span keeps (design §32). */
const MAX_ID = 128;

/**
 * Each operation's span name and options, made once (as a run's are, agent/telemetry.ts): a
 * tracer reads them and keeps none of them (docs/design.md §30, "Speed tricks and what they bought").
 */
const SPANS = new Map<string, { name: string; options: TelemetrySpanOptions }>();

/** The span of one request: started with its answer, told what happens as it goes, ended with the reply. */
export class RequestTrace {
  readonly telemetry: Telemetry;
  span: TelemetrySpan | undefined;
  constructor(telemetry: Telemetry) {
    this.telemetry = telemetry;
  }
  /**
   * Starts the request's `agentward {operation}` span (INTERNAL; under the active span of an HTTP
   * instrumentation, when there is one) and calls `answer` inside it: `answer`'s promise, as it is.
   */
  start<T>(method: string, route: Route | undefined, answer: () => Promise<T>): Promise<T> {
    // The operation of design §25 the route performs with `method`, from the operation table
    // (`Route.operations`): `send`, `decide`, `read`, `sessions`, `mcp`, `health`; `/ui` is `send`
    // (what else it does is known once its body is read: `operations`); `unknown` for a path that
    // names no route or a method it does not answer.
    const named = operationOf(route, method);
    const operation = named === undefined ? 'unknown' : named === 'ui' ? 'send' : named;
    let kept = SPANS.get(operation);
    if (kept === undefined) {
      kept = {
        name: `agentward ${operation}`,
        options: { kind: INTERNAL, attributes: { 'agentward.operation': operation } },
      };
      SPANS.set(operation, kept);
    }
    const { name, options } = kept;
    return startSpan(this.telemetry.tracer, name, options, (span) => {
      this.span = span;
      return answer();
    });
  }
  accepted({ authenticator, id, issuer, tenant }: Principal): void {
    const span = this.span!;
    span.setAttribute(OUTCOME, 'accepted');
    span.setAttribute(AUTHENTICATOR, authenticator);
    // The organization, not the person: kept with recordPrincipal: false too, for budgets and traces by tenant.
    if (tenant !== undefined) span.setAttribute('agentward.tenant', tenant);
    if (!this.telemetry.recordPrincipal) return;
    span.setAttribute('enduser.id', id);
    if (issuer !== undefined) span.setAttribute('agentward.principal.issuer', issuer);
  }
  /** What a `/ui` request does, once its body says: `send`, `decide` or `send decide`. */
  operations(operations: readonly string[]): void {
    this.span!.setAttribute('agentward.operation', operations.join(' '));
  }
  /**
   * Ends the span, whatever happened, with the reply (`replied`) and, for a request auth refused
   * (401, 403), the refusal the handler's record holds too: the refusing entry (`agentward.auth.entry`,
   * its helper's name) and the reason. A 429 of a limit is a limit's, not auth's.
   */
  replied(reply: Reply, refusal: { readonly reason: string; readonly entry?: string } | undefined): void {
    // A request answered before its route was known (a bad path, the metadata document) has no span.
    const span = this.span;
    if (span === undefined) return;
    if (refusal !== undefined && (reply.status === 401 || reply.status === 403)) {
      span.setAttribute(OUTCOME, 'refused');
      if (refusal.entry !== undefined) span.setAttribute(ENTRY, refusal.entry);
      if (refusal.reason !== 'unauthenticated') span.setAttribute('agentward.auth.refusal_reason', refusal.reason);
    }
    endSpan(span, replied, reply);
  }
}

/** The status of the reply; a 429's policy; a 5xx is an ERROR (a 4xx is the caller's, not the server's). */
function replied(span: TelemetrySpan, reply: Reply): void {
  const { status } = reply;
  span.setAttribute('http.response.status_code', status);
  if (status === 429) {
    // The policy a 429 names first in its `RateLimit` field (`"requests";r=0;t=30` → `requests`).
    const field = reply instanceof JsonReply ? reply.headers.ratelimit : reply.headers.get('ratelimit');
    const policy = /^"([a-z-]+)"/.exec(field ?? '')?.[1];
    if (policy !== undefined) span.setAttribute('agentward.limit.policy', policy);
  }
  if (status >= 500) spanFailed(span, undefined, String(status));
}

// Version ff and all-zero ids are invalid; a version-00 value ends after the flags.
const TRACEPARENT = /^(?!ff)([\da-f]{2})-(?!0{32})([\da-f]{32})-(?!0{16})([\da-f]{16})-([\da-f]{2})(-.*)?$/;

/**
 * The span context of a W3C `traceparent` (Trace Context §3.2), read as plain data: version
 * `ff`, an all-zero id, a version-00 value with more after it, or anything not a string is none.
 */
export function parseTraceparent(
  value: unknown,
): { traceId: string; spanId: string; traceFlags: number; isRemote: true } | undefined {
  const match = typeof value === 'string' && value.length <= 512 ? TRACEPARENT.exec(value) : null;
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === '00' && rest !== undefined) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
}

/**
 * An MCP `tools/call` in its span (SERVER, the MCP conventions): `mcp.method.name`,
 * `mcp.protocol.version` (the revision the request names, when it names one),
 * `network.transport` (`tcp`: streamable HTTP), `jsonrpc.request.id`, `gen_ai.tool.name`, and
 * `params._meta.traceparent` as a link. A JSON-RPC error sets `error.type` to its code, a tool
 * result with `isError` to `tool_error`.
 */
export function tracedToolCall(
  telemetry: Telemetry,
  id: IdText,
  tool: string,
  meta: unknown,
  call: () => Promise<Reply>,
  protocolVersion: string | null,
): Promise<Reply> {
  const attributes: Record<string, string> = {
    'mcp.method.name': 'tools/call',
    'network.transport': 'tcp',
    // The id as the request wrote it (its source text, design §29): a string's value, a number's digits; cut to 128 characters (design §32).
    'jsonrpc.request.id': (id.startsWith('"') ? (JSON.parse(id) as string) : id).slice(0, MAX_ID),
    [OPERATION]: 'execute_tool',
    [TOOL_NAME]: tool.slice(0, 64),
  };
  if (protocolVersion !== null) attributes['mcp.protocol.version'] = protocolVersion;
  const parent = parseTraceparent((meta as { traceparent?: unknown } | null | undefined)?.traceparent);
  // The tools the route serves name spans; any other name stays an attribute only (cardinality).
  const name = Object.hasOwn(MCP_TOOLS, tool) ? `tools/call ${tool}` : 'tools/call';
  const options = { kind: SERVER, attributes, ...(parent !== undefined && { links: [{ context: parent }] }) };
  return inSpan(telemetry.tracer, name, options, call, toolCalled);
}

/** A JSON-RPC error's code, or a tool result that failed (`isError`, which answers 200), as the span's `error.type`. */
function toolCalled(span: TelemetrySpan, reply: Reply): void {
  const text = reply instanceof JsonReply ? reply.text : '';
  const type =
    /"error":\{"code":(-?\d+)/.exec(text)?.[1] ?? (text.includes('"isError":true') ? 'tool_error' : undefined);
  if (type !== undefined) spanFailed(span, undefined, type);
}
