// Suite `limits`: what the route handler's limits (design §22, target: at most 10% on an apiToken
// route, memory store) add to one request, in process: `POST /agent` through the routes of
// agentHandler() (the node server's own path, no HTTP around it) with apiToken() and the echo
// agent on a store that keeps nothing; `requests` adds limits.requests, `all` requests,
// concurrent, tokens and failures (the socket's address), none of them ever reached. bench:http
// measures the same cases over HTTP (`api-token-limits`, `api-token-limits-all`), where the
// machine's noise is larger than the difference.
import { createAgent, echoModel } from '../../src/agent/index.ts';
import { apiToken } from '../../src/auth/index.ts';
import { agentRoutes } from '../../src/http/handler.ts';
import type { LimitsOptions } from '../../src/http/index.ts';
import { discardStore, routeViewPost } from '../http-shared.ts';
import type { SuiteSpec } from '../lib.ts';

const TOKEN = 'bench-api-token-0123456789';
const NEVER = { limit: 1_000_000_000, windowSec: 3600 };

const request = routeViewPost(TOKEN);

function sender(limits: LimitsOptions | undefined) {
  const agent = createAgent({ name: 'bench', model: echoModel(), store: discardStore() });
  const routes = agentRoutes(agent, { basePath: '/agent', auth: [apiToken(TOKEN)], ...(limits && { limits }) });
  return async () => {
    const reply = await routes(request());
    if (reply.status !== 200) throw new Error(`answered ${reply.status}`);
    return reply;
  };
}

export default async function suites(): Promise<SuiteSpec[]> {
  return [
    {
      suite: 'limits',
      baseline: 'api-token',
      cases: {
        'api-token': sender(undefined),
        'api-token + requests': sender({ requests: NEVER }),
        'api-token + all four': sender({ requests: NEVER, concurrent: 1_000, tokens: NEVER, failures: NEVER }),
      },
      note: "each case: POST /agent through agentHandler()'s routes, apiToken(), the echo agent, a store that keeps nothing; limits on the memory store, never reached",
      // The 10% of design §22 is judged on the HTTP route (bench:http), where a request costs several times what it costs here.
      verdict: (ops) => {
        const base = ops['api-token']!;
        return (['api-token + requests', 'api-token + all four'] as const)
          .map(
            (name) =>
              `${name}: ${(1e6 / ops[name]! - 1e6 / base).toFixed(2)} µs more a request than api-token's ${(1e6 / base).toFixed(2)} µs here`,
          )
          .join('; ');
      },
    },
  ];
}
