// The models `echoModel()` made, and the agents created with one: the playground suggests `/tool`
// for those alone (design §31). A module of its own, so an agent that never uses echoModel()
// bundles none of it.
import type { Agent } from './types.ts';

const ECHO_MODELS = new WeakSet<object>();
const ECHO_AGENTS = new WeakSet<Agent>();

/** Marks a model `echoModel()` made. */
export const markEchoModel = (model: object): void => void ECHO_MODELS.add(model);

/** Marks `agent` when `model` is one `echoModel()` made. */
export function noteEchoAgent(agent: Agent, model: unknown): void {
  if (typeof model === 'object' && model !== null && ECHO_MODELS.has(model)) ECHO_AGENTS.add(agent);
}

/** True for an agent created with `model: echoModel()` (not a function returning one). */
export const answersWithEcho = (agent: Agent): boolean => ECHO_AGENTS.has(agent);
