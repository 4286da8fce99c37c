import { invalidAgent, invalidInput } from './errors.ts';
import type { MemoryOptions, Principal, Store, Tool } from './types.ts';
import { isNonEmptyString } from './shapes.ts';

export const REMEMBER = 'remember';
const MAX_NOTE = 2000;

/** The namespace of a run's notes: what `memory.scope({ principal })` names. */
export async function memoryNamespace(memory: MemoryOptions, principal: Principal | undefined): Promise<string> {
  const namespace = await memory.scope(Object.freeze({ principal }));
  if (!isNonEmptyString(namespace)) throw invalidAgent('memory.scope() must return a non-empty string');
  return namespace;
}

/** The built-in `remember` tool: it knows the namespace, never the principal. */
export function rememberTool(store: Store, namespace: string): Tool<{ note: string }> {
  return {
    name: REMEMBER,
    // Its errors are its own input checks, written for the model.
    exposeErrors: true,
    description: 'Save a short note to remember in later conversations (a fact or preference worth keeping).',
    parameters: {
      type: 'object',
      properties: { note: { type: 'string', maxLength: MAX_NOTE } },
      required: ['note'],
      additionalProperties: false,
    },
    async execute({ note }) {
      if (typeof note !== 'string' || note.trim() === '') throw invalidInput('note must be a non-empty string');
      if (note.length > MAX_NOTE) throw invalidInput(`note must be at most ${MAX_NOTE} characters`);
      await store.appendMemory(namespace, note.trim());
      return `Remembered: ${note.trim()}`;
    },
  };
}

/** Instructions followed by the notes kept in the run's namespace. */
export function withNotes(instructions: string, notes: readonly string[]): string {
  if (notes.length === 0) return instructions;
  const list = `Notes remembered from earlier conversations:\n${notes.map((note) => `- ${note}`).join('\n')}`;
  return instructions === '' ? list : `${instructions}\n\n${list}`;
}
