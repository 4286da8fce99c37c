/**
 * The agent and auth the limits scenarios run against (tests/helpers/limits-spent.ts), in this
 * process (tests/http/limits-spent.test.ts, workerd) and in the server processes of
 * tests/helpers/children/limits-server.ts. Its model does what the user's message says:
 *
 * - `loop`: calls the tool `tick` on every turn, reporting 600 + 400 tokens per turn;
 * - `hang-reported`: streams a usage delta of 5,000 input tokens and a word, then waits until
 *   the run is aborted (at most 30 s);
 * - `hang-silent`: streams 400 characters of text, starting `estimate=<its turn's estimate>;`,
 *   reports nothing, then waits as above;
 * - `slow`: answers after 200 ms, reporting 1 + 999 tokens;
 * - `write-2000`: answers after 200 ms, reporting 10 + 2,000 tokens;
 * - a message of Hangul syllables: answers after 200 ms, reporting as input what o200k_base makes
 *   of such text (2.25 tokens a syllable: tests/helpers/token-corpora.ts, 2,254 for 1,000) and
 *   its `maxOutputTokens` (or 1,000) as output;
 * - anything else: `pid <label>: <message>`, reporting 60 + 40 tokens, after `delayMs` (default 0).
 *
 * Portable: no Node import.
 */
import { createAgent, tool } from '../../src/agent/index.ts';
import type { Agent, Model, ModelDelta, ModelRequest } from '../../src/agent/types.ts';
import { turnEstimate } from '../../src/agent/model-turn.ts';
import { apiToken, jwt } from '../../src/auth/index.ts';

export const ALICE = 'alice-token-0123456789';
export const BOB = 'bob-token-0123456789';
export const WRONG = 'wrong-token-0123456789';

/** HS256 tokens (until 2100) of three users in two Auth0-style organizations (`org_id`): carol and dave of `org_acme`, erin of `org_globex`. */
export const CAROL =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2ZpeHR1cmUuZXhhbXBsZS8iLCJzdWIiOiJjYXJvbCIsImF1ZCI6ImZpeHR1cmUtYWdlbnQiLCJvcmdfaWQiOiJvcmdfYWNtZSIsImlhdCI6MTc2NzIyNTYwMCwiZXhwIjo0MTAyNDQ0ODAwfQ.acp1FUi7_eh9t871aiB94CTLPBp-eeFAa2UkLjnroTw';
export const DAVE =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2ZpeHR1cmUuZXhhbXBsZS8iLCJzdWIiOiJkYXZlIiwiYXVkIjoiZml4dHVyZS1hZ2VudCIsIm9yZ19pZCI6Im9yZ19hY21lIiwiaWF0IjoxNzY3MjI1NjAwLCJleHAiOjQxMDI0NDQ4MDB9.8I3EcPWnR2p1w42Pf7lx6uHitElsPDAgIEktn6IOoN0';
export const ERIN =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2ZpeHR1cmUuZXhhbXBsZS8iLCJzdWIiOiJlcmluIiwiYXVkIjoiZml4dHVyZS1hZ2VudCIsIm9yZ19pZCI6Im9yZ19nbG9iZXgiLCJpYXQiOjE3NjcyMjU2MDAsImV4cCI6NDEwMjQ0NDgwMH0._D18EIGNphkR-9859oV_lEMpioRNoulnFfYkDL2Rzgs';
const TENANT_SECRET = 'limits-fixture-tenant-secret-0123456789abcdef';

/** The auth list of every fixture server: `ALICE` is principal alice, `BOB` bob (no tenant); `CAROL`, `DAVE`, `ERIN` are JWT users with a tenant. */
export const fixtureAuth = () => [
  apiToken(ALICE, { id: 'alice' }),
  apiToken(BOB, { id: 'bob' }),
  jwt({
    secret: TENANT_SECRET,
    issuer: 'https://fixture.example/',
    audience: 'fixture-agent',
    tenantClaim: 'org_id',
    tenants: ['org_acme', 'org_globex'],
  }),
];

/** The client address a test names in `X-Test-Address` (the fixture servers' `clientAddress`). */
export const fixtureAddress = (request: Request): string | undefined =>
  request.headers.get('x-test-address') ?? undefined;

const lastUserMessage = (request: ModelRequest) =>
  request.messages.findLast((message) => message.role === 'user')?.content ?? '';

/** Resolves when `signal` aborts, or after 30 s: a model that waits for its client to leave never waits forever. */
function untilAborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => {
    const timer = setTimeout(() => reject(new Error('the fixture model waited 30 s for an abort')), 30_000);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

export function fixtureModel(label: string, delayMs = 0): Model {
  const generate: Model['generate'] = async (request) => {
    const message = lastUserMessage(request);
    if (message === 'loop')
      return {
        toolCalls: [{ id: `call-${request.messages.length}`, name: 'tick', arguments: {} }],
        usage: { inputTokens: 600, outputTokens: 400 },
      };
    if (message.startsWith('hang')) return untilAborted(request.signal);
    if (message === 'slow') {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return { text: 'slow answer', usage: { inputTokens: 1, outputTokens: 999 } };
    }
    if (message === 'write-2000') {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return { text: 'a long answer', usage: { inputTokens: 10, outputTokens: 2000 } };
    }
    if (message.charCodeAt(0) >= 0xac00 && message.charCodeAt(0) <= 0xd7a3) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const outputTokens = request.settings?.maxOutputTokens ?? 1000;
      return { text: '답', usage: { inputTokens: Math.ceil(message.length * 2.25), outputTokens } };
    }
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    return { text: `pid ${label}: ${message}`, usage: { inputTokens: 60, outputTokens: 40 } };
  };
  return {
    generate,
    async *stream(request): AsyncIterable<ModelDelta> {
      const message = lastUserMessage(request);
      if (message === 'hang-reported') {
        yield { type: 'usage', usage: { inputTokens: 5000, outputTokens: 0 } };
        yield { type: 'text', text: 'working' };
        await untilAborted(request.signal);
      } else if (message === 'hang-silent') {
        yield { type: 'text', text: `estimate=${turnEstimate(request)};`.padEnd(400, '.') };
        await untilAborted(request.signal);
      } else {
        const turn = await generate(request);
        if (turn.text) yield { type: 'text', text: turn.text };
        for (const call of turn.toolCalls ?? []) yield { type: 'tool-call', call };
        if (turn.usage) yield { type: 'usage', usage: turn.usage };
      }
    },
  };
}

/** `length` random Hangul syllables, the same every time (a seeded generator). */
export function hangul(length: number): string {
  let state = 57;
  const syllables: number[] = [];
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    syllables.push(0xac00 + (state % 11172));
  }
  return String.fromCharCode(...syllables);
}

/** The fixture agent; `maxOutputTokens` goes to its settings (and so into each turn's estimate). */
export function fixtureAgent(label: string, maxOutputTokens?: number, delayMs?: number): Agent {
  return createAgent({
    name: 'limits-fixture',
    model: fixtureModel(label, delayMs),
    tools: [
      tool({
        name: 'tick',
        description: 'Ticks once',
        parameters: { type: 'object', properties: {} },
        execute: async () => 'tick',
      }),
    ],
    maxSteps: 10,
    ...(maxOutputTokens !== undefined && { settings: { maxOutputTokens } }),
  });
}
