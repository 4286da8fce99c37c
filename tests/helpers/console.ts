/**
 * Replaces `console.error` while `body` runs and returns what it was called with, so tests can
 * count the log lines of a 500 and check that nothing secret is in them.
 */
export async function captureConsoleError<T>(body: () => T | Promise<T>): Promise<{ result: T; calls: unknown[][] }> {
  const original = console.error;
  const calls: unknown[][] = [];
  console.error = (...args: unknown[]) => {
    calls.push(args);
  };
  try {
    return { result: await body(), calls };
  } finally {
    console.error = original;
  }
}
