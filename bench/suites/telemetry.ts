// Suite `telemetry`: what a tracer whose spans do nothing costs (design §28: at most 5% of an
// echo send; without `telemetry` nothing of it runs). `send`: `agent.send('hello')` on the echo
// agent with its default memory store, a new session each time, with the options the route
// handler passes; `route`: `POST /agent` through agentHandler()'s routes behind apiToken(), the
// same agent. Each `+ no-op tracer` case is the same with `telemetry: { tracer }` on the agent
// (and the handler), the tracer's spans doing nothing: what the library's own span code costs,
// without an SDK's. `send + API, no SDK`: the tracer `@opentelemetry/api` gives when no SDK is
// registered, whose spans record nothing (what an application with tracing off runs).
import { trace } from '@opentelemetry/api';
import { createAgent, echoModel } from '../../src/agent/index.ts';
import type { Principal, TelemetryOptions, TelemetrySpan } from '../../src/agent/index.ts';
import { apiToken } from '../../src/auth/index.ts';
import { agentRoutes } from '../../src/http/handler.ts';
import { routeViewPost } from '../http-shared.ts';
import type { SuiteSpec } from '../lib.ts';

const TOKEN = 'bench-api-token-0123456789';

const NOOP_SPAN: TelemetrySpan = {
  setAttribute: () => NOOP_SPAN,
  setStatus: () => NOOP_SPAN,
  recordException: () => undefined,
  addEvent: () => NOOP_SPAN,
  end: () => undefined,
};
/** A tracer whose spans do nothing. */
const NOOP: TelemetryOptions = { tracer: { startActiveSpan: (_name, _options, fn) => fn(NOOP_SPAN) } };
/** `@opentelemetry/api`'s tracer with no SDK registered: its spans record nothing (`isRecording()` false). */
const API_ONLY: TelemetryOptions = { tracer: trace.getTracer('agentward-bench') as TelemetryOptions['tracer'] };

const request = routeViewPost(TOKEN);
/** A request's signal, as the handler passes one to the send. */
const signal = new AbortController().signal;

const agentWith = (telemetry: TelemetryOptions | undefined) =>
  createAgent({ name: 'bench', model: echoModel(), ...(telemetry && { telemetry }) });

function sender(telemetry: TelemetryOptions | undefined) {
  const agent = agentWith(telemetry);
  const entry = apiToken(TOKEN);
  const principal = entry(new Request('http://localhost/agent', { headers: { authorization: `Bearer ${TOKEN}` } }));
  if (principal === null || principal === undefined || principal instanceof Promise) throw new Error('no principal');
  // apiToken() hands out a complete principal (makePrincipal()), authenticator 'api-token'.
  // What the handler passes: parseSendBody() leaves sessionId and metadata undefined.
  return () =>
    agent.send('hello', { principal: principal as Principal, sessionId: undefined, metadata: undefined, signal });
}

function router(telemetry: TelemetryOptions | undefined) {
  const routes = agentRoutes(agentWith(telemetry), {
    basePath: '/agent',
    auth: [apiToken(TOKEN)],
    ...(telemetry && { telemetry }),
  });
  return async () => {
    const reply = await routes(request());
    if (reply.status !== 200) throw new Error(`answered ${reply.status}`);
    return reply;
  };
}

/** A traced case against its untraced one, paired by round (the shares of a few percent drift between rounds). */
const verdict = (paired: (a: string, b: string) => number, name: string, traced = `${name} + no-op tracer`) => {
  const ratio = paired(traced, name);
  return `${traced}: ${ratio.toFixed(3)}x ${name}'s ops/s, paired by round (design §28: ≥ 0.95x): ${ratio >= 0.95 ? 'met' : 'MISSED'}`;
};

export default async function suites(): Promise<SuiteSpec[]> {
  return [
    {
      suite: 'telemetry',
      baseline: 'send',
      cases: {
        send: sender(undefined),
        'send + no-op tracer': sender(NOOP),
        'send + API, no SDK': sender(API_ONLY),
        route: router(undefined),
        'route + no-op tracer': router(NOOP),
      },
      collect: false,
      paired: true,
      note: "ratios paired by round (each round's ops/s over the baseline's in the same round); send: agent.send('hello') on the echo agent and its memory store; route: POST /agent through agentHandler()'s routes behind apiToken(); + no-op tracer: telemetry on both, spans that do nothing",
      verdict: (_ops, paired) =>
        [verdict(paired, 'send'), verdict(paired, 'send', 'send + API, no SDK'), verdict(paired, 'route')].join('\n'),
    },
  ];
}
