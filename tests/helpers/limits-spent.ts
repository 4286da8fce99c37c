/**
 * "Limits count what was spent" (design §25), as scenarios every limit store runs behind two
 * servers sharing it: two handlers in one process over the memory store and over the Durable
 * Object store on stand-ins (tests/http/limits-spent.test.ts), two handlers in workerd over real
 * Durable Objects (tests/helpers/workerd/limit-store-worker.ts), and two server processes on one
 * PostgreSQL database (tests/postgres/limit-store.node.test.ts). The servers serve the fixture
 * agent of tests/helpers/limits-fixture.ts at `/agent`.
 *
 * - `failures` counts first and refunds on success: 300 guesses at once get at most `limit`
 *   verified.
 * - `tokens` per model turn: clients that leave midway count what the model reported (or the
 *   reservation plus what it produced); a tool loop stops at the turn it cannot reserve; 20
 *   requests at once reserve before they run.
 *
 * Portable: no Node import.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LimitStore } from '../../src/http/limit-store.ts';
import { estimateTokens } from '../../src/agent/token-estimate.ts';
import { ALICE, CAROL, DAVE, ERIN, hangul, WRONG } from './limits-fixture.ts';

export interface LimitsServers {
  /** Sends a request to one of the two servers, `n % 2`; `path` is under `/agent`. */
  fetch(n: number, path: string, init?: RequestInit): Promise<Response>;
  /** The counters the servers share, read through a store of the same kind. */
  store: LimitStore;
  close(): Promise<void>;
}

export interface LimitsServerOptions {
  /** The handlers' `limits`, without `store` and `clientAddress` (the servers give those). */
  limits: Record<string, unknown>;
  /** The fixture agent's `settings.maxOutputTokens`. */
  maxOutputTokens?: number;
}

const ANY = Number.MAX_SAFE_INTEGER;
/** alice's key in the `tokens` window of 3600 s: the policy, the window, and her ownership key (design §26). */
const ALICE_TOKENS = 'tokens/3600:p["","api-token","alice"]';

const post = (token: string, body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
  body: JSON.stringify(body),
});

/** Reads a streamed answer until its text matches `pattern`; answers the text read. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, pattern: RegExp): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  while (!pattern.test(text)) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  assert.match(text, pattern);
  return text;
}

/** Waits until alice's `tokens` window holds `expected` (a turn cut off settles after its client left), at most 15 s. */
async function untilSpent(store: LimitStore, expected: number): Promise<void> {
  let spent = -1;
  for (let i = 0; i < 300 && spent !== expected; i++) {
    spent = (await store.hit(ALICE_TOKENS, 3600, 0, ANY)).count;
    if (spent !== expected) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(spent, expected, `alice's tokens window holds ${expected} within 15 s`);
}

/** Starts `count` streamed turns of `message` at once, each cut off by its client after its first text delta; answers each turn's text so far. */
function cutOffTurns(servers: LimitsServers, message: string, count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, n) => {
      const controller = new AbortController();
      const response = await servers.fetch(n, '/chat', {
        ...post(ALICE, { message }, { accept: 'text/event-stream' }),
        signal: controller.signal,
      });
      assert.equal(response.status, 200);
      const reader = response.body!.getReader();
      const text = await readUntil(reader, /event: text-delta[^\n]*\ndata: [^\n]*\n/);
      // The client leaves: it stops reading and closes the connection.
      await reader.cancel();
      controller.abort();
      return text;
    }),
  );
}

export function limitsSpentScenarios(name: string, open: (options: LimitsServerOptions) => Promise<LimitsServers>) {
  test(`${name}: limits.tenant.requests counts a tenant's callers together beside each principal's window; refused by the tenant's with "tenant-requests"; callers without a tenant not counted`, async () => {
    const servers = await open({
      limits: { requests: { limit: 100, windowSec: 3600 }, tenant: { requests: { limit: 3, windowSec: 3600 } } },
    });
    try {
      const send = async (n: number, token: string) => {
        const answer = await servers.fetch(n, '', post(token, { message: `request ${n}` }));
        await answer.body?.cancel();
        return answer;
      };
      for (const [n, token] of [CAROL, DAVE, CAROL].entries()) {
        const answer = await send(n, token);
        assert.equal(answer.status, 200);
        assert.equal(answer.headers.get('ratelimit-policy'), '"requests";q=100;w=3600, "tenant-requests";q=3;w=3600');
        assert.match(
          answer.headers.get('ratelimit') ?? '',
          new RegExp(`^"requests";r=9\\d;t=\\d+, "tenant-requests";r=${2 - n};t=\\d+$`),
        );
      }
      const refused = await send(1, DAVE);
      assert.equal(refused.status, 429, "dave's own window has room; his tenant's is spent");
      assert.equal(refused.headers.get('ratelimit-policy'), '"tenant-requests";q=3;w=3600');
      assert.match(refused.headers.get('ratelimit') ?? '', /^"tenant-requests";r=0;t=\d+$/);
      assert.equal((await send(0, ERIN)).status, 200, 'another tenant has a window of its own');
      for (let n = 0; n < 5; n++) {
        const answer = await send(n, ALICE);
        assert.equal(answer.status, 200, 'a caller without a tenant is not counted by limits.tenant');
        assert.equal(answer.headers.get('ratelimit-policy'), '"requests";q=100;w=3600');
      }
      assert.equal((await servers.store.hit('tenant-requests/3600:t"org_acme"', 3600, 0, ANY)).count, 3);
    } finally {
      await servers.close();
    }
  });

  test(`${name}: limits.tenant.tokens: a tenant's callers spend one budget; a turn once it is spent is refused with "tenant-tokens" before the model runs; another tenant and callers without one go on`, async () => {
    const servers = await open({ limits: { tenant: { tokens: { limit: 1_500, windowSec: 3600 } } } });
    try {
      const send = async (n: number, token: string) => {
        const answer = await servers.fetch(n, '', post(token, { message: 'slow' }));
        await answer.body?.cancel();
        return answer;
      };
      // Each "slow" turn reports 1 + 999 tokens: carol's and dave's turns spend 2,000 of acme's 1,500.
      assert.equal((await send(0, CAROL)).status, 200);
      const second = await send(1, DAVE);
      assert.equal(second.status, 200);
      assert.equal(second.headers.get('agentward-tokens-policy'), '"tenant-tokens";q=1500;w=3600');
      const refused = await send(0, CAROL);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('agentward-tokens-policy'), '"tenant-tokens";q=1500;w=3600');
      assert.match(refused.headers.get('agentward-tokens') ?? '', /^"tenant-tokens";r=0;t=\d+$/);
      assert.equal((await servers.store.hit('tenant-tokens/3600:t"org_acme"', 3600, 0, ANY)).count, 2_000);
      assert.equal((await send(1, ERIN)).status, 200, 'org_globex has its own budget');
      const alice = await send(0, ALICE);
      assert.equal(alice.status, 200, 'a caller without a tenant is not counted');
      assert.equal(alice.headers.get('agentward-tokens-policy'), null);
    } finally {
      await servers.close();
    }
  });

  test(`${name}: limits.failures counts first and refunds on success: 300 guesses at once from one address get at most limit (5) verified`, async () => {
    const servers = await open({ limits: { failures: { limit: 5, windowSec: 3600 } } });
    try {
      const address = { 'x-test-address': '198.51.100.9' };
      for (let n = 0; n < 10; n++)
        assert.equal(
          (await servers.fetch(n, '', post(ALICE, { message: `accepted ${n}` }, address))).status,
          200,
          'an accepted request gives its failure slot back',
        );
      const answers = await Promise.all(
        Array.from({ length: 300 }, (_, n) => servers.fetch(n, '', post(WRONG, { message: 'guess' }, address))),
      );
      const statuses = answers.map((answer) => answer.status);
      await Promise.all(answers.map((answer) => answer.body?.cancel()));
      assert.equal(statuses.filter((status) => status === 401).length, 5, 'five guesses reached the auth list');
      assert.equal(statuses.filter((status) => status === 429).length, 295);
      const refused = await servers.fetch(0, '', post(ALICE, { message: 'right token' }, address));
      assert.equal(refused.status, 429, 'the address has spent its failures: no entry runs, the right token neither');
      assert.equal(refused.headers.get('ratelimit-policy'), '"failures";q=5;w=3600');
      await refused.body?.cancel();
      const other = await servers.fetch(
        1,
        '',
        post(ALICE, { message: 'elsewhere' }, { 'x-test-address': '198.51.100.10' }),
      );
      assert.equal(other.status, 200, 'another address has failures of its own');
      await other.body?.cancel();
    } finally {
      await servers.close();
    }
  });

  test(`${name}: limits.tokens: 20 turns whose clients left midway count what the model reported (5,000 each)`, async () => {
    const servers = await open({ limits: { tokens: { limit: 1_000_000, windowSec: 3600 } } });
    try {
      await cutOffTurns(servers, 'hang-reported', 20);
      await untilSpent(servers.store, 100_000);
    } finally {
      await servers.close();
    }
  });

  test(`${name}: limits.tokens: a turn cut off before the model reported anything counts its input estimate plus the estimate of what it produced`, async () => {
    const servers = await open({ limits: { tokens: { limit: 1_000_000, windowSec: 3600 } } });
    try {
      const texts = await cutOffTurns(servers, 'hang-silent', 4);
      // The fixture model streams 400 characters, the first of them its turn's input estimate.
      const estimates = texts.map((text) => Number(/estimate=(\d+);/.exec(text)![1]));
      await untilSpent(
        servers.store,
        estimates.reduce(
          (sum, estimate) => sum + estimate + estimateTokens(`estimate=${estimate};`.padEnd(400, '.')),
          0,
        ),
      );
    } finally {
      await servers.close();
    }
  });

  test(`${name}: limits.tokens per model turn: a 10-step tool loop of 1,000 tokens a turn under a limit of 1,500 stops at the turn it cannot reserve (429), what ran stored`, async () => {
    const servers = await open({ limits: { tokens: { limit: 1500, windowSec: 3600 } } });
    try {
      const sessionId = `loop-${Date.now()}`;
      const refused = await servers.fetch(0, '', post(ALICE, { message: 'loop', sessionId }));
      assert.equal(refused.status, 429);
      assert.deepEqual(await refused.json(), { error: 'Too Many Requests' });
      assert.equal(refused.headers.get('agentward-tokens-policy'), '"tokens";q=1500;w=3600');
      assert.match(refused.headers.get('agentward-tokens')!, /^"tokens";r=0;t=\d+;needed=\d+$/);
      assert.match(refused.headers.get('retry-after')!, /^\d+$/);
      // Two turns reserved and ran (the second reserving for its answer only what the window had left); the
      // third's input passed the limit: the total passes it by what the second wrote beyond its reservation.
      assert.equal((await servers.store.hit(ALICE_TOKENS, 3600, 0, ANY)).count, 2000);
      const transcript = await servers.fetch(0, `/chat/${sessionId}`, {
        headers: { authorization: `Bearer ${ALICE}` },
      });
      assert.equal(transcript.status, 200);
      assert.deepEqual(
        ((await transcript.json()) as { messages: { role: string }[] }).messages.map((message) => message.role),
        ['user', 'assistant', 'tool', 'assistant', 'tool'],
        'the steps that ran are stored; nothing of the refused turn',
      );
    } finally {
      await servers.close();
    }
  });

  test(`${name}: limits.tokens: 20 requests at once each reserve their estimate (maxOutputTokens 1,000) before the model runs: one runs, 19 get 429, the total stays within 1,500`, async () => {
    const servers = await open({ limits: { tokens: { limit: 1500, windowSec: 3600 } }, maxOutputTokens: 1000 });
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, n) => servers.fetch(n, '', post(ALICE, { message: 'slow' }))),
      );
      const statuses = answers.map((answer) => answer.status);
      await Promise.all(answers.map((answer) => answer.body?.cancel()));
      assert.equal(statuses.filter((status) => status === 200).length, 1);
      assert.equal(statuses.filter((status) => status === 429).length, 19);
      assert.equal((await servers.store.hit(ALICE_TOKENS, 3600, 0, ANY)).count, 1000);
    } finally {
      await servers.close();
    }
  });

  test(`${name}: limits.tokens without maxOutputTokens: 30 sends at once of a model writing 2,000 tokens under a limit of 10,000 share the output reserve; the total passes the limit by at most what the turns wrote beyond their reservations`, async () => {
    const servers = await open({ limits: { tokens: { limit: 10_000, windowSec: 3600 } } });
    try {
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, n) => servers.fetch(n, '', post(ALICE, { message: 'write-2000' }))),
      );
      const statuses = answers.map((answer) => answer.status);
      await Promise.all(answers.map((answer) => answer.body?.cancel()));
      const ran = statuses.filter((status) => status === 200).length;
      assert.equal(ran + statuses.filter((status) => status === 429).length, 30);
      // Each turn reserves its input and, for its answer, 1,024 (the default outputReserve) or what is left:
      // at most 10 fit in 10,000, and all but the last reserved 1,024 for an answer of 2,000.
      assert.ok(ran >= 1 && ran <= 10, `${ran} turns ran`);
      const total = (await servers.store.hit(ALICE_TOKENS, 3600, 0, ANY)).count;
      assert.equal(total, ran * 2010, 'each turn that ran counts what it reported');
      assert.ok(total <= 10_000 + (ran - 1) * (2010 - 1024) + 2010, `total ${total}`);
      // Before the output reserve the same sends reached about 60,000.
      assert.ok(total <= 21_000, `total ${total}`);
    } finally {
      await servers.close();
    }
  });

  test(`${name}: limits.tokens with maxOutputTokens: 20 sends at once of 20,000 random Hangul syllables under a limit of 100,000: one runs (the estimate is the text's UTF-8 bytes), the total stays within the limit`, async () => {
    const servers = await open({ limits: { tokens: { limit: 100_000, windowSec: 3600 } }, maxOutputTokens: 1000 });
    try {
      const message = hangul(20_000);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, n) => servers.fetch(n, '', post(ALICE, { message }))),
      );
      const statuses = answers.map((answer) => answer.status);
      const refusals = answers.filter((answer) => answer.status === 429);
      for (const refused of refusals)
        assert.match(refused.headers.get('agentward-tokens')!, /^"tokens";r=\d+;t=\d+;needed=6\d{4}$/);
      await Promise.all(answers.map((answer) => answer.body?.cancel()));
      assert.equal(statuses.filter((status) => status === 200).length, 1);
      assert.equal(refusals.length, 19);
      const total = (await servers.store.hit(ALICE_TOKENS, 3600, 0, ANY)).count;
      assert.equal(total, 45_000 + 1000, 'what the one turn reported');
      // A second send, after the first: its 60,000 and more do not fit in what is left.
      const again = await servers.fetch(0, '', post(ALICE, { message }));
      assert.equal(again.status, 429);
      await again.body?.cancel();
      assert.ok((await servers.store.hit(ALICE_TOKENS, 3600, 0, ANY)).count <= 100_000);
    } finally {
      await servers.close();
    }
  });
}
