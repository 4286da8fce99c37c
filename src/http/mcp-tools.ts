// The tools an agent offers over MCP (design §18): `ask` sends a message as the authenticated
// principal, exactly as `POST <base>` does; `decide` answers an approval, as
// `POST <base>/approvals/:id` does; `read` lists the pending approvals the caller may decide, as
// `GET <base>/approvals` does (design §33). Ownership is the agent's: a stranger's session or
// approval is unknown to it.
import type { Agent, Principal, RunResult, ToolCallResult, ToolListing, TurnMeter } from '../agent/types.ts';
import type { McpTool } from './operations.ts';
import type { McpConfig } from './mcp.ts';
import type { ApprovalsAnswer, ApprovalsQuery } from './queue.ts';
import { badRequest, failureOf, HttpError, type Reply } from './responses.ts';

/** What the MCP route needs of an agent; the cloudflare-worker target gives one that forwards to a session's Durable Object. */
export interface McpAgent {
  readonly name: string;
  /** Whether some run can wait for an approval (a tool with `needsApproval`, or tools chosen per run): `decide` is listed then. */
  readonly awaitsApprovals?: boolean;
  send: Agent['send'];
  decide: Agent['decide'];
  /** The agent's own tools, for `mcp.tools` (design §36). */
  listTools?: Agent['listTools'];
  callTool?: Agent['callTool'];
  /**
   * MCP `read`, as the request's caller (design §33): the queue's page, or a session's pending
   * approvals, as `GET <base>/approvals` answers them. `read` is offered with `decide` when this is given.
   */
  readApprovals?: (query: ApprovalsQuery) => Promise<ApprovalsAnswer>;
}

/** The result of `tools/call` (MCP `CallToolResult`). */
interface ToolResult {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError: boolean;
}

/** A JSON Schema of one `type`, with its description when it has one. */
const typed = <T extends string | readonly string[]>(type: T, description?: string) =>
  description === undefined ? { type } : { type, description };
const string = (description?: string) => typed('string', description);
/** Every JSON type: the schema of a value the agent's own tools define. */
const JSON_TYPES = ['object', 'array', 'string', 'number', 'boolean', 'null'];

/** A tool's `inputSchema`: these properties, the `required` ones, and no other; `callTool` checks arguments against it. */
interface InputSchema {
  type: 'object';
  properties: Record<string, { type: string; description?: string; minimum?: number; maximum?: number }>;
  required: string[];
  additionalProperties: false;
}
const input = (properties: InputSchema['properties'], required: string[]): InputSchema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

const RUN_OUTPUT = {
  type: 'object',
  properties: {
    sessionId: string('The conversation: pass it to ask again to continue it.'),
    status: { type: 'string', enum: ['completed', 'awaiting-approval'] },
    text: string("The agent's reply."),
    approvals: {
      ...typed('array', 'Tool calls waiting for a decision (call decide with their id).'),
      items: {
        type: 'object',
        properties: {
          id: string(),
          tool: string(),
          // A tool's arguments are what its own schema allows: any JSON value, most often an object.
          arguments: typed(JSON_TYPES, 'The arguments of the tool call, as the model gave them.'),
          toolCallId: string(),
        },
        required: ['id', 'tool', 'toolCallId'],
      },
    },
  },
  required: ['sessionId', 'status', 'text', 'approvals'],
};

/** `read`'s answer: `GET <base>/approvals`'s JSON (with `sessionId`, no `nextCursor`). */
const READ_OUTPUT = {
  type: 'object',
  properties: {
    approvals: {
      ...typed('array', 'Pending tool calls, oldest first: call decide with an id to approve or deny it.'),
      items: {
        type: 'object',
        properties: {
          id: string('The approvalId to pass to decide.'),
          sessionId: string('The conversation the call waits in.'),
          tool: string('The tool the agent wants to call.'),
          arguments: typed(JSON_TYPES, 'The arguments of the tool call, as the model gave them.'),
          toolCallId: string(),
          requester: {
            ...typed(['object', 'null'], 'Who started the run that waits: their id and how they signed in.'),
            properties: { id: string(), authenticator: string() },
          },
          createdAt: string('When the call started waiting (ISO 8601).'),
          status: {
            type: 'string',
            enum: ['pending', 'expired'],
            description: 'expired: it waited too long and will be denied at the next decide or message.',
          },
        },
        required: ['id', 'tool'],
      },
    },
    nextCursor: typed(['string', 'null'], 'Pass it as cursor to read the next page; null: this is the last one.'),
  },
  required: ['approvals'],
};

const INPUTS = {
  ask: input(
    {
      message: string('The message to the agent.'),
      sessionId: string('The conversation to continue (from an earlier answer).'),
    },
    ['message'],
  ),
  decide: input(
    {
      approvalId: string('The id of the approval.'),
      approved: typed('boolean', 'true runs the tool call; false denies it.'),
      reason: string('Why, recorded with the decision.'),
    },
    ['approvalId', 'approved'],
  ),
  read: input(
    {
      sessionId: string('Only the pending approvals of this conversation (all of them at once).'),
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: 100,
        description: 'How many approvals one page holds, from 1 to 100 (default 20).',
      },
      cursor: string('The nextCursor of the previous page, to read the next one.'),
    },
    [],
  ),
};

/**
 * The tools of `tools/list`: `ask`, `decide` and `read` when a run can wait for an approval, then the agent
 * tools `mcp.tools` exposes that the principal gets (design §36).
 */
export async function listTools(
  agent: McpAgent,
  config: McpConfig,
  principal: Principal | undefined,
): Promise<Record<string, unknown>[]> {
  const builtIn = builtInTools(agent, config);
  if (config.tools === undefined || agent.listTools === undefined) return builtIn;
  const listed = await agent.listTools({ principal, ...(config.tools !== 'agent' && { only: config.tools }) });
  // A tools function may return a tool named ask, decide or read: the route's own tool keeps the name, that one is not offered.
  return [...builtIn, ...listed.filter((tool) => !isBuiltIn(tool.name)).map(agentToolEntry)];
}

const isBuiltIn = (name: string) => name === 'ask' || name === 'decide' || name === 'read';

/**
 * An agent tool as MCP lists it: its name, description and input schema, and an `outputSchema`
 * every answer it gives is valid against. A tool that may ask for approval answers `{ status,
 * sessionId, approvalId? , result? }` (its own output under `result`); one with an output schema
 * of type object answers its output itself; one whose output schema is of another type, `{ result }`.
 */
function agentToolEntry(tool: ToolListing): Record<string, unknown> {
  const outputSchema = toolOutputSchema(tool);
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(outputSchema !== undefined && { outputSchema }),
  };
}

/** How a tool's answers are shaped: with the approval envelope, as its own object, wrapped in `result`, or as text only. */
type AnswerShape = 'approval' | 'own' | 'result' | 'text';

const answerShape = (tool: ToolListing): AnswerShape =>
  tool.mayAwaitApproval
    ? 'approval'
    : tool.outputSchema === undefined
      ? 'text'
      : tool.outputSchema.type === 'object'
        ? 'own'
        : 'result';

function toolOutputSchema(tool: ToolListing): Record<string, unknown> | undefined {
  const result = tool.outputSchema ?? typed(JSON_TYPES, "The tool's output.");
  switch (answerShape(tool)) {
    case 'approval':
      return {
        type: 'object',
        properties: {
          status: { type: 'string', enum: ['completed', 'awaiting-approval'] },
          sessionId: string('The session the call lives in.'),
          approvalId: string('Awaiting approval: call decide with this id to approve or deny the call.'),
          result,
        },
        required: ['status', 'sessionId'],
      };
    case 'own':
      return tool.outputSchema;
    case 'result':
      return { type: 'object', properties: { result }, required: ['result'] };
    default:
      return undefined;
  }
}

/** The name a `tools/call` gives, when it may name an agent tool `mcp.tools` exposes (whether the caller gets it is the agent's to say). */
export function agentToolOf(config: McpConfig, name: unknown): string | undefined {
  if (config.tools === undefined || typeof name !== 'string' || isBuiltIn(name)) return undefined;
  return config.tools === 'agent' || config.tools.includes(name) ? name : undefined;
}

/** The built-in tools: `ask`, and `decide` and `read` when a run can wait for an approval. */
function builtInTools(agent: McpAgent, config: McpConfig): Record<string, unknown>[] {
  const ask = {
    name: 'ask',
    title: `Ask ${config.title ?? config.name}`,
    description: `Sends a message to the agent "${config.name}" and returns its reply. Without sessionId a new conversation starts; pass the sessionId of an earlier answer to continue that one.`,
    inputSchema: INPUTS.ask,
    outputSchema: RUN_OUTPUT,
  };
  if (agent.awaitsApprovals === false) return [ask];
  const decide = {
    name: 'decide',
    title: 'Approve or deny a tool call',
    description: `Approves or denies a tool call the agent "${config.name}" is waiting on (an approval of an ask answer), then returns the agent's reply.`,
    inputSchema: INPUTS.decide,
    outputSchema: RUN_OUTPUT,
  };
  if (agent.readApprovals === undefined) return [ask, decide];
  const read = {
    name: 'read',
    title: 'List pending approvals',
    description: `Lists pending approvals you may decide: tool calls the agent "${config.name}" is waiting on, oldest first, each with the id to pass to decide. Without sessionId, every one you may decide across conversations, a page at a time (limit, then cursor set to the previous page's nextCursor); with sessionId, all of that conversation's. Reading decides nothing.`,
    inputSchema: INPUTS.read,
    outputSchema: READ_OUTPUT,
  };
  return [ask, decide, read];
}

interface CallContext {
  principal: Principal | undefined;
  signal: AbortSignal;
  /** Meters the run's model turns (`limits.tokens`). */
  meter?: TurnMeter | undefined;
  /** Hears the session (and approval) a direct call of an agent tool made. */
  noted?: ((ids: CallIds) => void) | undefined;
}

/** The session and approval a direct tool call made, for the request's record. */
export interface CallIds {
  readonly sessionId?: string;
  readonly approvalId?: string;
}

/** The tool a `tools/call` names, when the agent offers it: `ask`, and `decide` and `read` when a run can wait for an approval. */
export const toolOf = (agent: McpAgent, name: unknown): McpTool | undefined =>
  name === 'ask' ||
  (name === 'decide' && agent.awaitsApprovals !== false) ||
  (name === 'read' && agent.awaitsApprovals !== false && agent.readApprovals !== undefined)
    ? name
    : undefined;

/**
 * Runs `tools/call`, its scopes checked (design §25): `undefined` for a tool that does not exist,
 * else the tool's result. A refused or failed run is a result with `isError: true` whose text is
 * what the HTTP routes would answer: never internals.
 */
export async function callTool(
  agent: McpAgent,
  config: McpConfig,
  name: string,
  args: Record<string, unknown>,
  context: CallContext,
): Promise<ToolResult | Reply | undefined> {
  if (toolOf(agent, name) === undefined)
    return agentToolOf(config, name) === undefined ? undefined : callAgentTool(agent, config, name, args, context);
  const { principal, signal, meter } = context;
  try {
    checkArguments(args, INPUTS[name as keyof typeof INPUTS]);
    if (name === 'ask') {
      const { message, sessionId } = args;
      return runResult(
        await agent.send(message as string, {
          principal,
          signal,
          meter,
          ...(sessionId !== undefined && { sessionId: sessionId as string }),
        }),
      );
    }
    if (name === 'read') {
      const { sessionId, limit, cursor } = args as ApprovalsQuery;
      return readResult(await agent.readApprovals!({ sessionId, limit, cursor }));
    }
    const { approvalId, approved, reason } = args;
    return runResult(
      await agent.decide(approvalId as string, {
        approved: approved as boolean,
        principal,
        signal,
        meter,
        ...(reason !== undefined && { reason: reason as string }),
      }),
    );
  } catch (error) {
    // limits.tokens refused a model turn: the whole request is answered 429, as on every route.
    if ((error as { code?: unknown } | null)?.code === 'TOKEN_LIMIT' || auditUnavailable(error)) throw error;
    return toolError(error);
  }
}

/**
 * `tools/call` of an agent tool (design §36), through the agent's own tool path: `undefined` when
 * the principal does not get the tool (a JSON-RPC error then), else the tool's answer shaped as
 * its listing's `outputSchema` says; arguments the schema refuses, or a failed tool, an `isError` result.
 */
async function callAgentTool(
  agent: McpAgent,
  config: McpConfig,
  name: string,
  args: Record<string, unknown>,
  { principal, signal, noted }: CallContext,
): Promise<ToolResult | undefined> {
  if (agent.listTools === undefined || agent.callTool === undefined) return undefined;
  const only = config.tools === 'agent' ? [name] : (config.tools as readonly string[]).filter((tool) => tool === name);
  let result: ToolCallResult;
  let shape: AnswerShape;
  try {
    const [listing] = await agent.listTools({ principal, only });
    if (listing === undefined) return undefined;
    shape = answerShape(listing);
    result = await agent.callTool(name, args, { principal, signal, only });
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'TOOL_NOT_FOUND') return undefined;
    if (auditUnavailable(error)) throw error;
    return toolError(error);
  }
  if (result.status === 'awaiting-approval') {
    const { approvalId, sessionId } = result;
    noted?.({ sessionId, approvalId });
    return {
      content: [
        {
          type: 'text',
          text: `Waiting for approval: the call of "${name}" waits for a decision (approvalId ${approvalId}); call decide to approve or deny it.`,
        },
      ],
      structuredContent: { status: 'awaiting-approval', approvalId, sessionId },
      isError: false,
    };
  }
  if (result.sessionId !== undefined) noted?.({ sessionId: result.sessionId });
  const content = [{ type: 'text' as const, text: result.text }];
  if (result.isError) return { content, isError: true };
  const structured =
    shape === 'approval'
      ? { status: 'completed', sessionId: result.sessionId, result: result.output }
      : shape === 'own'
        ? (result.output as Record<string, unknown>)
        : shape === 'result'
          ? { result: result.output }
          : undefined;
  return { content, ...(structured !== undefined && { structuredContent: structured }), isError: false };
}

/** The arguments as the tool's input schema says: each of its type, the required ones present and no other; else an `HttpError(400)` naming the first fault. */
function checkArguments(args: Record<string, unknown>, { properties, required }: InputSchema): void {
  for (const key of Object.keys(args)) {
    if (!Object.hasOwn(properties, key))
      throw badRequest(
        `unknown argument ${JSON.stringify(key.slice(0, 64))}; the arguments are ${Object.keys(properties).join(', ')}`,
      );
  }
  for (const [key, { type, minimum, maximum }] of Object.entries(properties)) {
    const value = args[key];
    if (type === 'integer' && value !== undefined) {
      if (!Number.isInteger(value) || (value as number) < minimum! || (value as number) > maximum!)
        throw badRequest(`${key} must be an integer from ${minimum} to ${maximum}`);
      continue;
    }
    if (
      value === undefined
        ? required.includes(key)
        : typeof value !== type || (type === 'string' && value === '' && key !== 'reason')
    ) {
      throw badRequest(`${key} must be ${type === 'string' ? 'a non-empty string' : 'true or false'}`);
    }
  }
}

function runResult(result: RunResult): ToolResult {
  const { sessionId, status, text, approvals } = result;
  const lines = text === '' ? [] : [text];
  for (const approval of approvals)
    lines.push(
      `Waiting for approval: the tool "${approval.tool}" (approvalId ${approval.id}); call decide to approve or deny it.`,
    );
  return {
    content: [{ type: 'text', text: lines.join('\n\n') }],
    structuredContent: {
      sessionId,
      status,
      text,
      approvals: approvals.map(({ id, tool, arguments: args, toolCallId }) => ({
        id,
        tool,
        arguments: args,
        toolCallId,
      })),
    },
    isError: false,
  };
}

/** `read`'s answer: its JSON as structured content, and as text for clients that read text only. */
function readResult(answer: ApprovalsAnswer): ToolResult {
  const structuredContent = { ...answer } as Record<string, unknown>;
  return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent, isError: false };
}

/** A failed call as a tool error: the message the HTTP routes give the same failure (a bug: a generic one, logged there). */
/**
 * `audit.required`: an event of the run that could not be written (the tool did not run) answers
 * the whole request 503, as on every route (design §34), never a tool result.
 */
export const auditUnavailable = (error: unknown): boolean => error instanceof HttpError && error.status === 503;

function toolError(error: unknown): ToolResult {
  const { message } = failureOf(error);
  return { content: [{ type: 'text', text: message }], isError: true };
}
