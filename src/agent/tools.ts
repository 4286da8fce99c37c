import { checkOptionNames } from '../auth/internal.ts';
import {
  checkArguments,
  parametersSchema,
  type ToolArguments,
  type ToolDefinition,
  type ToolParameters,
} from './arguments.ts';
import {
  adaptAiSdkTool,
  AI_SDK_TOOL_CALL,
  aiSdkToolOf,
  APPROVAL_POLICY,
  approvalOptions,
  isApprovalPolicy,
  looksLikeAiSdkTool,
  runAiSdkTool,
} from './ai-sdk-tools.ts';
import { configError, type Fail, invalidAgent } from './errors.ts';
import type { Message, RunEvent, Tool, ToolCall, ToolContext, ToolSpec } from './types.ts';
import { isArray, isBoolean, isFunction, isNonEmptyString, isRecord, isString } from './shapes.ts';

const TOOL_FIELDS = ['name', 'description', 'parameters', 'execute', 'needsApproval', 'exposeErrors'];

/**
 * Declares a tool whose `execute` receives its arguments typed from the schema (a Standard
 * Schema's output type: zod, arktype, valibot with `toStandardJsonSchema`). The arguments are
 * validated before `needsApproval` and `execute` run. The definition is checked now, as
 * `createAgent` checks its tools: what cannot work throws `AuthConfigError`.
 * @example
 * const weather = tool({
 *   name: 'weather',
 *   description: 'Current weather of a city',
 *   parameters: z.object({ city: z.string() }),
 *   execute: async ({ city }) => ({ city, celsius: 21 }), // city: string
 * });
 */
export function tool<P extends ToolParameters>(definition: ToolDefinition<P>): Tool<ToolArguments<P>> {
  checkTool(definition, 'tool()', configError);
  return definition as Tool<ToolArguments<P>>;
}

const TOOLS_SHAPE = `an array of tools, or a record of AI SDK tools (a ToolSet: { weather: ${AI_SDK_TOOL_CALL} }) }, as @ai-sdk/mcp's client.tools() returns), or an array of records, one per source: [local, remote]`;

/**
 * Whether an element of a `tools` array is one tool (this library's, or an AI SDK tool given
 * without its name) rather than a record of tools: a tool has a string `name` or an `execute`
 * function, and a record of tools has tools as its values.
 */
const isOneTool = (value: unknown): boolean =>
  !isPlainObject(value) || isString(value.name) || isFunction(value.execute) || looksLikeAiSdkTool(value);

/**
 * Checks the tools (names unique, `execute` a function, no unknown field) and indexes them by
 * name; `source` names them in errors, `fail` makes them (createAgent's tools are checked at
 * creation with `configError`, a tools function's result at run time with `INVALID_AGENT`). An
 * array holds this library's tools, or records of tools, one per source (`[local, remote]`); a
 * record (a `ToolSet`) holds AI SDK tools, its keys their names (design §27), or this library's
 * tools under their own names. One name given twice is refused, never one tool hiding another:
 * a remote server's `deploy` must not stand in for the local one that asks for approval.
 */
export function indexTools(
  tools: unknown,
  reserved: readonly string[],
  source: string,
  fail: Fail = invalidAgent,
): Map<string, Tool> {
  const byName = new Map<string, Tool>();
  /** Where each name was given: `tools[i]` for an element of an array, `tools` for a record. */
  const givenIn = new Map<string, string>();
  const add = (tool: Tool, where: string) => {
    const first = givenIn.get(tool.name);
    if (first !== undefined || reserved.includes(tool.name))
      throw fail(
        `${source}: tool "${tool.name}" needs a unique name${first === undefined ? '' : ` (given in ${first} and ${where}; remoteTools(tools, { prefix }) prefixes a remote server's tools)`}`,
      );
    byName.set(tool.name, tool);
    givenIn.set(tool.name, where);
  };
  const addRecord = (record: Record<string, unknown>, where: string) => {
    for (const [name, tool] of Object.entries(record)) {
      if (looksLikeAiSdkTool(tool)) add(adaptAiSdkTool(tool as object, name, source, fail), where);
      else if (isPlainObject(tool) && 'parameters' in tool && tool.name === name) {
        checkTool(tool, source, fail);
        add(tool as unknown as Tool, where);
      } else
        throw fail(
          `${source}: "${name.slice(0, 100)}" is not ${isPlainObject(tool) && 'parameters' in tool ? `a tool of that name (its name is ${JSON.stringify(tool.name)})` : `an AI SDK tool (${AI_SDK_TOOL_CALL} }))`}`,
        );
    }
  };
  if (isArray(tools)) {
    for (const [index, tool] of (tools as unknown[]).entries()) {
      const where = `tools[${index}]`;
      if (!isOneTool(tool)) {
        addRecord(tool as Record<string, unknown>, where);
        continue;
      }
      if (looksLikeAiSdkTool(tool))
        throw fail(
          `${source}: an AI SDK tool (inputSchema) has no name of its own: give AI SDK tools as a record whose keys are their names (a ToolSet): { weather: tool({ … }) }`,
        );
      checkTool(tool, source, fail);
      add(tool as Tool, where);
    }
  } else if (isPlainObject(tools)) {
    addRecord(tools, 'tools');
  } else {
    throw fail(`${source} must be ${TOOLS_SHAPE}`);
  }
  return byName;
}

/** Checks one tool's fields and returns its name. */
function checkTool(tool: unknown, source: string, fail: Fail): string {
  const { name, description, parameters, execute, needsApproval, exposeErrors } = (tool ?? {}) as Partial<Tool>;
  if (!isNonEmptyString(name)) throw fail(`${source}: every tool needs a name`);
  const where = `${source}: tool "${name}"`;
  // A misspelled needsApproval would run the tool unapproved.
  checkOptionNames(where, tool as object, TOOL_FIELDS, fail);
  const problem = !isString(description)
    ? 'a description'
    : parametersSchema(parameters, where, fail) === undefined
      ? 'parameters: a JSON Schema object, or a Standard Schema with Standard JSON Schema (zod 4.2 or later, arktype, valibot through toStandardJsonSchema)'
      : !isFunction(execute)
        ? 'an execute function'
        : !isApprovalPolicy(needsApproval)
          ? APPROVAL_POLICY
          : exposeErrors !== undefined && !isBoolean(exposeErrors)
            ? 'exposeErrors as a boolean'
            : undefined;
  if (problem) throw fail(`${where} needs ${problem}`);
  return name;
}

export function toolSpecs(tools: Map<string, Tool>): ToolSpec[] {
  return [...tools.values()].map(({ name, description, parameters }) => ({
    name,
    description,
    parameters: structuredClone(parametersSchema(parameters, name)!),
  }));
}

export type Answer = { message: Message; event: RunEvent };

/**
 * What a tool's own failure (its `execute` or its approval policy threw) shows the model, the
 * transcript and the caller: `tool "<name>" failed`, unless the tool opts in with
 * `exposeErrors: true`. The error itself goes to the server log, since its text may hold
 * anything (a connection string with its password). `part`: what threw, when not `execute`.
 */
function toolFailure(tool: Tool, call: ToolCall, error: unknown, part?: 'its approval policy' | 'its schema'): Answer {
  const detail = part === undefined ? messageOf(error) : `${part} of "${tool.name}" failed: ${messageOf(error)}`;
  if (tool.exposeErrors === true) return failure(call, detail);
  console.error(`agentward: tool "${tool.name}" failed${part === undefined ? '' : ` (${part})`}`, error);
  return failure(call, `tool "${tool.name}" failed`);
}

/** The answer to `call`: its tool message with `content`, and the event of `type` (with `detail`) that says so. */
const answer = (call: ToolCall, content: string, type: string, detail?: object): Answer => ({
  message: { role: 'tool', toolCallId: call.id, content },
  event: { type, toolCallId: call.id, ...detail } as RunEvent,
});

const failure = (call: ToolCall, error: string): Answer => answer(call, `Error: ${error}`, 'tool-error', { error });

/** The call's arguments checked against the tool's parameters: `{ value }` to run with, or the answer refusing them. */
async function validArguments(tool: Tool, call: ToolCall): Promise<{ value: unknown } | Answer> {
  let checked: { value: unknown } | { invalid: string };
  try {
    checked = await checkArguments(tool, call.arguments);
  } catch (error) {
    return toolFailure(tool, call, error, 'its schema');
  }
  return 'invalid' in checked ? failure(call, checked.invalid) : checked;
}

/**
 * Asks the tool's approval policy, with the arguments only, once they are valid: invalid ones
 * are answered at once, never put to a person. A policy that throws or answers anything but a
 * boolean never lets its tool run: the call is answered with that failure.
 */
export async function approvalNeeded(
  tool: Tool,
  call: ToolCall,
  messages: readonly Message[],
): Promise<boolean | Answer> {
  if (tool.needsApproval === undefined || tool.needsApproval === false) return false;
  const checked = await validArguments(tool, call);
  if (!('value' in checked)) return checked;
  if (!isFunction(tool.needsApproval)) return tool.needsApproval === true;
  let answer: unknown;
  try {
    // An AI SDK tool's policy also receives { toolCallId, messages, context } (design §27); never the principal.
    const sdk = aiSdkToolOf(tool);
    answer =
      sdk === undefined
        ? await tool.needsApproval(checked.value)
        : await (sdk.needsApproval as (input: unknown, options: unknown) => unknown)(
            checked.value,
            approvalOptions(call, messages),
          );
  } catch (error) {
    return toolFailure(tool, call, error, 'its approval policy');
  }
  if (!isBoolean(answer)) return failure(call, `the approval policy of "${tool.name}" did not answer a boolean`);
  return answer;
}

/** Runs one call (its arguments checked first) and turns whatever happens (output, throw, invalid arguments, unknown tool) into its tool message. */
export async function runTool(
  tool: Tool | undefined,
  call: ToolCall,
  context: ToolContext,
  messages: readonly Message[],
): Promise<Answer> {
  if (tool === undefined) return failure(call, `unknown tool "${call.name}"`);
  const checked = await validArguments(tool, call);
  if (!('value' in checked)) return checked;
  let content: string | undefined;
  let output: unknown;
  let text = false;
  try {
    const sdk = aiSdkToolOf(tool);
    const raw =
      sdk === undefined
        ? await tool.execute(checked.value, context)
        : await runAiSdkTool(sdk, checked.value, call, messages, context.signal);
    text = isString(raw);
    content = isString(raw) ? raw : JSON.stringify(raw ?? null);
    // The event carries what the model sees: the string itself, or the output's JSON form.
    output = isString(raw) || content === undefined ? content : JSON.parse(content);
  } catch (error) {
    return toolFailure(tool, call, error);
  }
  if (content === undefined) return failure(call, `the output of "${tool.name}" is not JSON`);
  const result = answer(call, content, 'tool-result', { output });
  // Not a string: the model is told the value (an AI SDK model as `{ type: 'json' }`, as generateText sends it).
  if (!text) result.message = { ...result.message, json: true } as Message;
  return result;
}

/** An approved call whose tool the re-made run no longer offers (design §33): it does not run. */
export const unavailable = (call: ToolCall): Answer => failure(call, 'tool-unavailable');

export function denial(call: ToolCall, reason: string | undefined): Answer {
  const content = reason ? `Denied by the user: ${reason}` : 'Denied by the user.';
  return answer(call, content, 'tool-denied', reason ? { reason } : undefined);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
