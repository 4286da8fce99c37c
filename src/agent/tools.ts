import { checkOptionNames, kindOf } from '../auth/internal.ts';
import {
  checkArguments,
  parametersSchema,
  type ToolArguments,
  type ToolDefinition,
  type ToolParameters,
} from './arguments.ts';
import {
  adaptAiSdkTool,
  aiSdkToolOf,
  approvalOptions,
  isApprovalPolicy,
  looksLikeAiSdkTool,
  runAiSdkTool,
} from './ai-sdk-tools.ts';
import { configError, type Fail, invalidAgent } from './errors.ts';
import type { JsonSchema, Message, RunEvent, Tool, ToolCall, ToolContext, ToolListing, ToolSpec } from './types.ts';
import { isNonEmptyString, isRecord } from './shapes.ts';

const TOOL_FIELDS = ['name', 'description', 'parameters', 'execute', 'needsApproval', 'exposeErrors', 'outputSchema'];

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

/**
 * Whether an element of a `tools` array is one tool (this library's, or an AI SDK tool given
 * without its name) rather than a record of tools: a tool has a string `name` or an `execute`
 * function, and a record of tools has tools as its values.
 */
const isOneTool = (value: unknown): boolean =>
  !isPlainObject(value) ||
  typeof value.name === 'string' ||
  typeof value.execute === 'function' ||
  looksLikeAiSdkTool(value);

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
      } else if (isPlainObject(tool) && 'parameters' in tool)
        throw fail(
          `${source}: "${name.slice(0, 100)}" is not a tool of that name (its name is ${JSON.stringify(tool.name)})`,
        );
      else
        throw fail(
          `${source}: "${name.slice(0, 100)}" is not an AI SDK tool (tool({ description, inputSchema, execute })); got ${kindOf(tool)}`,
        );
    }
  };
  if (Array.isArray(tools)) {
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
    throw fail(
      `${source} must be an array of tools, or a record of AI SDK tools (a ToolSet: { weather: tool({ description, inputSchema, execute }) }, as @ai-sdk/mcp's client.tools() returns), or an array of records, one per source: [local, remote]; got ${kindOf(tools)}`,
    );
  }
  return byName;
}

/** Checks one tool's fields and returns its name. */
function checkTool(tool: unknown, source: string, fail: Fail): string {
  const { name, description, parameters, execute, needsApproval, exposeErrors, outputSchema } = (tool ??
    {}) as Partial<Tool>;
  if (!isNonEmptyString(name)) throw fail(`${source}: every tool needs a name`);
  const where = `${source}: tool "${name}"`;
  // A misspelled needsApproval would run the tool unapproved.
  checkOptionNames(where, tool as object, TOOL_FIELDS, fail);
  if (typeof description !== 'string') throw fail(`${where} needs a description; got ${kindOf(description)}`);
  if (parametersSchema(parameters, where, fail) === undefined)
    throw fail(
      `${where} needs parameters: a JSON Schema object, or a Standard Schema with Standard JSON Schema (zod 4.2 or later, arktype, valibot through toStandardJsonSchema); got ${kindOf(parameters)}`,
    );
  if (typeof execute !== 'function') throw fail(`${where} needs an execute function; got ${kindOf(execute)}`);
  if (!isApprovalPolicy(needsApproval))
    throw fail(`${where} needs needsApproval as a boolean or a function; got ${kindOf(needsApproval)}`);
  if (exposeErrors !== undefined && typeof exposeErrors !== 'boolean')
    throw fail(`${where} needs exposeErrors as a boolean; got ${kindOf(exposeErrors)}`);
  if (outputSchema !== undefined && parametersSchema(outputSchema, `${where}: outputSchema`, fail) === undefined)
    throw fail(
      `${where} needs outputSchema, when given, as a JSON Schema object or a Standard Schema with Standard JSON Schema; got ${kindOf(outputSchema)}`,
    );
  return name;
}

export function toolSpecs(tools: Map<string, Tool>): ToolSpec[] {
  return [...tools.values()].map(({ name, description, parameters }) => ({
    name,
    description,
    parameters: structuredClone(parametersSchema(parameters, name)!),
  }));
}

/**
 * A tool as a caller may call it directly (design §36): its name, description, input JSON Schema
 * (as the model is sent it), its output's JSON Schema where it has one (this library's
 * `outputSchema`, or an AI SDK tool's, converted as `parameters` are), and whether a call may
 * wait for an approval.
 */
export async function toolListing(tool: Tool): Promise<ToolListing> {
  const inputSchema = structuredClone(parametersSchema(tool.parameters, tool.name)!);
  const listing: { -readonly [K in keyof ToolListing]: ToolListing[K] } = {
    name: tool.name,
    description: tool.description,
    inputSchema,
    mayAwaitApproval: tool.needsApproval !== undefined && tool.needsApproval !== false,
  };
  const output = await outputSchemaOf(tool);
  if (output !== undefined) listing.outputSchema = output;
  return listing;
}

/** The JSON Schema of a tool's output: a JSON Schema object, a Standard Schema's, or an AI SDK `jsonSchema()`'s. */
async function outputSchemaOf(tool: Tool): Promise<JsonSchema | undefined> {
  const raw = (aiSdkToolOf(tool) as { outputSchema?: unknown } | undefined)?.outputSchema ?? tool.outputSchema;
  if (raw === undefined || raw === null) return undefined;
  const schema = typeof raw === 'function' && !('~standard' in raw) ? (raw as () => unknown)() : raw;
  if (
    typeof schema === 'object' &&
    schema !== null &&
    (schema as Record<PropertyKey, unknown>)[Symbol.for('vercel.ai.schema')] === true
  ) {
    const resolved: unknown = await (schema as { jsonSchema: unknown }).jsonSchema;
    return typeof resolved === 'object' && resolved !== null ? structuredClone(resolved as JsonSchema) : undefined;
  }
  const standard = (schema as { '~standard'?: { jsonSchema?: { output?: (options: object) => unknown } } })?.[
    '~standard'
  ];
  if (typeof standard?.jsonSchema?.output === 'function') {
    const converted = standard.jsonSchema.output({ target: 'draft-2020-12' });
    return typeof converted === 'object' && converted !== null ? (converted as JsonSchema) : undefined;
  }
  const converted = parametersSchema(schema, `tool "${tool.name}": outputSchema`);
  return converted === undefined ? undefined : structuredClone(converted);
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
  if (typeof tool.needsApproval !== 'function') return tool.needsApproval === true;
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
  if (typeof answer !== 'boolean')
    return failure(call, `the approval policy of "${tool.name}" did not answer a boolean`);
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
    text = typeof raw === 'string';
    content = typeof raw === 'string' ? raw : JSON.stringify(raw ?? null);
    // The event carries what the model sees: the string itself, or the output's JSON form.
    output = typeof raw === 'string' || content === undefined ? content : JSON.parse(content);
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
