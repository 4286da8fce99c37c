/** The line the command prints for an error: messages of the project's errors never hold a secret; a stack adds nothing for a user. */
export function errorLine(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return `agentward: ${(error as Error)?.message ?? String(error)}${typeof code === 'string' ? ` (${code})` : ''}`;
}
