import { checkMetadata, checkPrincipal, checkSessionId, runContext } from './context.ts';
import { copyMessages, copyRecord } from './copy.ts';
import { keyedQueue } from './key-queue.ts';
import { isoNow } from './clock.ts';
import { checkOptionNames } from '../auth/options.ts';
import { AgentError, invalidAgent, invalidInput } from './errors.ts';
import { randomId } from './ids.ts';
import { memoryNamespace, REMEMBER, rememberTool, withNotes } from './memory.ts';
import { addUsage, modelTurn } from './model-turn.ts';
import { aiSdkModel, isAiSdkModel } from './models/ai-sdk.ts';
import { checkSettings } from './settings.ts';
import { checkLimit, decodeCursor, encodeCursor, isAnonymous, mayUse, mayUseOwner, ownerKey, titleOf } from './sessions.ts';
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
  ModelSettings,
  PendingApproval,
  Principal,
  RunContext,
  RunEvent,
  RunResult,
  SendOptions,
  OwnerKey,
  SessionMode,
  SessionRecord,
  Store,
  Tool,
  ToolCall,
  Usage,
  UsageHook,
} from './types.ts';

const DEFAULT_MAX_STEPS = 10;
/** Default of `maxPendingApprovals`: approvals one principal may have pending at once. */
export const DEFAULT_MAX_PENDING_APPROVALS = 100;

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

interface Setup { model: Model; instructions: string; tools: Map<string, Tool>; settings: Readonly<ModelSettings> }

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
  /** Whether the run is streamed to its caller (`onEvent`): a model that can stream then streams. */
  streaming: boolean;
  /** The store of this turn (a database store's locked connection). */
  store: Store;
  /** Whose pending approvals this run's checkpoint counts against. */
  owner: OwnerKey | undefined;
  /** The usage of this call's model turns, added up (`RunResult.usage`). */
  usage: Usage | undefined;
  /** The usage of the model turns not stored yet, for `onUsage` once they are. */
  unstored: Usage[];
  onUsage: UsageHook | undefined;
}

/** The model of a run: this library's `Model`, or an AI SDK language model adapted to one. */
const runModel = (model: unknown): Model | undefined =>
  typeof (model as Model | null)?.generate === 'function' ? (model as Model) : isAiSdkModel(model) ? aiSdkModel(model) : undefined;

const notAModel = (what: string) => invalidAgent(`${what} must be a Model or an AI SDK language model (specificationVersion 'v3' or 'v4')`);

/**
 * Creates an agent. `model`, `instructions`, `tools` and `settings` are values (a static agent)
 * or functions, possibly async, of the run context `{ principal?, sessionId, metadata }` (a
 * dynamic agent). `model` is a `Model` or an AI SDK language model (design §21). `principal`
 * is only ever the verified principal passed to `send`; tools and approval policies never
 * receive it.
 *
 * Sessions: `send` without `sessionId` starts a session with a random 128-bit id; a
 * caller-chosen id that does not exist yet is created by its first send. The stored
 * transcript only ever moves between consistent states (a user message with the model's
 * answer, every tool call answered or waiting in a checkpoint): a run that fails leaves it at
 * the last one. Runs of one session take turns (under the store's `withSession` lock when it
 * has one, else within this agent).
 *
 * `sessions: 'owned'` binds each session to the principal that created it (design §9): for any
 * other principal every call answers exactly as for an unknown id; a call without a principal
 * is trusted server code and reaches every session.
 * @example
 * const agent = createAgent({
 *   name: 'support',
 *   model: echoModel(),
 *   instructions: ({ principal }) => `You help ${principal?.id ?? 'a guest'}.`,
 * });
 * const result = await agent.send('hello', { principal });
 */
export function createAgent(options: AgentOptions): Agent {
  if (typeof options !== 'object' || options === null) throw invalidAgent('createAgent(): options must be an object');
  checkOptionNames('createAgent()', options, AGENT_OPTION_NAMES, invalidAgent);
  if (typeof options.memory === 'object' && options.memory !== null) checkOptionNames('createAgent(): memory', options.memory, ['scope'], invalidAgent);
  const { name, model, instructions = '', tools = [], memory, store = memoryStore(), maxSteps = DEFAULT_MAX_STEPS, sessions = 'shared', settings } = options;
  const { maxPendingApprovals = DEFAULT_MAX_PENDING_APPROVALS } = options;
  const sessionBytes = readLimits(options.limits).sessionBytes;
  if (typeof name !== 'string' || name === '') throw invalidAgent('createAgent(): name must be a non-empty string');
  const staticModel = typeof model === 'function' ? undefined : runModel(model);
  if (typeof model !== 'function' && staticModel === undefined) throw notAModel('createAgent(): model (or what a function returns)');
  const staticSettings = typeof settings === 'function' ? undefined : checkSettings(settings, 'createAgent(): settings');
  if (typeof instructions !== 'string' && typeof instructions !== 'function') {
    throw invalidAgent('createAgent(): instructions must be a string or a function returning one');
  }
  if (memory !== undefined && typeof memory?.scope !== 'function') throw invalidAgent('createAgent(): memory.scope must be a function');
  if (!Number.isInteger(maxSteps) || maxSteps < 1) throw invalidAgent('createAgent(): maxSteps must be a positive integer');
  if (sessions !== 'shared' && sessions !== 'owned') throw invalidAgent("createAgent(): sessions must be 'shared' or 'owned'");
  if (sessions === 'owned' && (typeof store.listSessions !== 'function' || typeof store.deleteSession !== 'function')) {
    throw invalidAgent("createAgent(): sessions: 'owned' needs a store with listSessions and deleteSession");
  }
  const mode: SessionMode = sessions;
  if (!Number.isInteger(maxPendingApprovals) || maxPendingApprovals < 1) {
    throw invalidAgent('createAgent(): maxPendingApprovals must be a positive integer');
  }
  const reserved = memory === undefined ? [] : [REMEMBER];
  if (typeof tools !== 'function') indexTools(tools, reserved, 'createAgent(): tools');
  // A static agent never calls a function with a run context, so nothing of it can use the
  // principal: its checkpoints keep none, and a paused static run resumes without one.
  const dynamic = typeof model === 'function' || typeof instructions === 'function' || typeof tools === 'function' || typeof settings === 'function';

  async function prepare(context: RunContext, namespace: string | undefined, store: Store): Promise<Setup> {
    let chosen = staticModel;
    if (chosen === undefined) {
      const returned: unknown = await (model as (context: RunContext) => unknown)(context);
      chosen = runModel(returned);
      if (chosen === undefined) throw notAModel('what the model function returns');
    }
    const text = typeof instructions === 'function' ? await instructions(context) : instructions;
    if (typeof text !== 'string') throw invalidAgent('the instructions function must return a string');
    const byName = typeof tools === 'function' ? indexTools(await tools(context), reserved, 'the tools function result') : indexTools(tools, reserved, 'tools');
    const runSettings = staticSettings ?? checkSettings(await (settings as (context: RunContext) => unknown)(context), 'the settings function result');
    if (namespace === undefined) return { model: chosen, instructions: text, tools: byName, settings: runSettings };
    byName.set(REMEMBER, rememberTool(store, namespace));
    return { model: chosen, instructions: withNotes(text, await store.loadMemory(namespace)), tools: byName, settings: runSettings };
  }

  const exclusive = keyedQueue();
  /** Runs one turn of a session under the store's per-session lock, or this agent's own queue. */
  const turn = <T>(sessionId: string, body: (store: Store) => Promise<T>): Promise<T> =>
    typeof store.withSession === 'function' ? store.withSession(sessionId, body) : exclusive(sessionId, () => body(store));

  /**
   * The events of one run: `start` once the caller may see the session (`observe`), then the
   * run's own, and last `finish` once the whole turn is stored (`settle`: a database store
   * commits when its turn returns), or `error` when anything failed, the commit included.
   */
  function runEvents({ onEvent, signal }: { onEvent?: (event: RunEvent) => void; signal?: AbortSignal }) {
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
    if (dynamic && principal !== undefined) checkpoint.principal = principal;
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
      const { setup } = run;
      const request = { instructions: setup.instructions, messages: copyMessages(run.messages), tools: toolSpecs(setup.tools), settings: setup.settings };
      const turn = await modelTurn(setup.model, run.signal === undefined ? request : { ...request, signal: run.signal }, run.emit, run.streaming);
      run.text = turn.text;
      const answer: Message & { role: 'assistant' } = turn.toolCalls.length === 0 ? { role: 'assistant', content: turn.text } : { role: 'assistant', content: turn.text, toolCalls: turn.toolCalls };
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

  const newSession = (id: string): SessionRecord => {
    const now = isoNow();
    return { id, messages: [], audit: [], createdAt: now, updatedAt: now };
  };

  const sessionNotFound = () => new AgentError('SESSION_NOT_FOUND', 'no session has this id');

  /**
   * Whether the stored owner already rules the principal out, read without the transcript when
   * the store can (`sessionOwner`): `'unknown'` (no such session), `'refused'` (not the caller's),
   * or `undefined` (load the record and decide on it). Unknown and not yours then cost the same.
   */
  async function ownerVerdict(turnStore: Store, sessionId: string, principal: Principal | undefined): Promise<'unknown' | 'refused' | undefined> {
    if (mode !== 'owned' || principal === undefined || typeof turnStore.sessionOwner !== 'function') return undefined;
    const owner = await turnStore.sessionOwner(sessionId);
    if (owner === undefined) return 'unknown';
    return mayUseOwner(mode, owner, principal) ? undefined : 'refused';
  }

  /** The session `principal` may use, or `undefined`: unknown and not the caller's look the same. */
  async function usableSession(turnStore: Store, sessionId: string, principal: Principal | undefined): Promise<SessionRecord | undefined> {
    if ((await ownerVerdict(turnStore, sessionId, principal)) !== undefined) return undefined;
    const session = await turnStore.loadSession(sessionId);
    return session !== undefined && mayUse(mode, session, principal) ? session : undefined;
  }

  /**
   * The session a send continues or creates, or the refusal that answers it (design §9). `owner`:
   * the principal's key; `askedBytes`: the size the message adds to the record.
   */
  async function sessionToSend(
    turnStore: Store, sessionId: string, chosen: boolean, principal: Principal | undefined, owner: OwnerKey | undefined, message: string, askedBytes: number,
  ): Promise<SessionRecord> {
    const verdict = await ownerVerdict(turnStore, sessionId, principal);
    // A caller who may use the session (any caller of a shared one; an owned one's owner, by the
    // store's owner record) learns that it is full before its record is read and parsed: a refused
    // turn at a 4 MiB bound cost 23 ms of parsing (bench:session).
    if (verdict === undefined && (mode === 'shared' || principal === undefined || typeof turnStore.sessionOwner === 'function')) {
      const least = await turnStore.sessionBytesAtLeast?.(sessionId);
      if (least !== undefined) checkSize(least + askedBytes);
    }
    const stored = verdict === undefined ? await turnStore.loadSession(sessionId) : undefined;
    if (stored !== undefined && mayUse(mode, stored, principal)) return stored;
    if (mode === 'owned' && principal !== undefined && chosen && isAnonymous(principal)) {
      // An anonymous caller's new sessions get server-made ids; an id of someone else's session answers the same.
      throw invalidInput('an anonymous caller cannot choose the sessionId of a new session; send without sessionId');
    }
    if (stored !== undefined || verdict === 'refused') throw sessionNotFound();
    const session = newSession(sessionId);
    session.title = titleOf(message);
    if (mode === 'owned' && owner !== undefined) session.owner = owner;
    return session;
  }

  async function send(message: string, sendOptions: SendOptions = {}): Promise<RunResult> {
    if (typeof message !== 'string' || message === '') throw invalidInput('message must be a non-empty string');
    callOptions('send()', sendOptions, SEND_OPTION_NAMES);
    const { signal } = sendOptions;
    const onUsage = checkHook(sendOptions.onUsage);
    const sessionId = sendOptions.sessionId === undefined ? randomId() : checkSessionId(sendOptions.sessionId);
    const principal = checkPrincipal(sendOptions.principal);
    const context = runContext(principal, sessionId, checkMetadata(sendOptions.metadata));
    const owner = principal === undefined ? undefined : ownerKey(principal);
    const asked: Message = { role: 'user', content: message };
    // What the message adds to the record (and its comma), counted once: a 1 MiB message takes a walk of its own.
    const askedBytes = serializedBytes(asked) + 1;
    const events = runEvents(sendOptions);
    return events.settle(turn(sessionId, async (turnStore) => {
      // Checked before the run is observed: a refused caller sees no event of someone else's session.
      const session = await sessionToSend(turnStore, sessionId, sendOptions.sessionId !== undefined, principal, owner, message, askedBytes);
      return events.observe(sessionId, async (emit) => {
        if ((await turnStore.listCheckpoints(sessionId)).length > 0) {
          throw new AgentError('APPROVAL_PENDING', 'the session waits for an approval decision; decide it before sending a new message');
        }
        // Before the model runs: a message the session cannot hold is refused, and nothing is stored.
        checkSize(serializedBytes(session) + askedBytes);
        const namespace = memory === undefined ? undefined : await memoryNamespace(memory, principal);
        const setup = await prepare(context, namespace, turnStore);
        const messages: Message[] = [...session.messages, asked];
        const streaming = sendOptions.onEvent !== undefined;
        return loop({ context, session, messages, calls: [], step: 0, text: '', namespace, setup, signal, emit, streaming, store: turnStore, owner, usage: undefined, unstored: [], onUsage }, false);
      });
    }));
  }

  async function decide(approvalId: string, decision: DecideOptions): Promise<RunResult> {
    if (typeof approvalId !== 'string' || approvalId === '') throw invalidInput('approvalId must be a non-empty string');
    if (typeof decision !== 'object' || decision === null || typeof decision.approved !== 'boolean') {
      throw invalidInput('the decision needs approved: true or false');
    }
    checkOptionNames('decide()', decision, DECIDE_OPTION_NAMES, invalidInput);
    const { approved, reason, signal } = decision;
    const onUsage = checkHook(decision.onUsage);
    if (reason !== undefined && typeof reason !== 'string') throw invalidInput('the reason of a decision must be a string');
    const decidedBy = checkPrincipal(decision.principal, 'the decider');
    const notFound = () => new AgentError('APPROVAL_NOT_FOUND', 'no pending approval has this id (unknown or already decided)');
    const found = (await store.loadCheckpoint(approvalId)) as RunCheckpoint | undefined;
    if (found === undefined) throw notFound();
    const { sessionId } = found;
    const events = runEvents(decision);
    return events.settle(turn(sessionId, async (turnStore) => {
      const checkpoint = (await turnStore.loadCheckpoint(approvalId)) as RunCheckpoint | undefined;
      if (checkpoint === undefined) throw notFound();
      const stored = await turnStore.loadSession(sessionId);
      // Someone else's approval answers as an unknown one, before any event names its session.
      if (mode === 'owned' && decidedBy !== undefined && (stored === undefined || !mayUse(mode, stored, decidedBy))) throw notFound();
      const session = stored ?? newSession(sessionId);
      return events.observe(sessionId, async (emit) => {
        // The run resumes as the principal it started with; the decider is only recorded.
        const context = runContext(checkPrincipal(checkpoint.principal, 'the checkpoint principal'), sessionId, checkMetadata(checkpoint.metadata));
        const setup = await prepare(context, checkpoint.namespace, turnStore);
        const { pending } = checkpoint;
        const entry: AuditEntry = { type: 'approval-decided', approvalId, tool: pending.name, approved, at: isoNow() };
        if (reason !== undefined) entry.reason = reason;
        if (decidedBy !== undefined) entry.decidedBy = decidedBy;
        checkSize(serializedBytes({ ...session, messages: checkpoint.messages }) + serializedBytes(entry) + 1);
        // Claimed only now, so a failure above leaves the approval pending; only one decider wins the claim.
        if (!(await turnStore.deleteCheckpoint(approvalId))) throw notFound();
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
          streaming: decision.onEvent !== undefined,
          store: turnStore,
          owner: checkpoint.owner,
          usage: undefined,
          unstored: [],
          onUsage,
        };
        emit({ type: 'step-start' });
        record(run, approved ? await runTool(setup.tools.get(pending.name), pending, toolContext(run)) : denial(pending, reason));
        return loop(run, true);
      });
    }));
  }

  const callerOf = (call: string, options: { principal?: unknown } | undefined) => checkPrincipal(callOptions(call, options, ['principal'])?.principal);

  async function pendingApprovals(sessionId: string, options?: { principal?: Principal }): Promise<PendingApproval[]> {
    const id = checkSessionId(sessionId);
    const principal = callerOf('pendingApprovals()', options);
    if (mode === 'owned' && (await usableSession(store, id, principal)) === undefined) throw sessionNotFound();
    const checkpoints = (await store.listCheckpoints(id)) as RunCheckpoint[];
    return checkpoints.map(({ approvalId, pending }) => ({ id: approvalId, tool: pending.name, arguments: pending.arguments, toolCallId: pending.id }));
  }

  async function listSessions(options: { principal: Principal; limit?: number; cursor?: string }) {
    if (mode !== 'owned') throw invalidInput("listSessions() needs an agent created with sessions: 'owned'");
    if (typeof options !== 'object' || options === null) throw invalidInput('listSessions() needs { principal }');
    checkOptionNames('listSessions()', options, ['principal', 'limit', 'cursor'], invalidInput);
    const principal = checkPrincipal(options.principal);
    if (principal === undefined) throw invalidInput('listSessions() needs the principal whose sessions to list');
    if (isAnonymous(principal)) throw new AgentError('FORBIDDEN', 'an anonymous caller owns no sessions');
    const limit = checkLimit(options.limit);
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const rows = await store.listSessions!({ owner: ownerKey(principal), limit: limit + 1, ...(after !== undefined && { after }) });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      sessions: page.map(({ id, createdAt, updatedAt, title, pendingApprovals }) => ({ sessionId: id, createdAt, updatedAt, title, pendingApprovals })),
      nextCursor: rows.length > limit && last !== undefined ? encodeCursor(last) : null,
    };
  }

  async function deleteSession(sessionId: string, options?: { principal?: Principal }): Promise<void> {
    const id = checkSessionId(sessionId);
    const principal = callerOf('deleteSession()', options);
    if (typeof store.deleteSession !== 'function') throw invalidAgent('deleteSession() needs a store with deleteSession');
    await turn(id, async (turnStore) => {
      const session = await usableSession(turnStore, id, principal);
      if (session === undefined) throw sessionNotFound();
      await turnStore.deleteSession!(id);
    });
  }

  return Object.freeze({
    name,
    sessions: mode,
    // A tool that may ask first, or tools chosen per run (any of them may): the MCP route lists decide then.
    awaitsApprovals: typeof tools === 'function' || tools.some((tool) => tool.needsApproval !== undefined && tool.needsApproval !== false),
    send,
    session(id: string) {
      return Object.freeze({ id, send: (message: string, sessionOptions: Omit<SendOptions, 'sessionId'> = {}) => send(message, { ...sessionOptions, sessionId: id }) });
    },
    decide,
    async transcript(sessionId: string, options?: { principal?: Principal }) {
      const session = await usableSession(store, checkSessionId(sessionId), callerOf('transcript()', options));
      if (session === undefined) throw sessionNotFound();
      return { sessionId, messages: session.messages, audit: session.audit };
    },
    pendingApprovals,
    listSessions,
    deleteSession,
  });
}

const AGENT_OPTION_NAMES = Object.freeze(['name', 'model', 'instructions', 'tools', 'settings', 'memory', 'store', 'maxSteps', 'sessions', 'maxPendingApprovals', 'limits']);

function checkHook(hook: unknown): UsageHook | undefined {
  if (hook !== undefined && typeof hook !== 'function') throw invalidInput('onUsage must be a function');
  return hook as UsageHook | undefined;
}

/**
 * Past this many bytes a turn gives the event loop a turn after storing its record: a store that
 * resolves at once (memoryStore) would otherwise parse, write and answer a 4 MiB record in one
 * stretch, ~70 ms during which nothing else is served (bench/session-bound.ts).
 */
const YIELD_BYTES = 256 * 1024;

/** The default bound of a session's stored record (design §19). */
export const DEFAULT_SESSION_BYTES = 4 * 1024 * 1024;

function readLimits(value: unknown): { sessionBytes: number } {
  if (value === undefined) return { sessionBytes: DEFAULT_SESSION_BYTES };
  if (typeof value !== 'object' || value === null) throw invalidAgent('createAgent(): limits must be { sessionBytes? }');
  checkOptionNames('createAgent(): limits', value, ['sessionBytes'], invalidAgent);
  const { sessionBytes = DEFAULT_SESSION_BYTES } = value as { sessionBytes?: unknown };
  if (!Number.isInteger(sessionBytes) || (sessionBytes as number) < 1024) throw invalidAgent('createAgent(): limits.sessionBytes must be a whole number of bytes, 1024 or more');
  return { sessionBytes: sessionBytes as number };
}

/** Printable ASCII but `"` and `\\`: JSON writes such a string as it is, one byte a character. */
const PLAIN_JSON = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** The UTF-8 bytes of `text` as a JSON string, quotes included, without building it. */
function stringBytes(text: string): number {
  if (PLAIN_JSON.test(text)) return text.length + 2;
  let bytes = 2;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20) bytes += unit === 8 || unit === 9 || unit === 10 || unit === 12 || unit === 13 ? 2 : 6;
    else if (unit === 0x22 || unit === 0x5c) bytes += 2;
    else if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit < 0xd800 || unit > 0xdfff) bytes += 3;
    else if (unit <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) (bytes += 4), i++;
    else bytes += 6; // a lone surrogate: JSON writes \udxxx
  }
  return bytes;
}

/**
 * The UTF-8 size of a value as JSON.stringify writes it (what the stores keep), counted without
 * writing it: a walk over the values, a regular expression over each string. A 4 MiB record of
 * ASCII text is counted in about 2 ms where JSON.stringify and a count took about 23 (Node 22):
 * a turn at the bound counts its record twice, and `bench:session` holds its health requests under 50 ms.
 */
export function serializedBytes(value: unknown): number {
  if (typeof value === 'string') return stringBytes(value);
  if (typeof value !== 'object' || value === null) return value === undefined ? 0 : (JSON.stringify(value) ?? 'null').length;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return serializedBytes(JSON.parse(JSON.stringify(value)));
  if (Array.isArray(value)) {
    let bytes = value.length === 0 ? 2 : value.length + 1;
    for (const item of value) bytes += item === undefined || typeof item === 'function' || typeof item === 'symbol' ? 4 : serializedBytes(item);
    return bytes;
  }
  let bytes = 2;
  let members = 0;
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    bytes += stringBytes(key) + 1 + serializedBytes(item);
    members++;
  }
  return bytes + Math.max(0, members - 1);
}
const SEND_OPTION_NAMES = Object.freeze(['principal', 'sessionId', 'metadata', 'signal', 'onEvent', 'onUsage']);
const DECIDE_OPTION_NAMES = Object.freeze(['approved', 'reason', 'principal', 'signal', 'onEvent', 'onUsage']);

/** A call's options: absent, or an object of known keys only (a misspelled `principal` must not make the call trusted server code). */
function callOptions<T extends object>(call: string, options: T | undefined, known: readonly string[]): T | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) throw invalidInput(`${call}: options must be an object`);
  checkOptionNames(call, options, known, invalidInput);
  return options;
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
