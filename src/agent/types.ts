// The agent contract (design §6). Shared by src/agent (runtime), src/http (routes) and src/node (server, file store).
// What a store keeps, and the `Store` interface, are in store-types.ts.
import type { Principal } from '../auth/internal.ts';
import type { AiSdkTool } from './ai-sdk-tools.ts';
import type { ToolParameters } from './arguments.ts';
import type { AiSdkLanguageModel } from './models/ai-sdk.ts';
import type { AuditEntry, Store } from './store-types.ts';

export type { Principal };
export type * from './store-types.ts';

export interface ToolCall {
  id: string;
  name: string;
  arguments: unknown;
}

/** Tokens a model turn used, as the model reported them (design §21). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** A transcript entry; an assistant entry keeps the `usage` its model turn reported. */
export type Message =
  | { role: 'user' | 'assistant'; content: string; toolCalls?: ToolCall[]; usage?: Usage }
  | {
      role: 'tool';
      toolCallId: string;
      content: string;
      /** Set when `content` is the JSON text of a tool's output that was not a string: an AI SDK model gets the value (`{ type: 'json' }`). */
      json?: true;
    };

/** JSON Schema of a tool's arguments. */
export type JsonSchema = Record<string, unknown>;

/** What a model is told of a tool: its arguments as JSON Schema. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** Generation settings (`createAgent({ settings })`), handed to every model kind; each maps them to its wire. */
export interface ModelSettings {
  temperature?: number;
  /** Most tokens the model may generate in one turn. */
  maxOutputTokens?: number;
  topP?: number;
  stopSequences?: string[];
  /** Extra HTTP headers of the model's requests. */
  headers?: Record<string, string>;
}

export interface ModelRequest {
  instructions: string;
  messages: Message[];
  tools: ToolSpec[];
  /** The agent's settings for this run (frozen; empty when none are set). */
  settings?: Readonly<ModelSettings>;
  signal?: AbortSignal;
}
/** One model turn; `usage`, when the model reports it, is kept on the turn's transcript entry. */
export interface ModelTurn {
  text?: string;
  toolCalls?: ToolCall[];
  usage?: Usage;
}
/** A streamed turn's parts, as they come; several `usage` deltas of one turn add up. */
export type ModelDelta =
  | { type: 'text'; text: string }
  | { type: 'tool-call'; call: ToolCall }
  | { type: 'usage'; usage: Usage };

/**
 * Anything that answers a conversation: plug a provider in by implementing this. A run
 * streamed to its caller (`onEvent`: the SSE and useChat routes) uses `stream` when there is
 * one; any other run uses `generate`.
 */
export interface Model {
  generate(request: ModelRequest): Promise<ModelTurn>;
  /** Streams one turn; a model without it is streamed as one text delta. */
  stream?(request: ModelRequest): AsyncIterable<ModelDelta>;
  /** The provider (`openai`, an AI SDK model's `openai.chat`…), for telemetry's `gen_ai.provider.name` (design §28). */
  readonly provider?: string;
  /** The model's name, for telemetry's `chat {model}` span and `gen_ai.request.model`. */
  readonly modelId?: string;
}

/** What a run knows: `metadata` is what the caller sent, `principal` what auth verified (frozen, possibly absent). */
export interface RunContext {
  readonly principal?: Principal;
  readonly sessionId: string;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** What a tool's `execute` receives besides its arguments: never the principal. */
export interface ToolContext {
  readonly sessionId: string;
  readonly signal?: AbortSignal;
}

// biome-ignore lint/suspicious/noExplicitAny: a tool of unknown arguments is assignable to a list of tools of any arguments.
export interface Tool<Args = any> {
  name: string;
  description: string;
  /**
   * The arguments: a JSON Schema object, or a Standard Schema with Standard JSON Schema (zod,
   * arktype, valibot with `toStandardJsonSchema`). The model's arguments are checked against it
   * before the approval policy and `execute`; invalid ones never run (the model is told what failed).
   */
  parameters: ToolParameters;
  execute(args: Args, context: ToolContext): unknown | Promise<unknown>;
  /** The approval policy: a boolean, or a function of the arguments (never of the principal). */
  needsApproval?: boolean | ((args: Args) => boolean | Promise<boolean>);
  /**
   * `true`: what `execute` (or the approval policy) throws is shown as is to the model, the
   * transcript and the caller, e.g. "city not found". Default: they see only
   * `tool "<name>" failed`, and the error goes to the server log.
   */
  exposeErrors?: boolean;
  /** The output's schema (JSON Schema, or a Standard Schema with Standard JSON Schema): listed as the tool's MCP `outputSchema` (design §36); not checked here. */
  outputSchema?: ToolParameters;
}

/** An agent tool as a caller may call it directly (MCP `mcp.tools`, design §36). */
export interface ToolListing {
  readonly name: string;
  readonly description: string;
  /** The arguments' JSON Schema, as the model is sent it. */
  readonly inputSchema: JsonSchema;
  /** The output's JSON Schema, where the tool has one. */
  readonly outputSchema?: JsonSchema;
  /** Whether a call may wait for an approval (the tool has an approval policy). */
  readonly mayAwaitApproval: boolean;
}

/** What a direct tool call answers: the tool's output (or why it failed, `isError`), or the approval it waits for. */
export type ToolCallResult =
  | {
      readonly status: 'completed';
      readonly sessionId?: string;
      /** The text the model would be told: the output (JSON unless a string), or the error. */
      readonly text: string;
      /** The output as a value (absent on an error). */
      readonly output?: unknown;
      readonly isError: boolean;
    }
  | { readonly status: 'awaiting-approval'; readonly sessionId: string; readonly approvalId: string };

/** Options of `agent.callTool()`. */
export interface CallToolOptions extends CallerOptions {
  signal?: AbortSignal;
  /** The tools a caller may call (`mcp.tools`): any other name is unknown. Default: all the agent's tools. */
  only?: readonly string[];
}

/** A record of tools (a `ToolSet`, as `@ai-sdk/mcp`'s `client.tools()` returns): AI SDK tools under their names, or this library's tools under their own. */
export type ToolRecord = Readonly<Record<string, AiSdkTool | Tool>>;

/**
 * An agent's tools (design §27): an array of this library's tools, a record of tools (a
 * `ToolSet`; its keys are the names), or an array of records, one per source (`[{ weather, deploy },
 * remoteTools(await crm.tools(), { prefix: 'crm' })]`), where one name in two of them is an error.
 */
export type AgentTools = readonly Tool[] | ToolRecord | readonly (Tool | ToolRecord)[];

/** A value (static agent) or a function of the run context, possibly async (dynamic agent). */
export type Dynamic<T> = T | ((context: RunContext) => T | Promise<T>);

export interface MemoryOptions {
  /**
   * Names the memory namespace of a run; key it on both `issuer` and `id`, since ids from
   * different issuers can collide (see examples/memory-scoping.ts).
   * @example
   * scope: ({ principal }) => (principal ? JSON.stringify([principal.issuer ?? principal.authenticator, principal.id]) : 'anonymous')
   */
  scope(input: { principal?: Principal }): string | Promise<string>;
}

export interface AgentOptions {
  name: string;
  /** This library's `Model`, or an AI SDK language model (`openai.chat('gpt-4o-mini')`, `anthropic('claude-…')`). */
  model: Dynamic<Model | AiSdkLanguageModel>;
  instructions?: Dynamic<string>;
  /**
   * This library's tools (an array), or AI SDK tools as a record (a `ToolSet`); a function of the run
   * context `{ principal, sessionId, metadata }` returning either makes them per run (design §27).
   */
  tools?: Dynamic<AgentTools>;
  /** Generation settings given to the model of every run (`ModelRequest.settings`). */
  settings?: Dynamic<ModelSettings>;
  memory?: MemoryOptions;
  store?: Store;
  /** Bound of the tool loop: model turns per run (default 10). */
  maxSteps?: number;
  /**
   * `'shared'` (default, the spec's rule): any caller who passes auth and knows a session id may
   * use it. `'owned'`: each session belongs to the principal that created it, and every other
   * principal gets exactly what an unknown id gets. The store must implement `listSessions` and
   * `deleteSession`.
   */
  sessions?: SessionMode;
  /**
   * Most approvals one principal may have pending at once, over all its sessions (default 100):
   * a run that would pause past it fails with `APPROVAL_LIMIT` (HTTP 429). Calls without a
   * principal are not counted. Needs a store with `countCheckpoints`.
   */
  maxPendingApprovals?: number;
  /** Bounds that keep one caller from hurting the others (design §19). */
  limits?: AgentLimits;
  /**
   * OpenTelemetry spans of each run (design §28): `invoke_agent`, `chat` per model turn,
   * `execute_tool` per tool call, through `tracer` (anything shaped like `@opentelemetry/api`'s
   * `Tracer`). Contents only with `recordContent: true`.
   */
  telemetry?: TelemetryOptions;
}

export interface AgentLimits {
  /**
   * Most bytes (UTF-8) of a session's serialized record, transcript and audit; default 4 MiB. A send
   * or decision that would take a session past it fails with `SESSION_FULL` (HTTP 409), and the
   * stored session stays as it was: refused before the model runs when the message alone would
   * pass it, and not stored when the turn's own output would.
   */
  sessionBytes?: number;
}

import type { TelemetryOptions } from './telemetry.ts';
export type { TelemetryOptions, TelemetrySpan, TelemetryTracer } from './telemetry.ts';

export type SessionMode = 'shared' | 'owned';

export interface PendingApproval {
  id: string;
  tool: string;
  arguments: unknown;
  toolCallId: string;
}

export interface RunResult {
  sessionId: string;
  status: 'completed' | 'awaiting-approval';
  text: string;
  messages: Message[];
  approvals: PendingApproval[];
  /** The tokens of the model turns this call ran, added up; absent when no turn reported any. */
  usage?: Usage;
}

/** Events of a run as it happens, for streaming routes. A run's last event is `finish`, or `error` when the run fails. */
export type RunEvent =
  | { type: 'start'; sessionId: string }
  | { type: 'step-start' }
  | { type: 'text-delta'; text: string }
  | { type: 'tool-call'; call: ToolCall }
  | { type: 'approval-request'; approval: PendingApproval }
  /** A pending approval decided (design §33): by whom (absent: trusted code) and when; `reason` `expired` past `approvals.ttlSec`. */
  | Omit<AuditEntry, 'at'>
  | { type: 'tool-result'; toolCallId: string; output: unknown }
  | { type: 'tool-error'; toolCallId: string; error: string }
  | { type: 'tool-denied'; toolCallId: string; reason?: string }
  | { type: 'step-finish' }
  /** `code`: the agent's error code, or `STORE_UNAVAILABLE` when the turn could not be stored. */
  | { type: 'error'; error: string; code?: string }
  | { type: 'finish'; result: RunResult };

export interface SendOptions {
  principal?: Principal;
  sessionId?: string;
  metadata?: Record<string, unknown>;
  signal?: AbortSignal;
  /** Called with each event of the run, in order (streaming routes use it); a model that can stream then streams. */
  onEvent?: (event: RunEvent) => void;
  /** Called with each model turn's usage once the store has saved the turn, before the run goes on or answers (awaited; see `UsageHook`). */
  onUsage?: UsageHook;
  /** Meters each model turn before it runs and once it has ended (see `TurnMeter`): the route handler's `limits.tokens`. */
  meter?: TurnMeter;
}

/**
 * Sees each model turn's reported usage at the moment the turn is stored: after the store's
 * `saveSession` of the transcript that holds it (inside `withSession`, for a store that has it),
 * before the run goes on or answers. Awaited; what it throws fails the run as a store failure
 * would (the turn stays stored). A turn that reported no usage, or one never stored (a failed
 * run), is not seen.
 */
export type UsageHook = (usage: Usage) => void | Promise<void>;

/**
 * Meters a run's model turns (the route handler's `limits.tokens`, design §25). Called before each
 * model turn with the estimate in tokens of the model's input (`estimateTokens` of the
 * instructions, messages and tool specs) and the turn's `settings.maxOutputTokens` (`undefined`
 * when unset); what it throws refuses the turn: the model is not called, and the run stops with
 * that error (the steps before it stay stored). It answers `settle`, which the run calls once
 * the turn has ended, however it ended (completed, failed, aborted, or refused afterwards), with
 * the tokens the turn spent: what the model reported (`inputTokens + outputTokens`), or where it
 * reported nothing, the input estimate plus the estimate of what it produced. Both are awaited;
 * what `settle` throws fails the run before the turn is stored (after a turn that failed, its own
 * error is the run's).
 */
export type TurnMeter = (
  input: number,
  maxOutputTokens: number | undefined,
) => Promise<(spent: number) => Promise<unknown>>;

export interface DecideOptions {
  approved: boolean;
  reason?: string;
  /** The decider: recorded in the transcript for audit only; the run keeps the principal it started with. */
  principal?: Principal;
  signal?: AbortSignal;
  onEvent?: (event: RunEvent) => void;
  onUsage?: UsageHook;
  meter?: TurnMeter;
}

/** The caller of a reading or deleting call: without `principal` the call is trusted server code and sees every session. */
export interface CallerOptions {
  principal?: Principal;
}

export interface ListSessionsOptions {
  /** Whose sessions: required (an anonymous principal owns none and is refused with `FORBIDDEN`). */
  principal: Principal;
  /** 1 to 100, default 20. */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

/** One of a principal's sessions as `listSessions` lists it. */
export interface SessionListing {
  sessionId: string;
  createdAt: string;
  updatedAt: string;
  /** The first user message, cut to 80 characters. */
  title: string;
  pendingApprovals: number;
}

export interface SessionPage {
  sessions: SessionListing[];
  nextCursor: string | null;
}

export interface AgentSession {
  readonly id: string;
  send(message: string, options?: Omit<SendOptions, 'sessionId'>): Promise<RunResult>;
}

export interface Agent {
  readonly name: string;
  /** Who may use a session: `'shared'` (anyone with its id) or `'owned'` (its creator only). */
  readonly sessions: SessionMode;
  /** Whether a run can wait for an approval: a tool has `needsApproval`, or the tools are chosen per run. Absent: assume it can. */
  readonly awaitsApprovals?: boolean;
  send(message: string, options?: SendOptions): Promise<RunResult>;
  session(id: string): AgentSession;
  /** Resumes the paused run waiting on `approvalId`; throws `AgentError` ('APPROVAL_NOT_FOUND') when unknown or already decided. */
  decide(approvalId: string, decision: DecideOptions): Promise<RunResult>;
  /** The transcript of a session; throws `AgentError` ('SESSION_NOT_FOUND') when unknown (or, under `'owned'`, not the caller's). */
  transcript(
    sessionId: string,
    options?: CallerOptions,
  ): Promise<{ sessionId: string; messages: Message[]; audit: AuditEntry[] }>;
  /** Approvals waiting in a session: empty for an unknown session under `'shared'`, `SESSION_NOT_FOUND` under `'owned'`. */
  pendingApprovals(sessionId: string, options?: CallerOptions): Promise<PendingApproval[]>;
  /** The principal's own sessions, most recently updated first (`'owned'` agents only). */
  listSessions(options: ListSessionsOptions): Promise<SessionPage>;
  /** Removes a session with its transcript, checkpoints and pending approvals; `SESSION_NOT_FOUND` as for `transcript`. */
  deleteSession(sessionId: string, options?: CallerOptions): Promise<void>;
  /** The names of the agent's tools when they are fixed (not a function of the run); `undefined` otherwise. */
  readonly toolNames?: readonly string[];
  /** The tools the principal may call directly (a `tools` function called with it), `only` those named when given. */
  listTools(options?: CallerOptions & { only?: readonly string[] }): Promise<ToolListing[]>;
  /**
   * Calls one tool directly, as a run would (design §36): the arguments checked, the approval
   * policy asked (a call that needs one waits in a session of its own, resumed by `decide`), the
   * tool run in that session. `TOOL_NOT_FOUND` for a tool the principal does not get.
   */
  callTool(name: string, args: unknown, options?: CallToolOptions): Promise<ToolCallResult>;
}
