// Runs tests/helpers/introspection-scenario.ts under the runtime that runs this file (Bun, Deno):
// the input as JSON in INTROSPECTION_SCENARIO, the result printed as JSON.
import { runIntrospectionScenario } from '../introspection-scenario.ts';

const env =
  (globalThis as { Deno?: { env: { get(name: string): string | undefined } } }).Deno?.env.get(
    'INTROSPECTION_SCENARIO',
  ) ?? (globalThis as unknown as { process: { env: Record<string, string> } }).process.env.INTROSPECTION_SCENARIO;
const result = await runIntrospectionScenario(JSON.parse(env as string));
console.log(`INTROSPECTION_RESULT ${JSON.stringify(result)}`);
