// The options of createAgent and of the agent's calls: names, defaults and checks. Option
// objects are closed (design §14): a misspelled key is an error, never a silent default. A
// factory's options that cannot work are `AuthConfigError` (design §30), a call's `INVALID_INPUT`.
import { checkOptionNames, kindOf } from '../auth/internal.ts';
import { configError, invalidInput } from './errors.ts';
import { isPlainObject } from './tools.ts';
import { aiSdkModel, isAiSdkModel } from './models/ai-sdk.ts';
import type { Model, UsageHook } from './types.ts';

export const DEFAULT_MAX_STEPS = 10;
/** Default of `maxPendingApprovals`: approvals one principal may have pending at once. */
export const DEFAULT_MAX_PENDING_APPROVALS = 100;
/** The default bound of a session's stored record (design §19). */
export const DEFAULT_SESSION_BYTES = 4 * 1024 * 1024;

/** The model of a run: this library's `Model`, or an AI SDK language model adapted to one. */
export const runModel = (model: unknown): Model | undefined =>
  typeof (model as Model | null)?.generate === 'function'
    ? (model as Model)
    : isAiSdkModel(model)
      ? aiSdkModel(model)
      : undefined;

/** What is said of `what` when it is neither kind of model. */
export const notAModel = (what: string) =>
  `${what} must be a Model or an AI SDK language model (specificationVersion 'v3' or 'v4')`;
/** A createAgent option that cannot work. */
export const CREATE_AGENT = 'createAgent()';
export const invalidOption = (what: string) => configError(`${CREATE_AGENT}: ${what}`);

/**
 * A factory that takes no options, or none past its positional argument (`echoModel()`,
 * `fileStore(dir)`), given some: an object with keys, or anything but an object, throws, since
 * a JavaScript caller's `echoModel({ delay: 10 })` must not be ignored without a word.
 */
export function refuseOptions(factory: string, options: unknown): void {
  if (options === undefined) return;
  if (!isPlainObject(options))
    throw configError(`${factory}: options must be absent (it takes none); got ${kindOf(options)}`);
  const [key] = Object.keys(options);
  if (key !== undefined)
    throw configError(`${factory}: unknown option ${JSON.stringify(key.slice(0, 64))} (it takes none)`);
}

/** The methods every `Store` has (design §10's contract); the others are optional. */
export const STORE_METHODS = [
  'loadSession',
  'saveSession',
  'loadCheckpoint',
  'saveCheckpoint',
  'deleteCheckpoint',
  'listCheckpoints',
  'loadMemory',
  'appendMemory',
] as const;

/** Throws unless `store` has every method a `Store` must have; `where` names the option (`createAgent(): store`). */
export function checkStore(store: unknown, where: string): void {
  const missing = STORE_METHODS.filter(
    (name) => typeof (store as Record<string, unknown> | null)?.[name] !== 'function',
  );
  if (missing.length > 0)
    throw configError(
      `${where} must be a Store (memoryStore(), fileStore(), postgresStore()…); got ${kindOf(store)} without ${missing.join(', ')}`,
    );
}

export const AGENT_OPTION_NAMES = [
  'name',
  'model',
  'instructions',
  'tools',
  'settings',
  'memory',
  'store',
  'maxSteps',
  'sessions',
  'maxPendingApprovals',
  'limits',
  'telemetry',
];
export const SEND_OPTION_NAMES = ['principal', 'sessionId', 'metadata', 'signal', 'onEvent', 'onUsage', 'meter'];
export const DECIDE_OPTION_NAMES = ['approved', 'reason', 'principal', 'signal', 'onEvent', 'onUsage', 'meter'];

export function checkPositive(value: number, option: string): void {
  if (!Number.isInteger(value) || value < 1) throw invalidOption(`${option} must be a positive integer`);
}

/** `limits.sessionBytes`, or its default. */
export function readLimits(value: unknown): number {
  if (value === undefined) return DEFAULT_SESSION_BYTES;
  if (typeof value !== 'object' || value === null) throw invalidOption('limits must be { sessionBytes? }');
  checkOptionNames(`${CREATE_AGENT}: limits`, value, ['sessionBytes']);
  const { sessionBytes = DEFAULT_SESSION_BYTES } = value as { sessionBytes?: unknown };
  if (!Number.isInteger(sessionBytes) || (sessionBytes as number) < 1024)
    throw invalidOption('limits.sessionBytes must be a whole number of bytes, 1024 or more');
  return sessionBytes as number;
}

export function checkHook<T = UsageHook>(call: string, hook: unknown, name = 'onUsage'): T | undefined {
  if (hook !== undefined && typeof hook !== 'function')
    throw invalidInput(`${call}: ${name} must be a function; got ${kindOf(hook)}`);
  return hook as T | undefined;
}

/** A call's options: absent, or an object of known keys only (a misspelled `principal` must not make the call trusted server code). */
export function callOptions<T extends object>(
  call: string,
  options: T | undefined,
  known: readonly string[],
): T | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) throw invalidInput(`${call}: options must be an object`);
  checkOptionNames(call, options, known, invalidInput);
  return options;
}
