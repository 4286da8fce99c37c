import { AuthConfigError } from '../auth/internal.ts';

export type AgentErrorCode =
  | 'INVALID_AGENT'
  | 'INVALID_INPUT'
  | 'SESSION_NOT_FOUND'
  | 'APPROVAL_NOT_FOUND'
  | 'APPROVAL_PENDING'
  | 'FORBIDDEN'
  | 'APPROVAL_LIMIT'
  | 'MODEL_ERROR'
  | 'SESSION_FULL'
  | 'TOKEN_LIMIT'
  | 'TOOL_NOT_FOUND'
  | 'INTERNAL';

/**
 * What the agent throws; callers branch on `code`: `INVALID_AGENT` (what a dynamic agent's
 * functions resolved to cannot work; createAgent's own options throw `AuthConfigError`), `INVALID_INPUT` (a bad message, session
 * id, metadata, principal or decision), `SESSION_NOT_FOUND`, `APPROVAL_NOT_FOUND` (unknown or
 * already decided), `APPROVAL_PENDING` (a session whose run waits for a decision cannot take
 * a new message), `FORBIDDEN` (an anonymous principal listing sessions: it owns none),
 * `APPROVAL_LIMIT` (the principal already has `maxPendingApprovals` approvals pending), `MODEL_ERROR` (the model failed; the stored session is left as it was),
 * `SESSION_FULL` (the turn would take the session past `limits.sessionBytes`; the stored session is left as it was),
 * `TOKEN_LIMIT` (a `meter` refused the next model turn: the route handler's `limits.tokens` is spent; the steps before it stay stored),
 * `TOOL_NOT_FOUND` (`callTool()` named a tool the caller does not get), `INTERNAL` (a state agentward
 * never reaches but by a bug of its own, such as a request body read twice: please report it; the route answers 500).
 * @example
 * try { await agent.transcript(id); } catch (e) { if (e instanceof AgentError && e.code === 'SESSION_NOT_FOUND') … }
 */
export class AgentError extends Error {
  readonly code: AgentErrorCode;

  constructor(code: AgentErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AgentError';
    this.code = code;
  }
}

/** The codes of `AuditError`. */
export type AuditErrorCode = 'AUDIT_RECORD_INVALID' | 'AUDIT_READ_INVALID';

/**
 * What an audit log (`memoryAuditLog`, `postgresAuditLog`, `durableObjectAuditLog`) throws for a
 * bad argument of a call; callers branch on `code`: `AUDIT_RECORD_INVALID` (the record given to
 * `append()` is not a plain JSON object, has no ISO 8601 `time`, carries `seq`, `prev` or `hash`,
 * or holds a value without an exact JSON form: NaN, a Date, a cycle…; it takes no `seq`) and
 * `AUDIT_READ_INVALID` (`read()`'s options: an unknown one, a `since`/`until` that is no ISO 8601
 * instant, a `fromSeq` that is no positive integer). The message names the call and the field,
 * never a value. A `TypeError`, so `instanceof TypeError` checks keep working.
 * @example
 * try { await log.append(record); } catch (e) { if (e instanceof AuditError && e.code === 'AUDIT_RECORD_INVALID') … }
 */
export class AuditError extends TypeError {
  readonly code: AuditErrorCode;

  constructor(code: AuditErrorCode, message: string) {
    super(message);
    this.name = 'AuditError';
    this.code = code;
  }
}

/** Errors of the codes thrown from many places, one short call each. `INVALID_AGENT`: what a dynamic part resolved to. */
export const invalidAgent = (message: string): AgentError => new AgentError('INVALID_AGENT', message);
/**
 * Options of a factory (`createAgent`, `tool`, a model, a store) that cannot work: `AuthConfigError`,
 * the one configuration error of every factory (design §30). `message` starts with the factory.
 */
export const configError = (message: string): AuthConfigError => new AuthConfigError(message);
/** What makes one of the errors above from a message: `configError` at creation, `invalidAgent` at run time. */
export type Fail = (message: string) => Error;
/** A bad argument of a call (`send`, `decide`, the reading calls). */
export const invalidInput = (message: string): AgentError => new AgentError('INVALID_INPUT', message);
/** The model failed, or answered something that is not a turn. */
export const modelError = (message: string, options?: { cause?: unknown }): AgentError =>
  new AgentError('MODEL_ERROR', message, options);
