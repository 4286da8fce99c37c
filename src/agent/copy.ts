import { isPlainObject } from './tools.ts';
import type { Message } from './types.ts';

const isPrimitive = (value: unknown) =>
  (typeof value !== 'object' || value === null) && typeof value !== 'function' && typeof value !== 'symbol';

/**
 * A deep copy of a plain object, equal to `structuredClone(value)`, for the records the agent
 * hands across its boundary (messages, events, approvals): their members are mostly strings,
 * kept as they are, and only the members that are objects go through `structuredClone`.
 * Anything else (not a plain object, an own `__proto__` key) is `structuredClone`d whole.
 * Unlike one `structuredClone` of the whole, an object reachable from two members becomes two
 * copies. Far cheaper than `structuredClone` for these records (docs/design.md §30, "Speed tricks and what they bought").
 */
export function copyRecord<T>(value: T): T {
  if (!isPlainObject(value)) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return structuredClone(value);
    const member = value[key];
    copy[key] = isPrimitive(member) ? member : structuredClone(member);
  }
  return copy as T;
}

/** A deep copy of a transcript: what the model, the caller and the store each get, so none can change another's. */
export const copyMessages = (messages: readonly Message[]): Message[] => messages.map((message) => copyRecord(message));
