import { completePrincipal, deepFreeze, kindOf } from '../auth/internal.ts';
import { invalidInput } from './errors.ts';
import { isPlainObject } from './tools.ts';
import type { DecidedBy, Principal, RunContext } from './types.ts';

/**
 * The frozen run context. `principal` comes only from the verified principal passed in the
 * options (or kept in a checkpoint), never from `metadata`: a `principal` key there is data.
 */
export function runContext(
  principal: Principal | undefined,
  sessionId: string,
  metadata: Readonly<Record<string, unknown>>,
): RunContext {
  return Object.freeze(principal === undefined ? { sessionId, metadata } : { principal, sessionId, metadata });
}

/** A principal as the auth layer hands it out (frozen, claims deeply); `INVALID_INPUT` for anything else. */
export function checkPrincipal(call: string, value: unknown, what = 'principal'): Principal | undefined {
  if (value === undefined) return undefined;
  const principal = completePrincipal(value);
  if (principal === null)
    throw invalidInput(
      `${call}: ${what} must be a principal ({ id, type: 'user' | 'service', authenticator, issuer?, claims? }); got ${kindOf(value)}`,
    );
  return principal;
}

/** A deeply frozen JSON copy of the caller's metadata (it is stored with checkpoints). */
export function checkMetadata(call: string, value: unknown): Readonly<Record<string, unknown>> {
  if (value === undefined) return Object.freeze({});
  if (!isPlainObject(value)) throw invalidInput(`${call}: metadata must be a plain object; got ${kindOf(value)}`);
  let copy: Record<string, unknown>;
  try {
    copy = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
  } catch {
    throw invalidInput(`${call}: metadata must be JSON-serializable`);
  }
  return deepFreeze(copy);
}

const SESSION_ID = /^[^\s\p{Cc}]{1,256}$/u;

/** A caller-chosen session id: 1 to 256 characters, no whitespace or control characters. */
export function checkSessionId(call: string, value: unknown): string {
  if (typeof value !== 'string' || !SESSION_ID.test(value)) {
    throw invalidInput(
      `${call}: sessionId must be 1 to 256 characters without whitespace or control characters; got ${kindOf(value)}`,
    );
  }
  return value;
}

/** What a record keeps of a principal (design §33): its id, authenticator and issuer; never its claims or token. */
export function personOf(principal: Principal): DecidedBy {
  const person: DecidedBy = { id: principal.id, authenticator: principal.authenticator };
  if (principal.issuer !== undefined) person.issuer = principal.issuer;
  return person;
}
