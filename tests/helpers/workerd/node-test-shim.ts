/**
 * The part of `node:test` that the portable jose/jwt test files use (`describe`, `test`,
 * `before`), for running those files unchanged inside workerd, which has no test runner. The
 * bundle for tests/auth/jws/workerd.node.test.ts maps `node:test` here. Tests run one at a time in
 * the order they were declared, each suite's `before` hooks first, as `node --test` runs them.
 */
type Body = () => unknown;

interface Suite {
  readonly name: string;
  readonly hooks: Body[];
  readonly items: (Suite | { readonly name: string; readonly body: Body })[];
}

export interface TestOutcome {
  readonly name: string;
  readonly ok: boolean;
  readonly error?: string;
}

const root: Suite = { name: '', hooks: [], items: [] };
let current = root;

export function describe(name: string, body: () => void): void {
  const suite: Suite = { name, hooks: [], items: [] };
  current.items.push(suite);
  const parent = current;
  current = suite;
  try {
    body();
  } finally {
    current = parent;
  }
}

export function test(name: string, body: Body): void {
  current.items.push({ name, body });
}

export function before(body: Body): void {
  current.hooks.push(body);
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error);
}

async function runSuite(suite: Suite, prefix: string, outcomes: TestOutcome[]): Promise<void> {
  let hookError: string | undefined;
  for (const hook of suite.hooks) {
    try {
      await hook();
    } catch (error) {
      hookError = `before hook failed: ${describeError(error)}`;
      break;
    }
  }
  for (const item of suite.items) {
    const name = prefix + item.name;
    if ('items' in item) {
      await runSuite(item, `${name} > `, outcomes);
    } else if (hookError !== undefined) {
      outcomes.push({ name, ok: false, error: hookError });
    } else {
      try {
        await item.body();
        outcomes.push({ name, ok: true });
      } catch (error) {
        outcomes.push({ name, ok: false, error: describeError(error) });
      }
    }
  }
}

/** Runs every test declared so far and reports each one. */
export async function runDeclaredTests(): Promise<TestOutcome[]> {
  const outcomes: TestOutcome[] = [];
  await runSuite(root, '', outcomes);
  return outcomes;
}

export default { describe, test, before };
