// One run of an agent (design §6): the model's turns and their tool calls answered in order, a
// pause at a call that needs approval (its checkpoint), each step stored before the run goes on,
// and the events the caller sees of it.
import { isoNow } from './clock.ts';
import { copyMessages, copyRecord } from './copy.ts';
import { AgentError } from './errors.ts';
import { randomId } from './ids.ts';
import { serializedBytes } from './json-size.ts';
import { addUsage, modelTurn, toolSpecsEstimate, turnEstimate, turnSpent, type TurnTally } from './model-turn.ts';
import { approvalNeeded, denial, runTool, toolSpecs, unavailable, type Answer } from './tools.ts';
import type { RunTrace } from './telemetry.ts';
import type { AgentAuditEvent, AuditSink } from './resources.ts';
import { personOf } from './context.ts';
import type {
  DecidedBy,
  Checkpoint,
  Message,
  Model,
  ModelSettings,
  OwnerKey,
  PendingApproval,
  RunContext,
  RunEvent,
  RunResult,
  SessionRecord,
  Store,
  Tool,
  ToolCall,
  TurnMeter,
  Usage,
  UsageHook,
} from './types.ts';

/** What a paused run keeps, besides the `Checkpoint` fields: all of it JSON. */
export interface RunCheckpoint extends Checkpoint {
  messages: Message[];
  /** The call waiting for the decision. */
  pending: ToolCall;
  /** The calls of the same model turn after it, answered once it is decided. */
  remaining: ToolCall[];
  step: number;
  text: string;
  namespace?: string;
  createdAt: string;
  /** A direct tool call (MCP `tools/call` of an agent tool): once its calls are answered the run ends, no model turn follows. */
  direct?: true;
}

/** What a run resolved of the agent's parts (a dynamic agent's functions called with its context). */
export interface Setup {
  model: Model;
  instructions: string;
  tools: Map<string, Tool>;
  settings: Readonly<ModelSettings>;
}

/** Where a run starts: a new run's session and messages, or a paused run's state from its checkpoint. */
export interface RunStart {
  context: RunContext;
  session: SessionRecord;
  messages: Message[];
  /** The calls of the open model turn not answered yet. */
  calls: ToolCall[];
  step: number;
  text: string;
  namespace?: string | undefined;
  setup: Setup;
  signal: AbortSignal | undefined;
  emit: (event: RunEvent) => void;
  /** Whether the run is streamed to its caller (`onEvent`): a model that can stream then streams. */
  streaming: boolean;
  /** The store of this turn (a database store's locked connection). */
  store: Store;
  /** Whose pending approvals this run's checkpoint counts against. */
  owner?: OwnerKey | undefined;
  onUsage: UsageHook | undefined;
  meter: TurnMeter | undefined;
  /** The run's spans (design §28), with `telemetry` only. */
  trace?: RunTrace | undefined;
  /** A direct tool call: `calls` are answered, then the run ends without asking the model (design §36). */
  direct?: true | undefined;
  /** The handler's audit log (design §34): each tool call and approval request is written before it happens. */
  auditEvents?: AuditSink | undefined;
}

/** A paused run's call and what was decided on it. */
export interface Decision {
  pending: ToolCall;
  approved: boolean;
  reason: string | undefined;
  /** Who decided, for the `execute_tool` span (design §33). */
  decidedBy?: DecidedBy | undefined;
}

/** What an agent fixes for all its runs. */
export interface RunLimits {
  maxSteps: number;
  maxPendingApprovals: number;
  sessionBytes: number;
  /**
   * Whether a checkpoint keeps the run's principal: only a dynamic agent calls a function with
   * the run context, so nothing of a static agent can use it, and its paused runs resume without one.
   */
  keepsPrincipal: boolean;
}

/**
 * Past this many bytes a turn gives the event loop a turn after storing its record: a store that
 * resolves at once (memoryStore) would otherwise parse, write and answer a 4 MiB record in one
 * stretch, during which nothing else is served (docs/design.md §30, "Speed tricks and what they bought").
 */
const YIELD_BYTES = 256 * 1024;

/** The pending approval `id` of `call`, as the agent lists it. */
export const pendingApproval = (id: string, call: ToolCall): PendingApproval => ({
  id,
  tool: call.name,
  arguments: call.arguments,
  toolCallId: call.id,
});

/** Refuses a record past `limits.sessionBytes`: the stored session stays as it was. */
export function checkSize(bytes: number, sessionBytes: number): void {
  if (bytes > sessionBytes)
    throw new AgentError(
      'SESSION_FULL',
      `the session would pass its limit of ${sessionBytes} bytes (limits.sessionBytes); start a new session`,
    );
}

/**
 * Runs the tool loop from `start` until the run completes or pauses: a new run asks the model
 * first; a paused one (`decided`) first answers its pending call as decided (run, or denied
 * with the reason), then its turn's remaining calls.
 */
export async function runLoop(limits: RunLimits, start: RunStart, decided?: Decision): Promise<RunResult> {
  const { maxSteps, maxPendingApprovals, sessionBytes, keepsPrincipal } = limits;
  const {
    context,
    session,
    messages,
    namespace,
    setup,
    signal,
    emit,
    streaming,
    store,
    owner,
    onUsage,
    meter,
    trace,
    direct,
    auditEvents,
  } = start;
  /** Runs a tool call, written to the audit log first (a required log that fails stops the run: the tool does not run). */
  const runLogged = async (tool: Tool, call: ToolCall): Promise<Answer> => {
    await auditEvents?.({ type: 'tool-call', tool: call.name, arguments: call.arguments });
    return runTool(tool, call, toolContext, messages);
  };
  let { calls, step, text } = start;
  /** The usage of this call's model turns, added up (`RunResult.usage`). */
  let usage: Usage | undefined;
  /** The usage of the model turns not stored yet, for `onUsage` once they are. */
  const unstored: Usage[] = [];
  const toolContext = Object.freeze(
    signal === undefined ? { sessionId: context.sessionId } : { sessionId: context.sessionId, signal },
  );

  async function commit(): Promise<void> {
    session.messages = messages;
    session.updatedAt = isoNow();
    const bytes = serializedBytes(session);
    checkSize(bytes, sessionBytes);
    await store.saveSession(session);
    // The turns are stored: whoever counts usage (onUsage) sees each one now, before the run goes on or answers.
    for (const turnUsage of unstored.splice(0)) await onUsage?.({ ...turnUsage });
    // A large record took a store's whole write (and its parse before): let other requests run before the answer is written.
    if (bytes > YIELD_BYTES) await new Promise((resolve) => setTimeout(resolve, 0));
  }

  const result = (status: RunResult['status'], approvals: PendingApproval[]): RunResult => {
    const answer: RunResult = {
      sessionId: context.sessionId,
      status,
      text,
      messages: copyMessages(messages),
      approvals,
    };
    if (usage !== undefined) answer.usage = { ...usage };
    return answer;
  };

  function record(answer: Answer): void {
    messages.push(answer.message);
    emit(answer.event);
  }

  /** Answers the open calls in order; returns the first one that needs approval, if any. */
  async function answerCalls(): Promise<ToolCall | undefined> {
    while (calls.length > 0) {
      const call = calls[0] as ToolCall;
      const tool = setup.tools.get(call.name);
      const needed = tool === undefined ? false : await approvalNeeded(tool, call, messages);
      if (needed === true) return call;
      calls.shift();
      if (needed !== false) record(needed);
      else if (tool === undefined) record(await runTool(tool, call, toolContext, messages));
      else if (trace === undefined) record(await runLogged(tool, call));
      else record(await trace.tool(call, undefined, () => runLogged(tool, call), tool.description));
    }
    return undefined;
  }

  async function pause(call: ToolCall): Promise<RunResult> {
    if (
      owner !== undefined &&
      typeof store.countCheckpoints === 'function' &&
      (await store.countCheckpoints(owner)) >= maxPendingApprovals
    ) {
      throw new AgentError(
        'APPROVAL_LIMIT',
        `this caller already has ${maxPendingApprovals} approvals pending; decide some before starting runs that need one`,
      );
    }
    const approval = pendingApproval(randomId(), call);
    const { principal, sessionId, metadata } = context;
    const checkpoint: RunCheckpoint = {
      approvalId: approval.id,
      sessionId,
      metadata,
      messages,
      pending: call,
      remaining: calls.slice(1),
      step,
      text,
      createdAt: isoNow(),
    };
    if (keepsPrincipal && principal !== undefined) checkpoint.principal = principal;
    if (owner !== undefined) checkpoint.owner = owner;
    if (namespace !== undefined) checkpoint.namespace = namespace;
    if (direct) checkpoint.direct = true;
    // Sized before the checkpoint is written: a turn refused for its size leaves nothing behind.
    checkSize(serializedBytes({ ...session, messages }), sessionBytes);
    // The checkpoint first: a session whose call is unanswered always has one.
    await store.saveCheckpoint(checkpoint);
    await commit();
    emit({ type: 'approval-request', approval });
    if (auditEvents !== undefined) {
      const requested: AgentAuditEvent = { type: 'approval-requested', approvalId: approval.id, tool: call.name };
      await auditEvents(principal === undefined ? requested : { ...requested, requester: personOf(principal) });
    }
    emit({ type: 'step-finish' });
    return result('awaiting-approval', [copyRecord(approval)]);
  }

  let turnOpen = decided !== undefined || direct === true;
  if (decided !== undefined) {
    const { pending, approved, reason } = decided;
    emit({ type: 'step-start' });
    const tool = setup.tools.get(pending.name);
    // Re-checked at resume (design §33): a tool the run's tools no longer offer does not run.
    const answerDecided = async () =>
      !approved ? denial(pending, reason) : tool === undefined ? unavailable(pending) : runLogged(tool, pending);
    if (trace === undefined) record(await answerDecided());
    else
      record(
        await trace.tool(
          pending,
          approved ? 'approved' : 'denied',
          answerDecided,
          tool?.description,
          decided.decidedBy,
        ),
      );
  }
  // The tool specs' token estimate, made once: the run's tools are the same every turn.
  let toolsTokens: number | undefined;
  // The tool loop: answer the open turn's calls, then ask the model again, up to `maxSteps` turns.
  for (;;) {
    if (turnOpen) {
      const waiting = await answerCalls();
      if (waiting !== undefined) return pause(waiting);
      emit({ type: 'step-finish' });
      if (direct) {
        // The tool's answer is the run's text: what decide's caller reads of a direct call.
        text = (messages.at(-1) as Message).content;
        await commit();
        return result('completed', []);
      }
      await commit();
    }
    if (step >= maxSteps) return result('completed', []);
    signal?.throwIfAborted();
    const request = {
      instructions: setup.instructions,
      messages: copyMessages(messages),
      tools: toolSpecs(setup.tools),
      settings: setup.settings,
    };
    // The meter reserves the turn's estimate before anything of the turn is seen: refused, the model is not called.
    const estimate = meter === undefined ? 0 : turnEstimate(request, (toolsTokens ??= toolSpecsEstimate(request)));
    const settle = await meter?.(estimate, setup.settings?.maxOutputTokens);
    step++;
    emit({ type: 'step-start' });
    const tally: TurnTally = { produced: 0 };
    let turn: Awaited<ReturnType<typeof modelTurn>>;
    try {
      const asked = signal === undefined ? request : { ...request, signal };
      turn = await (trace === undefined
        ? modelTurn(setup.model, asked, emit, streaming, tally)
        : trace.chat(setup.model, asked, () => modelTurn(setup.model, asked, emit, streaming, tally)));
    } catch (error) {
      trace?.chatEnded(undefined, error);
      // A turn that failed or was aborted spent what it spent; its own error stays the run's.
      await settle?.(turnSpent(tally, estimate)).catch(() => undefined);
      throw error;
    }
    // Settled before the turn is stored: a turn refused afterwards (session full, too many approvals) has counted.
    trace?.chatEnded(turn);
    await settle?.(turnSpent(tally, estimate));
    text = turn.text;
    const answer: Message & { role: 'assistant' } = { role: 'assistant', content: text };
    if (turn.toolCalls.length > 0) answer.toolCalls = turn.toolCalls;
    if (turn.usage !== undefined) {
      answer.usage = turn.usage;
      usage = addUsage(usage, turn.usage);
      unstored.push(turn.usage);
    }
    messages.push(answer);
    if (turn.toolCalls.length === 0) {
      emit({ type: 'step-finish' });
      await commit();
      return result('completed', []);
    }
    calls = [...turn.toolCalls];
    turnOpen = true;
  }
}

/**
 * The events of one run: `start` once the caller may see the session (`observe`), then the
 * run's own, and last `finish` once the whole turn is stored (`settle`: a database store
 * commits when its turn returns), or `error` when anything failed, the commit included.
 */
export function runEvents({ onEvent, signal }: { onEvent?: (event: RunEvent) => void; signal?: AbortSignal }) {
  let started = false;
  const emit = (event: RunEvent) => {
    if (onEvent === undefined) return;
    try {
      onEvent(copyRecord(event));
    } catch {
      // A listener that throws (a closed stream) must not leave the run half done.
    }
  };
  return {
    /** `start` the first time (a send that resumed an expired approval's run first observes twice). */
    observe<T>(sessionId: string, body: (emit: (event: RunEvent) => void) => Promise<T>): Promise<T> {
      if (!started) emit({ type: 'start', sessionId });
      started = true;
      return body(emit);
    },
    async settle(turnDone: Promise<RunResult>): Promise<RunResult> {
      try {
        const result = await turnDone;
        if (started) emit({ type: 'finish', result });
        return result;
      } catch (error) {
        if (started) emit(errorEvent(error, signal));
        throw error;
      }
    },
  };
}

/**
 * The `error` event of a failed run. Only the agent's own messages go out (what a dynamic
 * function or the store throws may hold internals), with the code of an agent or store error,
 * so a stream's client can tell `STORE_UNAVAILABLE` (nothing was stored) from a failed run.
 */
function errorEvent(error: unknown, signal: AbortSignal | undefined): RunEvent {
  if (error instanceof AgentError) return { type: 'error', error: error.message, code: error.code };
  if ((error as { code?: unknown } | null)?.code === 'STORE_UNAVAILABLE')
    return {
      type: 'error',
      error: 'the store is unavailable: nothing of this turn was stored',
      code: 'STORE_UNAVAILABLE',
    };
  return { type: 'error', error: signal?.aborted ? 'the run was aborted' : 'the run failed' };
}
