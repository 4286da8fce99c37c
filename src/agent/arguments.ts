// A tool's arguments (design §21): its parameters as the JSON Schema the model is sent, and the
// model's arguments checked against them before the approval policy and `execute`. A Standard
// Schema validates itself (`~standard.validate`); a plain JSON Schema is checked here on its
// `type`, `required`, `properties`, `enum`, `additionalProperties` and `items` keywords.
import { type Fail, invalidAgent } from './errors.ts';
import type { JsonSchema, Tool, ToolContext } from './types.ts';
import { isRecord } from './shapes.ts';

/**
 * A Standard Schema (zod ≥ 4.2, arktype, valibot through `@valibot/to-json-schema`'s
 * `toStandardJsonSchema`) that also implements Standard JSON Schema: the model is sent
 * `jsonSchema.input({ target: 'draft-2020-12' })`, and the arguments are checked with `validate`.
 */
export interface StandardJsonSchema<Output = unknown> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): unknown;
    readonly jsonSchema: { input(options: { readonly target: 'draft-2020-12' }): Record<string, unknown> };
    readonly types?: { readonly output: Output } | undefined;
  };
}

/** A tool's `parameters`: a JSON Schema object, or a Standard Schema with Standard JSON Schema. */
export type ToolParameters = JsonSchema | StandardJsonSchema;

/** The arguments `execute` and `needsApproval` receive for `parameters`: a Standard Schema's output type, `any` for a JSON Schema. */
export type ToolArguments<P> = P extends { readonly '~standard': { readonly types?: infer T } }
  ? NonNullable<T> extends { readonly output: infer O }
    ? O
    : unknown
  : // biome-ignore lint/suspicious/noExplicitAny: a plain JSON Schema says nothing TypeScript can check, so execute's arguments are whatever the user declares.
    any;

/** A tool whose `execute` (and approval policy) is typed from its `parameters`. */
export interface ToolDefinition<P extends ToolParameters> {
  name: string;
  description: string;
  parameters: P;
  execute(args: ToolArguments<P>, context: ToolContext): unknown | Promise<unknown>;
  needsApproval?: boolean | ((args: ToolArguments<P>) => boolean | Promise<boolean>);
  exposeErrors?: boolean;
  /** The output's schema, listed as the tool's MCP `outputSchema` (design §36). */
  outputSchema?: ToolParameters;
}

const standardOf = (parameters: ToolParameters) => (parameters as Partial<StandardJsonSchema>)['~standard'];

/**
 * The JSON Schema of each Standard Schema, made once (it does not change): a run converts each
 * tool's parameters when it checks its tools and again every model turn, and one conversion costs
 * more than a whole echo send (docs/design.md §30, "Speed tricks and what they bought").
 */
const jsonSchemas = new WeakMap<object, JsonSchema>();

/**
 * The JSON Schema the model is sent for `parameters`; `undefined` when they are neither a JSON
 * Schema object nor a Standard Schema with Standard JSON Schema and `validate` (`fail`'s error,
 * by default `INVALID_AGENT`, for one whose conversion fails).
 */
export function parametersSchema(
  parameters: unknown,
  where: string,
  fail: Fail = invalidAgent,
): JsonSchema | undefined {
  // An arktype type is a function with ~standard; a JSON Schema is an object.
  if ((typeof parameters !== 'object' || parameters === null) && typeof parameters !== 'function') return undefined;
  const standard = standardOf(parameters as ToolParameters);
  if (standard === undefined)
    return typeof parameters === 'object' && parameters !== null ? (parameters as JsonSchema) : undefined;
  if (typeof standard?.validate !== 'function' || typeof standard.jsonSchema?.input !== 'function') return undefined;
  let schema = jsonSchemas.get(parameters);
  if (schema === undefined) {
    try {
      schema = standard.jsonSchema.input({ target: 'draft-2020-12' });
    } catch {
      // Checked below: a conversion that throws is one that returned nothing.
    }
    if (typeof schema !== 'object' || schema === null)
      throw fail(`${where}: ~standard.jsonSchema.input() gave no JSON Schema`);
    jsonSchemas.set(parameters, schema);
  }
  return schema;
}

type Path = readonly (PropertyKey | { readonly key: PropertyKey })[];
export interface Issue {
  readonly message: string;
  readonly path?: Path | undefined;
}

const MAX_ISSUES = 10;

/**
 * The arguments a call runs with (`value`: what the schema's validation returned, a copy of the
 * model's), or the reason they are refused: `tool "<name>": invalid arguments: <path>: <message>; …`.
 * A message that quotes the value it refused (valibot's `… but received "…"`) is shown as `invalid`.
 */
export async function checkArguments(tool: Tool, args: unknown): Promise<{ value: unknown } | { invalid: string }> {
  const standard = standardOf(tool.parameters);
  let issues: readonly Issue[] | undefined = pollutingKeys(args);
  let value = structuredClone(args);
  if (issues !== undefined) {
    // Refused whatever the schema says (design §26): execute receives plain data only.
  } else if (standard === undefined) {
    const found: Issue[] = [];
    schemaIssues(tool.parameters as JsonSchema, value, [], found);
    if (found.length > 0) issues = found;
  } else {
    const result = (await standard.validate(value)) as { value?: unknown; issues?: readonly Issue[] };
    if (result.issues === undefined) value = result.value;
    else issues = result.issues;
  }
  if (issues === undefined) return { value };
  const described = issues.slice(0, MAX_ISSUES).map((issue) => describe(issue, args));
  return {
    invalid: `tool "${tool.name}": invalid arguments: ${described.join('; ')}${issues.length > MAX_ISSUES ? '; …' : ''}`,
  };
}

function describe({ message, path = [] }: Issue, args: unknown): string {
  // Array.from, not map: a library's path may be an Array subclass (arktype's) whose map builds one of its own.
  const keys = Array.from(path, (step) => (typeof step === 'object' && step !== null ? step.key : step));
  let value = args;
  for (const key of keys)
    value = typeof value === 'object' && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  const text = typeof message !== 'string' || quotes(message, value) ? 'invalid' : message.slice(0, 200);
  const at = keys.map(String).join('.').slice(0, 100);
  return at === '' ? text : `${at}: ${text}`;
}

/** Whether `message` holds the value, or one of the first primitives inside it, as text or as JSON. */
function quotes(message: string, value: unknown): boolean {
  const leaves: unknown[] = [value];
  for (let i = 0; i < leaves.length; i++) {
    const leaf = leaves[i];
    if (typeof leaf === 'object' && leaf !== null) {
      for (const member of Object.values(leaf)) if (leaves.length < 100) leaves.push(member);
    } else if (
      leaf !== undefined &&
      leaf !== null &&
      (message.includes(String(leaf)) || (typeof leaf === 'string' && message.includes(JSON.stringify(leaf))))
    ) {
      return true;
    }
  }
  return false;
}

/** Keys that reach or replace a prototype when code copies or merges the arguments (design §26). */
const POLLUTING = new Set(['__proto__', 'constructor', 'prototype']);

/** The paths of the own keys `__proto__`, `constructor` and `prototype` at any depth (the first eleven: ten are named), or `undefined`. */
function pollutingKeys(args: unknown): Issue[] | undefined {
  const found: Issue[] = [];
  const queue: [unknown, PropertyKey[]][] = [[args, []]];
  for (let next = 0; next < queue.length && found.length <= MAX_ISSUES; next++) {
    const [value, path] = queue[next]!;
    if (typeof value !== 'object' || value === null) continue;
    for (const key of Object.keys(value)) {
      const at = [...path, Array.isArray(value) ? Number(key) : key];
      if (POLLUTING.has(key)) found.push({ path: at, message: 'is not allowed' });
      else queue.push([(value as Record<string, unknown>)[key], at]);
    }
  }
  return found.length > 0 ? found : undefined;
}

/** The issues of `value` under a plain JSON Schema (its `type`, `required`, `properties`, `enum`, `additionalProperties`, `items`). */
export function jsonSchemaIssues(schema: JsonSchema, value: unknown): Issue[] {
  const issues: Issue[] = [];
  schemaIssues(schema, value, [], issues);
  return issues;
}

/** Whether `value` is of the JSON Schema type `name` (a name it does not know passes). */
const isType = (value: unknown, name: unknown): boolean =>
  name === 'integer'
    ? Number.isInteger(value)
    : name === 'array'
      ? Array.isArray(value)
      : name === 'null'
        ? value === null
        : name === 'object'
          ? isRecord(value)
          : typeof name !== 'string' || !['string', 'number', 'boolean'].includes(name) || typeof value === name;

/** The issues of `value` under a plain JSON Schema's `type`, `enum`, `required`, `properties`, `additionalProperties` and `items`. */
function schemaIssues(schema: unknown, value: unknown, path: PropertyKey[], issues: Issue[]): void {
  if (schema === false) issues.push({ path, message: 'is not allowed' });
  if (!isRecord(schema) || issues.length > MAX_ISSUES) return;
  const { type, enum: allowed, required, properties, additionalProperties, items } = schema;
  const types = typeof type === 'string' ? [type] : Array.isArray(type) ? type : undefined;
  if (types !== undefined && !types.some((name) => isType(value, name))) {
    issues.push({ path, message: `expected ${types.join(' or ')}` });
    return;
  }
  if (Array.isArray(allowed) && !allowed.some((option) => JSON.stringify(option) === JSON.stringify(value))) {
    issues.push({ path, message: `must be one of ${JSON.stringify(allowed).slice(1, -1).slice(0, 200)}` });
  }
  if (isRecord(value)) {
    for (const key of Array.isArray(required) ? required : []) {
      if (typeof key === 'string' && !Object.hasOwn(value, key))
        issues.push({ path: [...path, key], message: 'is required' });
    }
    for (const key of Object.keys(value)) {
      const known = isRecord(properties) && Object.hasOwn(properties, key);
      const sub = known ? properties[key] : additionalProperties;
      if (known || sub !== undefined) schemaIssues(sub, value[key], [...path, key], issues);
    }
  }
  if (Array.isArray(value) && (isRecord(items) || items === false)) {
    for (const [index, item] of value.entries()) schemaIssues(items, item, [...path, index], issues);
  }
}
