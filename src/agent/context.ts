import { completePrincipal, deepFreeze } from '../auth/internal.ts';
import { invalidInput } from './errors.ts';
import { isPlainObject } from './tools.ts';
import type { DecidedBy, Principal, RunContext } from './types.ts';
import { freeze, isString } from './shapes.ts';

/**
 * The frozen run context. `principal` comes only from the verified principal passed in the
 * options (or kept in a checkpoint), never from `metadata`: a `principal` key there is data.
 */
export function runContext(
  principal: Principal | undefined,
  sessionId: string,
  metadata: Readonly<Record<string, unknown>>,
): RunContext {
  return freeze(principal === undefined ? { sessionId, metadata } : { principal, sessionId, metadata });
}

/** A principal as the auth layer hands it out (frozen, claims deeply); `INVALID_INPUT` for anything else. */
export function checkPrincipal(value: unknown, what = 'principal'): Principal | undefined {
  if (value === undefined) return undefined;
  const principal = completePrincipal(value);
  if (principal === null)
    throw invalidInput(
      `${what} must be a principal ({ id, type: 'user' | 'service', authenticator, issuer?, claims? })`,
    );
  return principal;
}

/** A deeply frozen JSON copy of the caller's metadata (it is stored with checkpoints). */
export function checkMetadata(value: unknown): Readonly<Record<string, unknown>> {
  if (value === undefined) return freeze({});
  if (!isPlainObject(value)) throw invalidInput('metadata must be a plain object');
  let copy: Record<string, unknown>;
  try {
    copy = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
  } catch {
    throw invalidInput('metadata must be JSON-serializable');
  }
  return deepFreeze(copy);
}

const SESSION_ID = /^[^\s\p{Cc}]{1,256}$/u;

/** A caller-chosen session id: 1 to 256 characters, no whitespace or control characters. */
export function checkSessionId(value: unknown): string {
  if (!isString(value) || !SESSION_ID.test(value)) {
    throw invalidInput('sessionId must be 1 to 256 characters without whitespace or control characters');
  }
  return value;
}

/** What a record keeps of a principal (design §33): its id, authenticator and issuer; never its claims or token. */
export function personOf(principal: Principal): DecidedBy {
  const person: DecidedBy = { id: principal.id, authenticator: principal.authenticator };
  if (principal.issuer !== undefined) person.issuer = principal.issuer;
  return person;
}
