// The options of createAgent and of the agent's calls: names, defaults and checks. Option
// objects are closed (design §14): a misspelled key is an error, never a silent default.
import { checkOptionNames } from '../auth/internal.ts';
import { invalidAgent, invalidInput } from './errors.ts';
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

export const notAModel = (what: string) =>
  invalidAgent(`${what} must be a Model or an AI SDK language model (specificationVersion 'v3' or 'v4')`);
/** A createAgent option that cannot work. */
export const invalidOption = (what: string) => invalidAgent(`createAgent(): ${what}`);

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
];
export const SEND_OPTION_NAMES = ['principal', 'sessionId', 'metadata', 'signal', 'onEvent', 'onUsage'];
export const DECIDE_OPTION_NAMES = ['approved', 'reason', 'principal', 'signal', 'onEvent', 'onUsage'];

export function checkPositive(value: number, option: string): void {
  if (!Number.isInteger(value) || value < 1) throw invalidOption(`${option} must be a positive integer`);
}

/** `limits.sessionBytes`, or its default. */
export function readLimits(value: unknown): number {
  if (value === undefined) return DEFAULT_SESSION_BYTES;
  if (typeof value !== 'object' || value === null) throw invalidOption('limits must be { sessionBytes? }');
  checkOptionNames('createAgent(): limits', value, ['sessionBytes'], invalidAgent);
  const { sessionBytes = DEFAULT_SESSION_BYTES } = value as { sessionBytes?: unknown };
  if (!Number.isInteger(sessionBytes) || (sessionBytes as number) < 1024)
    throw invalidOption('limits.sessionBytes must be a whole number of bytes, 1024 or more');
  return sessionBytes as number;
}

export function checkHook(hook: unknown): UsageHook | undefined {
  if (hook !== undefined && typeof hook !== 'function') throw invalidInput('onUsage must be a function');
  return hook as UsageHook | undefined;
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
