import { carryPresentedToken, checkOptionNames, holdPresentedToken, kindOf } from '../auth/internal.ts';
import { checkMetadata, checkPrincipal, checkSessionId, personOf, runContext } from './context.ts';
import { AgentError, configError, invalidAgent, invalidInput } from './errors.ts';
import { isoNow } from './clock.ts';
import { randomId } from './ids.ts';
import { serializedBytes } from './json-size.ts';
import { keyedQueue } from './key-queue.ts';
import { noteEchoAgent } from './echo-mark.ts';
import { addUsage } from './model-turn.ts';
import { memoryNamespace, REMEMBER, rememberTool, withNotes } from './memory.ts';
import {
  AGENT_OPTION_NAMES,
  CREATE_AGENT,
  callOptions,
  checkHook,
  checkPositive,
  checkStore,
  DECIDE_OPTION_NAMES,
  DEFAULT_MAX_PENDING_APPROVALS,
  DEFAULT_MAX_STEPS,
  invalidOption,
  notAModel,
  readLimits,
  runModel,
  SEND_OPTION_NAMES,
} from './options.ts';
import { checkSize, pendingApproval, runEvents, runLoop, type RunCheckpoint, type Setup } from './run.ts';
import { checkSettings } from './settings.ts';
import {
  checkLimit,
  decodeCursor,
  encodeCursor,
  isAnonymous,
  mayUse,
  newSession,
  ownerKey,
  ownerVerdict,
  titleOf,
  usableSession,
} from './sessions.ts';
import { memoryStore } from './store.ts';
import {
  AUDIT_EVENTS,
  AUTHORIZED,
  registerResources,
  type ApprovalResource,
  type AuditEvents,
  type Authorized,
} from './resources.ts';
import { schemasReady } from './ai-sdk-tools.ts';
import { poolOf } from './pools.ts';
import { indexTools, toolListing } from './tools.ts';
import { checkArguments } from './arguments.ts';
import { agentTracing, readTelemetry, type RunTrace } from './telemetry.ts';
import type {
  Agent,
  AgentOptions,
  AuditEntry,
  CallerOptions,
  CallToolOptions,
  DecideOptions,
  Message,
  OwnerKey,
  PendingApproval,
  Principal,
  RunContext,
  RunResult,
  SendOptions,
  SessionMode,
  SessionRecord,
  RunEvent,
  Store,
  Tool,
  ToolCallResult,
  ToolListing,
  TurnMeter,
} from './types.ts';
import { nonEmptyString } from './shapes.ts';

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
/** The metadata of a direct tool call's run: none. */
const NO_METADATA: Readonly<Record<string, unknown>> = Object.freeze({});

export function createAgent(options: AgentOptions): Agent {
  if (typeof options !== 'object' || options === null) throw invalidOption('options must be an object');
  checkOptionNames(CREATE_AGENT, options, AGENT_OPTION_NAMES);
  if (typeof options.memory === 'object' && options.memory !== null)
    checkOptionNames(`${CREATE_AGENT}: memory`, options.memory, ['scope']);
  const {
    name,
    model,
    instructions = '',
    tools = [],
    memory,
    store = memoryStore(),
    maxSteps = DEFAULT_MAX_STEPS,
    sessions = 'shared',
    settings,
  } = options;
  const { maxPendingApprovals = DEFAULT_MAX_PENDING_APPROVALS } = options;
  const sessionBytes = readLimits(options.limits);
  const telemetry = readTelemetry(options.telemetry, CREATE_AGENT);
  nonEmptyString(name, 'name', invalidOption);
  const staticModel = typeof model === 'function' ? undefined : runModel(model);
  if (typeof model !== 'function' && staticModel === undefined)
    throw invalidOption(notAModel('model (or what a function returns)'));
  const tracing = telemetry === undefined ? undefined : agentTracing(telemetry, name, staticModel);
  const staticSettings =
    typeof settings === 'function' ? undefined : checkSettings(settings, `${CREATE_AGENT}: settings`, configError);
  if (typeof instructions !== 'string' && typeof instructions !== 'function')
    throw invalidOption('instructions must be a string or a function returning one');
  if (memory !== undefined && typeof memory?.scope !== 'function')
    throw invalidOption('memory.scope must be a function');
  checkStore(store, `${CREATE_AGENT}: store`);
  checkPositive(maxSteps, 'maxSteps');
  if (sessions !== 'shared' && sessions !== 'owned') throw invalidOption("sessions must be 'shared' or 'owned'");
  if (sessions === 'owned' && (typeof store.listSessions !== 'function' || typeof store.deleteSession !== 'function')) {
    throw invalidOption("sessions: 'owned' needs a store with listSessions and deleteSession");
  }
  const mode: SessionMode = sessions;
  checkPositive(maxPendingApprovals, 'maxPendingApprovals');
  const reserved = memory === undefined ? [] : [REMEMBER];
  const staticTools =
    typeof tools === 'function' ? undefined : indexTools(tools, reserved, `${CREATE_AGENT}: tools`, configError);
  const keepsPrincipal =
    typeof model === 'function' ||
    typeof instructions === 'function' ||
    typeof tools === 'function' ||
    typeof settings === 'function';
  const limits = { maxSteps, maxPendingApprovals, sessionBytes, keepsPrincipal };

  /** The model, instructions, tools and settings of a run: a dynamic agent's, made for its context; the memory of `namespace` added. */
  async function prepare(context: RunContext, namespace: string | undefined, store: Store): Promise<Setup> {
    let chosen = staticModel;
    if (chosen === undefined) {
      const returned: unknown = await (model as (context: RunContext) => unknown)(context);
      chosen = runModel(returned);
      if (chosen === undefined) throw invalidAgent(notAModel('what the model function returns'));
    }
    let text = typeof instructions === 'function' ? await instructions(context) : instructions;
    if (typeof text !== 'string') throw invalidAgent('the instructions function must return a string');
    const byName =
      typeof tools === 'function'
        ? indexTools(await tools(context), reserved, 'the tools function result')
        : new Map(staticTools);
    await schemasReady(byName.values());
    const runSettings =
      staticSettings ??
      checkSettings(await (settings as (context: RunContext) => unknown)(context), 'the settings function result');
    if (namespace !== undefined) {
      byName.set(REMEMBER, rememberTool(store, namespace));
      text = withNotes(text, await store.loadMemory(namespace));
    }
    return { model: chosen, instructions: text, tools: byName, settings: runSettings };
  }

  const exclusive = keyedQueue();
  /** Runs one turn of a session under the store's per-session lock, or this agent's own queue. */
  const turn = <T>(sessionId: string, body: (store: Store) => Promise<T>): Promise<T> =>
    typeof store.withSession === 'function'
      ? store.withSession(sessionId, body)
      : exclusive(sessionId, () => body(store));

  const sessionNotFound = () => new AgentError('SESSION_NOT_FOUND', 'no session has this id');

  /**
   * The session a send continues or creates, or the refusal that answers it (design §9). `owner`:
   * the principal's key; `askedBytes`: the size the message adds to the record.
   */
  async function sessionToSend(
    turnStore: Store,
    sessionId: string,
    chosen: boolean,
    principal: Principal | undefined,
    owner: OwnerKey | undefined,
    message: string,
    askedBytes: number,
  ): Promise<SessionRecord> {
    const verdict = await ownerVerdict(mode, turnStore, sessionId, principal);
    // A caller who may use the session (any caller of a shared one; an owned one's owner, by the
    // store's owner record) learns that it is full before its record is read and parsed, which at
    // the bound is costly (docs/design.md §30, "Speed tricks and what they bought").
    if (
      verdict === undefined &&
      (mode === 'shared' || principal === undefined || typeof turnStore.sessionOwner === 'function')
    ) {
      const least = await turnStore.sessionBytesAtLeast?.(sessionId);
      if (least !== undefined) checkSize(least + askedBytes, sessionBytes);
    }
    const stored = verdict === undefined ? await turnStore.loadSession(sessionId) : undefined;
    if (stored !== undefined && mayUse(mode, stored, principal)) return stored;
    if (mode === 'owned' && principal !== undefined && chosen && isAnonymous(principal)) {
      // An anonymous caller's new sessions get server-made ids; an id of someone else's session answers the same.
      throw invalidInput(
        'send(): an anonymous caller cannot choose the sessionId of a new session; send without sessionId',
      );
    }
    if (stored !== undefined || verdict === 'refused') throw sessionNotFound();
    const session = newSession(sessionId);
    session.title = titleOf(message);
    if (mode === 'owned' && owner !== undefined) session.owner = owner;
    return session;
  }

  /** A send; `trace`: its spans, with `telemetry` (design §28). */
  async function send(message: string, sendOptions: SendOptions = {}, trace?: RunTrace): Promise<RunResult> {
    // The token the caller presented stays reachable while this run goes on, and no longer (design §32).
    let letGo: (() => void) | undefined;
    try {
      nonEmptyString(message, 'send(): message', invalidInput);
      callOptions('send()', sendOptions, SEND_OPTION_NAMES);
      const hooks = runHooks('send()', sendOptions, trace);
      const sessionId =
        sendOptions.sessionId === undefined ? randomId() : checkSessionId('send()', sendOptions.sessionId);
      trace?.conversation(sessionId);
      const principal = checkPrincipal('send()', sendOptions.principal);
      letGo = holdPresentedToken(principal);
      const context = runContext(principal, sessionId, checkMetadata('send()', sendOptions.metadata));
      const owner = principal === undefined ? undefined : ownerKey(principal);
      const asked: Message = { role: 'user', content: message };
      // What the message adds to the record (and its comma), counted once: a 1 MiB message takes a walk of its own.
      const askedBytes = serializedBytes(asked) + 1;
      const events = runEvents(sendOptions);
      // Past approvals.ttlSec (the route handler says when): the session's expired approval is denied first.
      const expiredIf = (sendOptions as Authorized)[AUTHORIZED]?.expiredIf;
      /**
       * One turn of the send: its run, or (`expire`) the session's pending approval denied as
       * expired and its run resumed with that denial (design §33), which ends the turn.
       */
      const attempt = (expire: boolean) =>
        turn(sessionId, async (turnStore) => {
          // Checked before the run is observed: a refused caller sees no event of someone else's session.
          const session = await sessionToSend(
            turnStore,
            sessionId,
            sendOptions.sessionId !== undefined,
            principal,
            owner,
            message,
            askedBytes,
          );
          return events.observe(sessionId, async (emit): Promise<{ sent?: RunResult; resumed?: RunResult }> => {
            const waiting = (await turnStore.listCheckpoints(sessionId)) as RunCheckpoint[];
            const [first] = waiting;
            if (first !== undefined) {
              if (expire && expiredIf !== undefined && waiting.length === 1 && expiredIf(first.createdAt)) {
                const verdict = { approved: false, reason: 'expired', decidedBy: principal };
                return { resumed: await resume(turnStore, first, session, verdict, hooks, emit) };
              }
              throw new AgentError(
                'APPROVAL_PENDING',
                'the session waits for an approval decision; decide it before sending a new message',
              );
            }
            // Before the model runs: a message the session cannot hold is refused, and nothing is stored.
            checkSize(serializedBytes(session) + askedBytes, sessionBytes);
            const namespace = memory === undefined ? undefined : await memoryNamespace(memory, principal);
            const setup = await prepare(context, namespace, turnStore);
            const messages: Message[] = [...session.messages, asked];
            const sent = await runLoop(limits, {
              ...hooks,
              context,
              session,
              messages,
              calls: [],
              step: 0,
              text: '',
              namespace,
              setup,
              emit,
              store: turnStore,
              owner,
            });
            return { sent };
          });
        });
      const result = await events.settle(
        (async () => {
          const first = await attempt(true);
          if (first.sent !== undefined) return first.sent;
          // The denied run is stored in its own turn; the message then goes as any send (409 if the run waits again).
          const sent = (await attempt(false)).sent as RunResult;
          // The resumed run's model turns were this send's too (design §33: metered to its caller).
          const spent = first.resumed?.usage;
          if (spent === undefined) return sent;
          return { ...sent, usage: sent.usage === undefined ? spent : addUsage(spent, sent.usage) };
        })(),
      );
      trace?.ended(result);
      return result;
    } catch (error) {
      // The run's span ends whatever happens, a refusal before the run started included.
      trace?.ended(undefined, error);
      throw error;
    } finally {
      letGo?.();
    }
  }

  async function decide(approvalId: string, decision: DecideOptions, trace?: RunTrace): Promise<RunResult> {
    let letGo: (() => void) | undefined;
    try {
      nonEmptyString(approvalId, 'decide(): approvalId', invalidInput);
      if (typeof decision !== 'object' || decision === null || typeof decision.approved !== 'boolean') {
        throw invalidInput('decide(): the decision needs approved: true or false');
      }
      checkOptionNames('decide()', decision, DECIDE_OPTION_NAMES, invalidInput);
      // Past approvals.ttlSec (the route handler's authorize() says so): decided as denied, whatever was asked.
      const authorized = (decision as Authorized)[AUTHORIZED];
      const expired = authorized?.expired === true;
      const approved = expired ? false : decision.approved;
      const reason = expired ? 'expired' : decision.reason;
      const hooks = runHooks('decide()', decision, trace);
      if (reason !== undefined && typeof reason !== 'string')
        throw invalidInput(`decide(): reason must be a string; got ${kindOf(reason)}`);
      const decidedBy = checkPrincipal('decide()', decision.principal, 'the decider');
      letGo = holdPresentedToken(decidedBy);
      const found = (await store.loadCheckpoint(approvalId)) as RunCheckpoint | undefined;
      if (found === undefined) throw approvalNotFound();
      const { sessionId } = found;
      const events = runEvents(decision);
      const result = await events.settle(
        turn(sessionId, async (turnStore) => {
          const checkpoint = (await turnStore.loadCheckpoint(approvalId)) as RunCheckpoint | undefined;
          if (checkpoint === undefined) throw approvalNotFound();
          const stored = await turnStore.loadSession(sessionId);
          // Someone else's approval answers as an unknown one, before any event names its session.
          // Over HTTP, authorize() decided it already (design §32); in process, the §9 rule.
          if (
            authorized === undefined &&
            mode === 'owned' &&
            decidedBy !== undefined &&
            (stored === undefined || !mayUse(mode, stored, decidedBy))
          )
            throw approvalNotFound();
          // Named on the span only now: a refused decision names no session the caller may not see (design §32).
          trace?.conversation(sessionId);
          const session = stored ?? newSession(sessionId);
          return events.observe(sessionId, (emit) =>
            resume(turnStore, checkpoint, session, { approved, reason, decidedBy }, hooks, emit),
          );
        }),
      );
      trace?.ended(result);
      return result;
    } catch (error) {
      // The run's span ends whatever happens, a refusal before the run started included.
      trace?.ended(undefined, error);
      throw error;
    } finally {
      letGo?.();
    }
  }

  /** What a paused run is resumed with: the decision, and who made it (`undefined`: trusted code). */
  interface Verdict {
    approved: boolean;
    reason: string | undefined;
    decidedBy: Principal | undefined;
  }

  /**
   * A paused run resumed with its decision, inside its session's turn (a `decide`, or a send that
   * found the approval past `approvals.ttlSec`): recorded in the audit log, claimed, kept in the
   * transcript and emitted, then run on from its checkpoint (design §33).
   */
  async function resume(
    turnStore: Store,
    checkpoint: RunCheckpoint,
    session: SessionRecord,
    { approved, reason, decidedBy }: Verdict,
    hooks: ReturnType<typeof runHooks>,
    emit: (event: RunEvent) => void,
  ): Promise<RunResult> {
    const { approvalId, sessionId } = checkpoint;
    // The run resumes as the principal it started with; the decider is only recorded. Its own
    // object: it carries the token the decider presented only when the decider is that principal (design §27).
    const started = checkPrincipal(
      'decide()',
      checkpoint.principal === undefined ? undefined : { ...checkpoint.principal },
      'the checkpoint principal',
    );
    carryPresentedToken(decidedBy, started);
    const context = runContext(started, sessionId, checkMetadata('decide()', checkpoint.metadata));
    const setup = await prepare(context, checkpoint.namespace, turnStore);
    const { pending, messages } = checkpoint;
    const decidedAt = isoNow();
    const entry: AuditEntry = {
      type: 'approval-decided',
      approvalId,
      tool: pending.name,
      approved,
      decidedAt,
      at: decidedAt,
    };
    if (reason !== undefined) entry.reason = reason;
    const decider = decidedBy === undefined ? undefined : personOf(decidedBy);
    if (decider !== undefined) entry.decidedBy = decider;
    checkSize(serializedBytes({ ...session, messages }) + serializedBytes(entry) + 1, sessionBytes);
    // Written before the claim: a required log that fails leaves the approval pending (design §34).
    if (hooks.auditEvents !== undefined) {
      const { type: _t, at: _a, decidedAt: _d, ...fields } = entry;
      await hooks.auditEvents({ type: 'approval-decided', ...fields });
    }
    // Claimed only now, so a failure above leaves the approval pending; only one decider wins the claim.
    if (!(await turnStore.deleteCheckpoint(approvalId))) throw approvalNotFound();
    session.audit.push(entry);
    const { type: _, at: __, ...decided } = entry;
    emit({ type: 'approval-decided', ...decided });
    // The paused run as stored (its messages, step, text, namespace and owner), every other field of the run set here.
    const run = {
      ...checkpoint,
      ...hooks,
      calls: checkpoint.remaining,
      context,
      session,
      setup,
      emit,
      store: turnStore,
    };
    return runLoop(limits, run, { pending, approved, reason, decidedBy: decider });
  }

  const approvalNotFound = () =>
    new AgentError('APPROVAL_NOT_FOUND', 'no pending approval has this id (unknown or already decided)');

  /** What a call (`send`, `decide`) gives its run besides its state: its signal, whether it streams, its hooks (checked) and its spans. */
  const runHooks = (call: string, options: SendOptions | DecideOptions, trace: RunTrace | undefined) => ({
    signal: options.signal,
    streaming: options.onEvent !== undefined,
    onUsage: checkHook(call, options.onUsage),
    meter: checkHook<TurnMeter>(call, options.meter, 'meter'),
    trace,
    auditEvents: (options as AuditEvents)[AUDIT_EVENTS],
  });

  // With telemetry each run is an `invoke_agent` span; without, these are the calls themselves.
  const runSend = tracing?.(send) ?? send;
  const runDecide = tracing?.(decide) ?? decide;

  const callerOf = (call: string, options: { principal?: unknown } | undefined) =>
    checkPrincipal(call, callOptions(call, options, ['principal'])?.principal);
  /** The session the caller may use, or `SESSION_NOT_FOUND`. */
  async function callersSession(
    turnStore: Store,
    sessionId: string,
    principal: Principal | undefined,
  ): Promise<SessionRecord> {
    const session = await usableSession(mode, turnStore, sessionId, principal);
    if (session === undefined) throw sessionNotFound();
    return session;
  }

  async function pendingApprovals(sessionId: string, options?: { principal?: Principal }): Promise<PendingApproval[]> {
    const id = checkSessionId('pendingApprovals()', sessionId);
    const principal = callerOf('pendingApprovals()', options);
    if (mode === 'owned') await callersSession(store, id, principal);
    const checkpoints = (await store.listCheckpoints(id)) as RunCheckpoint[];
    return checkpoints.map(({ approvalId, pending }) => pendingApproval(approvalId, pending));
  }

  async function listSessions(options: { principal: Principal; limit?: number; cursor?: string }) {
    if (mode !== 'owned') throw invalidInput("listSessions() needs an agent created with sessions: 'owned'");
    if (typeof options !== 'object' || options === null) throw invalidInput('listSessions() needs { principal }');
    checkOptionNames('listSessions()', options, ['principal', 'limit', 'cursor'], invalidInput);
    const principal = checkPrincipal('listSessions()', options.principal);
    if (principal === undefined) throw invalidInput('listSessions() needs the principal whose sessions to list');
    if (isAnonymous(principal)) throw new AgentError('FORBIDDEN', 'an anonymous caller owns no sessions');
    const limit = checkLimit(options.limit);
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const rows = await store.listSessions!({
      owner: ownerKey(principal),
      limit: limit + 1,
      ...(after !== undefined && { after }),
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      sessions: page.map(({ id, createdAt, updatedAt, title, pendingApprovals }) => ({
        sessionId: id,
        createdAt,
        updatedAt,
        title,
        pendingApprovals,
      })),
      nextCursor: rows.length > limit && last !== undefined ? encodeCursor(last) : null,
    };
  }

  async function deleteSession(sessionId: string, options?: { principal?: Principal }): Promise<void> {
    const id = checkSessionId('deleteSession()', sessionId);
    const principal = callerOf('deleteSession()', options);
    if (typeof store.deleteSession !== 'function')
      throw invalidAgent('deleteSession() needs a store with deleteSession');
    await turn(id, async (turnStore) => {
      await callersSession(turnStore, id, principal);
      await turnStore.deleteSession!(id);
    });
  }

  /** The tools `principal` gets (a `tools` function called for it), `only` those named when given; never `remember`. */
  async function callersTools(context: RunContext, only: readonly string[] | undefined): Promise<Map<string, Tool>> {
    const byName =
      typeof tools === 'function'
        ? indexTools(await tools(context), reserved, 'the tools function result')
        : new Map(staticTools);
    await schemasReady(byName.values());
    if (only !== undefined) for (const name of [...byName.keys()]) if (!only.includes(name)) byName.delete(name);
    return byName;
  }

  /** `only` of `listTools()` and `callTool()`: a list of tool names. */
  const checkOnly = (call: 'listTools()' | 'callTool()', only: unknown): readonly string[] | undefined => {
    if (only !== undefined && !(Array.isArray(only) && only.every((item) => typeof item === 'string')))
      throw invalidInput(`${call}: only must be a list of tool names; got ${kindOf(only)}`);
    return only as readonly string[] | undefined;
  };

  async function listTools(options?: CallerOptions & { only?: readonly string[] }): Promise<ToolListing[]> {
    const { principal, only } = callOptions('listTools()', options, ['principal', 'only']) ?? {};
    const context = runContext(checkPrincipal('listTools()', principal), randomId(), NO_METADATA);
    const byName = await callersTools(context, checkOnly('listTools()', only));
    return Promise.all([...byName.values()].map(toolListing));
  }

  /**
   * A direct tool call (design §36) lives in a session of its own, as a run would have made it: the
   * tool's call as an assistant turn, then its answer. The run answers that call through the agent's
   * own path (arguments, approval policy, execute) and ends without a model turn; a call that needs
   * approval pauses there, and `decide` resumes it like any paused run.
   */
  async function callTool(name: string, args: unknown, options: CallToolOptions = {}): Promise<ToolCallResult> {
    let letGo: (() => void) | undefined;
    try {
      nonEmptyString(name, 'callTool(): name', invalidInput);
      callOptions('callTool()', options, ['principal', 'signal', 'only']);
      const principal = checkPrincipal('callTool()', options.principal);
      letGo = holdPresentedToken(principal);
      const only = checkOnly('callTool()', options.only);
      const sessionId = randomId();
      const context = runContext(principal, sessionId, NO_METADATA);
      const owner = principal === undefined ? undefined : ownerKey(principal);
      let answered: RunEvent | undefined;
      const emit = (event: RunEvent) => {
        if (event.type === 'tool-result' || event.type === 'tool-error') answered = event;
      };
      const result = await turn(sessionId, async (turnStore) => {
        const setup = await prepare(context, undefined, turnStore);
        setup.tools = await callersTools(context, only);
        const tool = setup.tools.get(name);
        if (tool === undefined)
          throw new AgentError('TOOL_NOT_FOUND', `no tool "${name.slice(0, 64)}" is offered to this caller`);
        // Arguments the schema refuses end here: nothing is stored, the approval policy is not asked, the tool does not run.
        let checked: { value: unknown } | { invalid: string };
        try {
          checked = await checkArguments(tool, args);
        } catch {
          checked = { invalid: `tool "${tool.name}": its schema failed` };
        }
        if ('invalid' in checked) return checked;
        const session = newSession(sessionId);
        session.title = titleOf(tool.name);
        if (mode === 'owned' && owner !== undefined) session.owner = owner;
        const call = { id: randomId(), name: tool.name, arguments: args };
        return runLoop(limits, {
          context,
          session,
          messages: [{ role: 'assistant', content: '', toolCalls: [call] }],
          calls: [call],
          step: 0,
          text: '',
          setup,
          signal: options.signal,
          emit,
          streaming: false,
          store: turnStore,
          owner,
          onUsage: undefined,
          meter: undefined,
          direct: true,
          auditEvents: (options as AuditEvents)[AUDIT_EVENTS],
        });
      });
      if ('invalid' in result) return { status: 'completed', text: result.invalid, isError: true };
      const waiting = result.approvals[0];
      if (result.status === 'awaiting-approval' && waiting !== undefined)
        return { status: 'awaiting-approval', sessionId, approvalId: waiting.id };
      const output = answered?.type === 'tool-result' ? (answered as { output?: unknown }).output : undefined;
      return {
        status: 'completed',
        sessionId,
        text: result.text,
        ...(answered?.type === 'tool-result' && { output }),
        isError: answered?.type !== 'tool-result',
      };
    } finally {
      letGo?.();
    }
  }

  const agent: Agent = Object.freeze({
    name,
    sessions: mode,
    // A tool that may ask first, or tools chosen per run (any of them may): the MCP route lists decide then.
    awaitsApprovals:
      staticTools === undefined ||
      [...staticTools.values()].some((tool) => tool.needsApproval !== undefined && tool.needsApproval !== false),
    send: runSend,
    session(id: string) {
      return Object.freeze({
        id,
        send: (message: string, sessionOptions: Omit<SendOptions, 'sessionId'> = {}) =>
          runSend(message, { ...sessionOptions, sessionId: id }),
      });
    },
    decide: runDecide,
    async transcript(sessionId: string, options?: { principal?: Principal }) {
      const session = await callersSession(
        store,
        checkSessionId('transcript()', sessionId),
        callerOf('transcript()', options),
      );
      return { sessionId, messages: session.messages, audit: session.audit };
    },
    pendingApprovals,
    listSessions,
    deleteSession,
    ...(staticTools !== undefined && { toolNames: Object.freeze([...staticTools.keys()]) }),
    listTools,
    callTool,
  });
  noteEchoAgent(agent, model);
  /** A session's owner, read without its transcript where the store can. */
  async function sessionOwner(sessionId: string): Promise<OwnerKey | null | undefined> {
    if (typeof store.sessionOwner === 'function') return store.sessionOwner(sessionId);
    const session = await store.loadSession(sessionId);
    return session === undefined ? undefined : (session.owner ?? null);
  }
  registerResources(agent, {
    sessionOwner,
    storePool: poolOf(store),
    async approval(approvalId) {
      const checkpoint = (await store.loadCheckpoint(approvalId)) as RunCheckpoint | undefined;
      if (checkpoint === undefined) return undefined;
      const owner = await sessionOwner(checkpoint.sessionId);
      return owner === undefined ? undefined : approvalResource(checkpoint, owner);
    },
    async queue(query) {
      if (typeof store.listPendingApprovals !== 'function')
        throw invalidInput("this agent's store cannot list pending approvals across sessions; give sessionId");
      const after = query.after && { createdAt: query.after[0], approvalId: query.after[1] };
      const rows = (await store.listPendingApprovals({
        limit: query.limit,
        ...(query.owner !== undefined && { owner: query.owner }),
        ...(after !== undefined && { after }),
      })) as RunCheckpoint[];
      const found: ApprovalResource[] = [];
      for (const row of rows) {
        const owner = await sessionOwner(row.sessionId);
        if (owner !== undefined) found.push(approvalResource(row, owner));
      }
      const last = rows.at(-1);
      return {
        found,
        last: last === undefined ? undefined : [last.createdAt, last.approvalId],
        more: rows.length >= query.limit,
      };
    },
  });
  return agent;
}

const approvalResource = (checkpoint: RunCheckpoint, owner: OwnerKey | null): ApprovalResource => ({
  approvalId: checkpoint.approvalId,
  sessionId: checkpoint.sessionId,
  owner,
  requester: checkpoint.owner,
  tool: checkpoint.pending.name,
  arguments: checkpoint.pending.arguments,
  createdAt: checkpoint.createdAt,
});
