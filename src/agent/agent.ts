import { checkMetadata, checkPrincipal, checkSessionId, runContext } from './context.ts';
import { keyedQueue } from './key-queue.ts';
import { AgentError } from './errors.ts';
import { randomId } from './ids.ts';
import { memoryNamespace, REMEMBER, rememberTool, withNotes } from './memory.ts';
import { modelTurn } from './model-turn.ts';
import { memoryStore } from './store.ts';
import { approvalNeeded, denial, indexTools, runTool, toolSpecs, type Answer } from './tools.ts';
import type {
  Agent,
  AgentOptions,
  AuditEntry,
  Checkpoint,
  DecideOptions,
  Message,
  Model,
  PendingApproval,
  RunContext,
  RunEvent,
  RunResult,
  SendOptions,
  SessionRecord,
  Tool,
  ToolCall,
} from './types.ts';

const DEFAULT_MAX_STEPS = 10;

/** What a paused run keeps, besides the `Checkpoint` fields: all of it JSON. */
interface RunCheckpoint extends Checkpoint {
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

interface Setup { model: Model; instructions: string; tools: Map<string, Tool> }

interface Run {
  context: RunContext;
  session: SessionRecord;
  messages: Message[];
  calls: ToolCall[];
  step: number;
  text: string;
  namespace: string | undefined;
  setup: Setup;
  signal: AbortSignal | undefined;
  emit: (event: RunEvent) => void;
}

/**
 * Creates an agent. `model`, `instructions` and `tools` are values (a static agent) or
 * functions, possibly async, of the run context `{ principal?, sessionId, metadata }` (a
 * dynamic agent). `principal` is only ever the verified principal passed to `send`; tools
 * and approval policies never receive it.
 *
 * Sessions: `send` without `sessionId` starts a session with a random 128-bit id; a
 * caller-chosen id that does not exist yet is created by its first send. The stored
 * transcript only ever moves between consistent states (a user message with the model's
 * answer, every tool call answered or waiting in a checkpoint): a run that fails leaves it at
 * the last one. Runs of one session on one agent take turns.
 * @example
 * const agent = createAgent({
 *   name: 'support',
 *   model: echoModel(),
 *   instructions: ({ principal }) => `You help ${principal?.id ?? 'a guest'}.`,
 * });
 * const result = await agent.send('hello', { principal });
 */
export function createAgent(options: AgentOptions): Agent {
  if (typeof options !== 'object' || options === null) throw new AgentError('INVALID_AGENT', 'createAgent(): options must be an object');
  const { name, model, instructions = '', tools = [], memory, store = memoryStore(), maxSteps = DEFAULT_MAX_STEPS } = options;
  if (typeof name !== 'string' || name === '') throw new AgentError('INVALID_AGENT', 'createAgent(): name must be a non-empty string');
  if (typeof model !== 'function' && typeof model?.generate !== 'function') {
    throw new AgentError('INVALID_AGENT', 'createAgent(): model must be a Model or a function returning one');
  }
  if (typeof instructions !== 'string' && typeof instructions !== 'function') {
    throw new AgentError('INVALID_AGENT', 'createAgent(): instructions must be a string or a function returning one');
  }
  if (memory !== undefined && typeof memory?.scope !== 'function') throw new AgentError('INVALID_AGENT', 'createAgent(): memory.scope must be a function');
  if (!Number.isInteger(maxSteps) || maxSteps < 1) throw new AgentError('INVALID_AGENT', 'createAgent(): maxSteps must be a positive integer');
  const reserved = memory === undefined ? [] : [REMEMBER];
  if (typeof tools !== 'function') indexTools(tools, reserved, 'createAgent(): tools');
  // A static agent never calls a function with a run context, so nothing of it can use the
  // principal: its checkpoints keep none, and a paused static run resumes without one.
  const dynamic = typeof model === 'function' || typeof instructions === 'function' || typeof tools === 'function';

  async function prepare(context: RunContext, namespace: string | undefined): Promise<Setup> {
    const runModel = typeof model === 'function' ? await model(context) : model;
    if (typeof runModel?.generate !== 'function') throw new AgentError('INVALID_AGENT', 'the model function must return a Model');
    const text = typeof instructions === 'function' ? await instructions(context) : instructions;
    if (typeof text !== 'string') throw new AgentError('INVALID_AGENT', 'the instructions function must return a string');
    const byName = typeof tools === 'function' ? indexTools(await tools(context), reserved, 'the tools function result') : indexTools(tools, reserved, 'tools');
    if (namespace === undefined) return { model: runModel, instructions: text, tools: byName };
    byName.set(REMEMBER, rememberTool(store, namespace));
    return { model: runModel, instructions: withNotes(text, await store.loadMemory(namespace)), tools: byName };
  }

  const exclusive = keyedQueue();

  /** Runs `body` as one observed run: `start` first, then its events, then `finish`, or `error` when it fails. */
  async function observe(
    { onEvent, signal }: { onEvent?: (event: RunEvent) => void; signal?: AbortSignal },
    sessionId: string,
    body: (emit: (event: RunEvent) => void) => Promise<RunResult>,
  ): Promise<RunResult> {
    const emit = (event: RunEvent) => {
      if (onEvent === undefined) return;
      try {
        onEvent(structuredClone(event));
      } catch {
        // A listener that throws (a closed stream) must not leave the run half done.
      }
    };
    emit({ type: 'start', sessionId });
    try {
      const result = await body(emit);
      emit({ type: 'finish', result });
      return result;
    } catch (error) {
      // Only the agent's own messages go out: what a dynamic function or the store throws may hold internals.
      emit({ type: 'error', error: error instanceof AgentError ? error.message : signal?.aborted ? 'the run was aborted' : 'the run failed' });
      throw error;
    }
  }

  async function commit(run: Run): Promise<void> {
    run.session.messages = run.messages;
    run.session.updatedAt = new Date().toISOString();
    await store.saveSession(run.session);
  }

  const result = (run: Run, status: RunResult['status'], approvals: PendingApproval[]): RunResult => ({
    sessionId: run.context.sessionId,
    status,
    text: run.text,
    messages: structuredClone(run.messages),
    approvals,
  });

  function record(run: Run, answer: Answer): void {
    run.messages.push(answer.message);
    run.emit(answer.event);
  }

  const toolContext = (run: Run) =>
    Object.freeze(run.signal === undefined ? { sessionId: run.context.sessionId } : { sessionId: run.context.sessionId, signal: run.signal });

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
      createdAt: new Date().toISOString(),
    };
    if (dynamic && principal !== undefined) checkpoint.principal = principal;
    if (run.namespace !== undefined) checkpoint.namespace = run.namespace;
    // The checkpoint first: a session whose call is unanswered always has one.
    await store.saveCheckpoint(checkpoint);
    await commit(run);
    run.emit({ type: 'approval-request', approval });
    run.emit({ type: 'step-finish' });
    return result(run, 'awaiting-approval', [structuredClone(approval)]);
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
      const { setup } = run;
      const request = { instructions: setup.instructions, messages: structuredClone(run.messages), tools: toolSpecs(setup.tools) };
      const turn = await modelTurn(setup.model, run.signal === undefined ? request : { ...request, signal: run.signal }, run.emit);
      run.text = turn.text;
      if (turn.toolCalls.length === 0) {
        run.messages.push({ role: 'assistant', content: turn.text });
        run.emit({ type: 'step-finish' });
        await commit(run);
        return result(run, 'completed', []);
      }
      run.messages.push({ role: 'assistant', content: turn.text, toolCalls: turn.toolCalls });
      run.calls = [...turn.toolCalls];
      turnOpen = true;
    }
  }

  const newSession = (id: string): SessionRecord => {
    const now = new Date().toISOString();
    return { id, messages: [], audit: [], createdAt: now, updatedAt: now };
  };

  async function send(message: string, sendOptions: SendOptions = {}): Promise<RunResult> {
    if (typeof message !== 'string' || message === '') throw new AgentError('INVALID_INPUT', 'message must be a non-empty string');
    const { signal } = sendOptions;
    const sessionId = sendOptions.sessionId === undefined ? randomId() : checkSessionId(sendOptions.sessionId);
    const principal = checkPrincipal(sendOptions.principal);
    const context = runContext(principal, sessionId, checkMetadata(sendOptions.metadata));
    return exclusive(sessionId, () =>
      observe(sendOptions, sessionId, async (emit) => {
        if ((await store.listCheckpoints(sessionId)).length > 0) {
          throw new AgentError('APPROVAL_PENDING', 'the session waits for an approval decision; decide it before sending a new message');
        }
        const session = (await store.loadSession(sessionId)) ?? newSession(sessionId);
        const namespace = memory === undefined ? undefined : await memoryNamespace(memory, principal);
        const setup = await prepare(context, namespace);
        const messages: Message[] = [...session.messages, { role: 'user', content: message }];
        return loop({ context, session, messages, calls: [], step: 0, text: '', namespace, setup, signal, emit }, false);
      }),
    );
  }

  async function decide(approvalId: string, decision: DecideOptions): Promise<RunResult> {
    if (typeof approvalId !== 'string' || approvalId === '') throw new AgentError('INVALID_INPUT', 'approvalId must be a non-empty string');
    if (typeof decision !== 'object' || decision === null || typeof decision.approved !== 'boolean') {
      throw new AgentError('INVALID_INPUT', 'the decision needs approved: true or false');
    }
    const { approved, reason, signal } = decision;
    if (reason !== undefined && typeof reason !== 'string') throw new AgentError('INVALID_INPUT', 'the reason of a decision must be a string');
    const decidedBy = checkPrincipal(decision.principal, 'the decider');
    const notFound = () => new AgentError('APPROVAL_NOT_FOUND', 'no pending approval has this id (unknown or already decided)');
    const found = (await store.loadCheckpoint(approvalId)) as RunCheckpoint | undefined;
    if (found === undefined) throw notFound();
    const { sessionId } = found;
    return exclusive(sessionId, () =>
      observe(decision, sessionId, async (emit) => {
        const checkpoint = (await store.loadCheckpoint(approvalId)) as RunCheckpoint | undefined;
        if (checkpoint === undefined) throw notFound();
        // The run resumes as the principal it started with; the decider is only recorded.
        const context = runContext(checkPrincipal(checkpoint.principal, 'the checkpoint principal'), sessionId, checkMetadata(checkpoint.metadata));
        const setup = await prepare(context, checkpoint.namespace);
        const session = (await store.loadSession(sessionId)) ?? newSession(sessionId);
        // Claimed only now, so a failure above leaves the approval pending; only one decider wins the claim.
        if (!(await store.deleteCheckpoint(approvalId))) throw notFound();
        const { pending } = checkpoint;
        const entry: AuditEntry = { type: 'approval-decided', approvalId, tool: pending.name, approved, at: new Date().toISOString() };
        if (reason !== undefined) entry.reason = reason;
        if (decidedBy !== undefined) entry.decidedBy = decidedBy;
        session.audit.push(entry);
        const run: Run = {
          context,
          session,
          messages: checkpoint.messages,
          calls: checkpoint.remaining,
          step: checkpoint.step,
          text: checkpoint.text,
          namespace: checkpoint.namespace,
          setup,
          signal,
          emit,
        };
        emit({ type: 'step-start' });
        record(run, approved ? await runTool(setup.tools.get(pending.name), pending, toolContext(run)) : denial(pending, reason));
        return loop(run, true);
      }),
    );
  }

  return Object.freeze({
    name,
    send,
    session(id: string) {
      return Object.freeze({ id, send: (message: string, sessionOptions: Omit<SendOptions, 'sessionId'> = {}) => send(message, { ...sessionOptions, sessionId: id }) });
    },
    decide,
    async transcript(sessionId: string) {
      const session = await store.loadSession(checkSessionId(sessionId));
      if (session === undefined) throw new AgentError('SESSION_NOT_FOUND', 'no session has this id');
      return { sessionId, messages: session.messages, audit: session.audit };
    },
    async pendingApprovals(sessionId: string) {
      const checkpoints = (await store.listCheckpoints(checkSessionId(sessionId))) as RunCheckpoint[];
      return checkpoints.map(({ approvalId, pending }) => ({ id: approvalId, tool: pending.name, arguments: pending.arguments, toolCallId: pending.id }));
    },
  });
}
