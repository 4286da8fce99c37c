export type AgentErrorCode =
  | 'INVALID_AGENT'
  | 'INVALID_INPUT'
  | 'SESSION_NOT_FOUND'
  | 'APPROVAL_NOT_FOUND'
  | 'APPROVAL_PENDING'
  | 'FORBIDDEN'
  | 'APPROVAL_LIMIT'
  | 'MODEL_ERROR'
  | 'SESSION_FULL';

/**
 * What the agent throws; callers branch on `code`: `INVALID_AGENT` (createAgent options, or
 * tools a dynamic agent resolved, that cannot work), `INVALID_INPUT` (a bad message, session
 * id, metadata, principal or decision), `SESSION_NOT_FOUND`, `APPROVAL_NOT_FOUND` (unknown or
 * already decided), `APPROVAL_PENDING` (a session whose run waits for a decision cannot take
 * a new message), `FORBIDDEN` (an anonymous principal listing sessions: it owns none),
 * `APPROVAL_LIMIT` (the principal already has `maxPendingApprovals` approvals pending), `MODEL_ERROR` (the model failed; the stored session is left as it was),
 * `SESSION_FULL` (the turn would take the session past `limits.sessionBytes`; the stored session is left as it was).
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

/** Errors of the codes thrown from many places, one short call each. `INVALID_AGENT`: createAgent options, or what a dynamic part resolved to. */
export const invalidAgent = (message: string): AgentError => new AgentError('INVALID_AGENT', message);
/** A bad argument of a call (`send`, `decide`, the reading calls). */
export const invalidInput = (message: string): AgentError => new AgentError('INVALID_INPUT', message);
/** The model failed, or answered something that is not a turn. */
export const modelError = (message: string, options?: { cause?: unknown }): AgentError =>
  new AgentError('MODEL_ERROR', message, options);
