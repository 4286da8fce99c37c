/**
 * A Workers entry that runs tests/helpers/introspection-scenario.ts inside workerd against the
 * real authorization server of tests/auth/introspection.node.test.ts, over loopback: each request's
 * introspection call is this worker's own fetch. The input is the `INTROSPECTION_SCENARIO` binding.
 */
import { runIntrospectionScenario, type IntrospectionInput } from '../introspection-scenario.ts';

export default {
  async fetch(_request: Request, env: { INTROSPECTION_SCENARIO: IntrospectionInput }): Promise<Response> {
    return Response.json(await runIntrospectionScenario(env.INTROSPECTION_SCENARIO));
  },
};
