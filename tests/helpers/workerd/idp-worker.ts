/**
 * A Workers entry that runs tests/helpers/idp-scenario.ts inside workerd against the real
 * authorization server of tests/auth/oidc-provider.node.test.ts, over loopback: discovery, key sets
 * and token requests are this worker's own fetches. The input is the `IDP_SCENARIO` binding.
 */
import { runScenario, type ScenarioInput } from '../idp-scenario.ts';

export default {
  async fetch(_request: Request, env: { IDP_SCENARIO: ScenarioInput }): Promise<Response> {
    return Response.json(await runScenario(env.IDP_SCENARIO));
  },
};
