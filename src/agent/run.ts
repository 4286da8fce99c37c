// One run of an agent (design §6): the model's turns and their tool calls answered in order, a
// pause at a call that needs approval (its checkpoint), each step stored before the run goes on,
// and the events the caller sees of it.
import { isoNow } from './clock.ts';
import { copyMessages, copyRecord } from './copy.ts';
import { AgentError } from './errors.ts';
import { randomId } from './ids.ts';
import { serializedBytes } from './json-size.ts';
import { addUsage, modelTurn } from './model-turn.ts';
import { approvalNeeded, denial, runTool, toolSpecs, type Answer } from './tools.ts';
import type { Checkpoint, Message, Model, ModelSettings, OwnerKey, PendingApproval, RunContext, RunEvent, RunResult, SessionRecord, Store, Tool, ToolCall, Usage, UsageHook } from './types.ts';

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
}

/** What a run resolved of the agent's parts (a dynamic agent's functions called with its context). */
export interface Setup { model: Model; instructions: string; tools: Map<string, Tool>; settings: Readonly<ModelSettings> }

export interface Run {
  context: RunContext;
  session: SessionRecord;
  messages: Message[];
  /** The calls of the open model turn not answered yet. */
  calls: ToolCall[];
  step: number;
  text: string;
  namespace: string | undefined;
  setup: Setup;
  signal: AbortSignal | undefined;
  emit: (event: RunEvent) => void;
  /** Whether the run is streamed to its caller (`onEvent`): a model that can stream then streams. */
  streaming: boolean;
  /** The store of this turn (a database store's locked connection). */
  store: Store;
  /** Whose pending approvals this run's checkpoint counts against. */
  owner: OwnerKey | undefined;
  /** The usage of this call's model turns, added up (`RunResult.usage`). */
  usage?: Usage;
  /** The usage of the model turns not stored yet, for `onUsage` once they are. */
  unstored: Usage[];
  onUsage: UsageHook | undefined;
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
 * stretch, ~70 ms during which nothing else is served (bench/session-bound.ts).
 */
const YIELD_BYTES = 256 * 1024;

/** The runs of one agent: `start` a new one, `resume` a paused one once its call is decided. */
export function runner({ maxSteps, maxPendingApprovals, sessionBytes, keepsPrincipal }: RunLimits) {
  /** Refuses a record past `limits.sessionBytes`: the stored session stays as it was. */
  function checkSize(bytes: number): void {
    if (bytes > sessionBytes) throw new AgentError('SESSION_FULL', `the session would pass its limit of ${sessionBytes} bytes (limits.sessionBytes); start a new session`);
  }

  async function commit(run: Run): Promise<void> {
    run.session.messages = run.messages;
    run.session.updatedAt = isoNow();
    const bytes = serializedBytes(run.session);
    checkSize(bytes);
    await run.store.saveSession(run.session);
    // The turns are stored: whoever counts usage (onUsage) sees each one now, before the run goes on or answers.
    for (const usage of run.unstored.splice(0)) await run.onUsage?.({ ...usage });
    // A large record took a store's whole write (and its parse before): let other requests run before the answer is written.
    if (bytes > YIELD_BYTES) await new Promise((resolve) => setTimeout(resolve, 0));
  }

  const result = (run: Run, status: RunResult['status'], approvals: PendingApproval[]): RunResult => {
    const answer: RunResult = { sessionId: run.context.sessionId, status, text: run.text, messages: copyMessages(run.messages), approvals };
    if (run.usage !== undefined) answer.usage = { ...run.usage };
    return answer;
  };

  function record(run: Run, answer: Answer): void {
    run.messages.push(answer.message);
    run.emit(answer.event);
  }

  const toolContext = ({ context: { sessionId }, signal }: Run) => Object.freeze(signal === undefined ? { sessionId } : { sessionId, signal });

  /** Answers the open calls in order; returns the first one that needs approval, if any. */
  async function answerCalls(run: Run): Promise<ToolCall | undefined> {
    while (run.calls.length > 0) {
      const call = run.calls[0] as ToolCall;
      const tool = run.setup.tools.get(call.name);
      const needed = tool === undefined ? false : await approvalNeeded(tool, call);
      if (needed === true) return call;
      run.calls.shift();
      record(run, needed === false ? await runTool(tool, call, toolContext(run)) : needed);
    }
    return undefined;
  }

  async function pause(run: Run, call: ToolCall): Promise<RunResult> {
    if (run.owner !== undefined && typeof run.store.countCheckpoints === 'function' && (await run.store.countCheckpoints(run.owner)) >= maxPendingApprovals) {
      throw new AgentError('APPROVAL_LIMIT', `this caller already has ${maxPendingApprovals} approvals pending; decide some before starting runs that need one`);
    }
    const approval: PendingApproval = { id: randomId(), tool: call.name, arguments: call.arguments, toolCallId: call.id };
    const { principal, sessionId, metadata } = run.context;
    const checkpoint: RunCheckpoint = {
      approvalId: approval.id,
      sessionId,
      metadata,
      messages: run.messages,
      pending: call,
      remaining: run.calls.slice(1),
      step: run.step,
      text: run.text,
      createdAt: isoNow(),
    };
    if (keepsPrincipal && principal !== undefined) checkpoint.principal = principal;
    if (run.owner !== undefined) checkpoint.owner = run.owner;
    if (run.namespace !== undefined) checkpoint.namespace = run.namespace;
    // Sized before the checkpoint is written: a turn refused for its size leaves nothing behind.
    checkSize(serializedBytes({ ...run.session, messages: run.messages }));
    // The checkpoint first: a session whose call is unanswered always has one.
    await run.store.saveCheckpoint(checkpoint);
    await commit(run);
    run.emit({ type: 'approval-request', approval });
    run.emit({ type: 'step-finish' });
    return result(run, 'awaiting-approval', [copyRecord(approval)]);
  }

  /** The tool loop: answer the open turn's calls, then ask the model again, up to `maxSteps` turns. */
  async function loop(run: Run, turnOpen: boolean): Promise<RunResult> {
    for (;;) {
      if (turnOpen) {
        const waiting = await answerCalls(run);
        if (waiting !== undefined) return pause(run, waiting);
        run.emit({ type: 'step-finish' });
        await commit(run);
      }
      if (run.step >= maxSteps) return result(run, 'completed', []);
      run.signal?.throwIfAborted();
      run.step++;
      run.emit({ type: 'step-start' });
      const { setup, signal } = run;
      const request = { instructions: setup.instructions, messages: copyMessages(run.messages), tools: toolSpecs(setup.tools), settings: setup.settings };
      const turn = await modelTurn(setup.model, signal === undefined ? request : { ...request, signal }, run.emit, run.streaming);
      run.text = turn.text;
      const answer: Message & { role: 'assistant' } = { role: 'assistant', content: turn.text };
      if (turn.toolCalls.length > 0) answer.toolCalls = turn.toolCalls;
      if (turn.usage !== undefined) {
        answer.usage = turn.usage;
        run.usage = addUsage(run.usage, turn.usage);
        run.unstored.push(turn.usage);
      }
      run.messages.push(answer);
      if (turn.toolCalls.length === 0) {
        run.emit({ type: 'step-finish' });
        await commit(run);
        return result(run, 'completed', []);
      }
      run.calls = [...turn.toolCalls];
      turnOpen = true;
    }
  }

  return {
    checkSize,
    /** Runs a new run (its user message last in `messages`) until it completes or pauses. */
    start: (run: Run) => loop(run, false),
    /** Answers a paused run's `pending` call as decided (run, or denied with `reason`), then goes on. */
    async resume(run: Run, pending: ToolCall, approved: boolean, reason: string | undefined): Promise<RunResult> {
      run.emit({ type: 'step-start' });
      record(run, approved ? await runTool(run.setup.tools.get(pending.name), pending, toolContext(run)) : denial(pending, reason));
      return loop(run, true);
    },
  };
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
    observe(sessionId: string, body: (emit: (event: RunEvent) => void) => Promise<RunResult>): Promise<RunResult> {
      started = true;
      emit({ type: 'start', sessionId });
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
  if ((error as { code?: unknown } | null)?.code === 'STORE_UNAVAILABLE') return { type: 'error', error: 'the store is unavailable: nothing of this turn was stored', code: 'STORE_UNAVAILABLE' };
  return { type: 'error', error: signal?.aborted ? 'the run was aborted' : 'the run failed' };
}
