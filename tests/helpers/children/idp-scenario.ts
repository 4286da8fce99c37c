// Runs tests/helpers/idp-scenario.ts under the runtime that runs this file (Bun, Deno): reads
// the scenario input as JSON from the IDP_SCENARIO environment variable, prints the result as JSON.
import { runScenario } from '../idp-scenario.ts';

const env =
  (globalThis as { Deno?: { env: { get(name: string): string | undefined } } }).Deno?.env.get('IDP_SCENARIO') ??
  (globalThis as unknown as { process: { env: Record<string, string> } }).process.env.IDP_SCENARIO;
const result = await runScenario(JSON.parse(env as string));
console.log(`IDP_RESULT ${JSON.stringify(result)}`);
