// The playground in a real browser: Debian's Chromium driven by playwright-core. It pastes a
// token, sends a message, sees the streamed reply, approves a tool call, and keeps a screenshot
// in test-artifacts/ (gitignored). For an agent with sessions: 'owned' it lists the caller's own
// sessions and reopens and continues one. Without Chromium the tests are skipped with a loud line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { createAgent } from '../../src/agent/agent.ts';
import { echoModel } from '../../src/agent/models/echo.ts';
import { memoryStore } from '../../src/agent/store.ts';
import type { Principal, Tool } from '../../src/agent/types.ts';
import { apiToken } from '../../src/auth/api-token.ts';
import { jwt } from '../../src/auth/index.ts';
import { FIRST_TOOL_CALL, initAgentDir } from '../../src/cli/scaffold.ts';
import { serve } from '../../src/node/server.ts';
import { send } from '../helpers/http-client.ts';
import { assertPlaygroundInlined, root, startNodeServer, tempFolder, writeDir } from '../helpers/build.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const TOKEN = 'playground-token-0123456789abcdef';
const ARTIFACTS = join(root, 'test-artifacts');
const LAUNCH_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

const refunds: unknown[] = [];
const refund: Tool<{ orderId: string; amount: number }> = {
  name: 'refund',
  description: 'Refunds an order after a human approves',
  parameters: {
    type: 'object',
    properties: { orderId: { type: 'string' }, amount: { type: 'number' } },
    required: ['orderId', 'amount'],
  },
  needsApproval: true,
  execute: (args) => (refunds.push(args), { refunded: args.amount, orderId: args.orderId }),
};

async function startServer(t: { after(fn: () => Promise<void>): void }, playground: boolean) {
  const agent = createAgent({ name: 'playground', model: echoModel(), tools: [refund], store: memoryStore() });
  const server = await serve({ agent, auth: [apiToken(TOKEN)], port: 0, log: 'off', playground });
  t.after(() => server.close());
  return server;
}

/** Chromium with a throwaway profile, closed after the test; `undefined` (and a loud line) when there is none. */
async function launchChromium(t: TestContext) {
  if (!existsSync(CHROMIUM)) {
    const line = `SKIPPED: no Chromium at ${CHROMIUM}: the playground browser test did not run (apt-get install -y chromium)`;
    console.log(`\n${'!'.repeat(line.length)}\n${line}\n${'!'.repeat(line.length)}\n`);
    t.skip(line);
    return undefined;
  }
  const { chromium } = await import('playwright-core');
  const userDataDir = mkdtempSync(join(tmpdir(), 'agentward-chromium-'));
  const context = await chromium
    .launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: LAUNCH_ARGS })
    .catch((error) => {
      rmSync(userDataDir, { recursive: true, force: true });
      throw error;
    });
  // One hook, in this order: Chromium writes to its profile until it has closed (removing the
  // profile first failed with ENOTEMPTY, and the failed hook left Chromium running and the test process hanging).
  t.after(async () => {
    await context.close();
    rmSync(userDataDir, { recursive: true, force: true, maxRetries: 5 });
  });
  mkdirSync(ARTIFACTS, { recursive: true });
  return context;
}

/** Every request the page made, with the path and status of its answer. */
function watchRequests(page: Page): { method: string; path: string; status: number }[] {
  const asked: { method: string; path: string; status: number }[] = [];
  page.on('response', (response) =>
    asked.push({
      method: response.request().method(),
      path: new URL(response.url()).pathname,
      status: response.status(),
    }),
  );
  return asked;
}

/** Page errors and console errors, for the test to check at its end. */
function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
  return problems;
}

test('playground: GET <base>/playground is a self-contained page with a strict CSP, outside auth; other methods 405', async (t) => {
  const server = await startServer(t, true);
  const page = await send(`${server.url}/agent/playground`);
  assert.equal(page.status, 200);
  assert.match(page.headers['content-type'] ?? '', /^text\/html; charset=utf-8/);
  const csp = String(page.headers['content-security-policy'] ?? '');
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/]+=*'/);
  assert.match(csp, /connect-src 'self'/);
  assert.equal(page.headers['cache-control'], 'no-store');
  assert.doesNotMatch(
    page.text,
    /<script[^>]+src=|<link[^>]+href="(?!data:)|https?:\/\//,
    'nothing loaded from elsewhere',
  );
  assert.doesNotMatch(
    page.text,
    /localStorage|sessionStorage|document\.cookie|indexedDB/,
    'the token stays in page memory',
  );
  assert.equal((await send(`${server.url}/agent/playground`, { method: 'POST' })).status, 405);
  assert.equal(
    (await send(`${server.url}/agent/ui`, { method: 'POST', body: '{}' })).status,
    401,
    'the routes it calls stay behind auth',
  );
});

test('playground: the page inlines its script and styles, src/node/playground/script.js and styles.css as they are, and its CSP allows each by its SHA-256', async (t) => {
  const server = await startServer(t, true);
  const page = await send(`${server.url}/agent/playground`);
  assertPlaygroundInlined(page.text, String(page.headers['content-security-policy']));
});

test("playground: its script is browser code tsc checks: it starts with // @ts-check, and its tsconfig.json lists it with the DOM's types and none of Node's", () => {
  const folder = join(root, 'src', 'node', 'playground');
  assert.match(readFileSync(join(folder, 'script.js'), 'utf8'), /^\/\/ @ts-check\n/);
  const tsc = spawnSync(join(root, 'node_modules', '.bin', 'tsc'), ['--listFiles', '-p', folder], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(tsc.status, 0, `tsc -p src/node/playground: ${tsc.error ?? ''}${tsc.stdout}${tsc.stderr}`);
  const files = tsc.stdout.trim().split('\n');
  assert.ok(files.includes(join(folder, 'script.js')), `tsc checks script.js:\n${tsc.stdout}`);
  assert.ok(
    files.some((file) => file.endsWith('/lib.dom.d.ts')),
    'with the DOM types',
  );
  assert.deepEqual(
    files.filter((file) => file.includes('/@types/')),
    [],
    'without Node types (or any other package types)',
  );
});

test('playground: serve() without playground: true leaves <base>/playground to the handler (401 behind auth)', async (t) => {
  const server = await startServer(t, false);
  assert.equal((await send(`${server.url}/agent/playground`)).status, 401);
});

test('playground in Chromium: paste a token, send a message, see the streamed reply, approve a tool call; screenshot kept', async (t) => {
  const context = await launchChromium(t);
  if (context === undefined) return;
  const server = await startServer(t, true);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = watchProblems(page);
  const asked = watchRequests(page);

  try {
    await page.goto(`${server.url}/agent/playground`);
    // Without a token the agent answers 401, and the page says so.
    await page.fill('#message', 'hello before token');
    await page.click('#send');
    await page.locator('.msg.error', { hasText: '401' }).waitFor({ timeout: 10_000 });

    await page.fill('#token', TOKEN);
    // A shared agent has no sessions route: the page knows it and never asks.
    await page.click('#use-token');
    assert.equal(await page.locator('#sessions').isHidden(), true, 'a shared agent: no sessions list');
    assert.equal(await page.inputValue('#token'), '', 'the field is cleared; the token lives in page memory');
    await page.fill('#message', 'hello from the playground');
    await page.press('#message', 'Enter');
    const reply = page.locator('.msg.assistant.done').last();
    await reply.locator('.text', { hasText: 'hello from the playground' }).waitFor({ timeout: 10_000 });

    await page.fill('#message', '/tool refund {"orderId":"A-17","amount":25}');
    await page.click('#send');
    const approve = page.locator('button.approve');
    await approve.waitFor({ timeout: 10_000 });
    assert.match(await page.locator('.tool').last().innerText(), /refund[\s\S]*A-17[\s\S]*waiting for your approval/);
    assert.deepEqual(refunds, [], 'nothing runs before the approval');
    await approve.click();
    await page.locator('.msg.assistant.done .text', { hasText: 'Tool results: refund' }).waitFor({ timeout: 10_000 });
    assert.deepEqual(refunds, [{ orderId: 'A-17', amount: 25 }]);
    assert.equal(await page.locator('button.approve').count(), 0);
    assert.match(await page.locator('.tool').last().innerText(), /approved/);
    assert.equal(await page.locator('#sessions').isHidden(), true, 'no sessions route: the list is hidden');

    const storage = await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie]);
    assert.deepEqual(storage, [0, 0, '']);
    // The browser logs each answer that is not 2xx: only the 401 asked for above.
    assert.deepEqual(
      problems.filter((problem) => !/status of 401/.test(problem)),
      [],
    );
    assert.deepEqual(
      asked.filter((request) => request.path === '/agent/sessions' || request.status === 404),
      [],
      'no request 404s by design',
    );
    assert.equal(await page.locator('#who').isHidden(), true, 'only agentward dev says who a request ran as');
  } finally {
    await page.screenshot({ path: join(ARTIFACTS, 'playground.png'), fullPage: true });
  }
  assert.ok(existsSync(join(ARTIFACTS, 'playground.png')));
});

const ALICE_TOKEN = 'playground-alice-0123456789abcdef';
const BOB_TOKEN = 'playground-bob-0123456789abcdef01';

async function principalOf(auth: ReturnType<typeof apiToken>, token: string): Promise<Principal> {
  const principal = await auth(new Request('http://localhost/', { headers: { authorization: `Bearer ${token}` } }));
  assert.equal(principal?.authenticator, 'api-token');
  return principal as Principal;
}

/** The titles the page lists, once it lists exactly `count` sessions. */
async function listedTitles(page: Page, count: number): Promise<string[]> {
  const rows = page.locator('#session-list button.session');
  for (let tries = 0; (await rows.count()) !== count; tries++) {
    assert.ok(tries < 200, `the list never showed ${count} sessions (it shows ${await rows.count()})`);
    await page.waitForTimeout(50);
  }
  return page.locator('#session-list .session-title').allInnerTexts();
}

async function say(page: Page, text: string) {
  const replies = await page.locator('.msg.assistant.done').count();
  await page.fill('#message', text);
  await page.press('#message', 'Enter');
  await page.locator('.msg.assistant.done').nth(replies).waitFor({ timeout: 10_000 });
}

test("playground in Chromium, sessions: 'owned': each token lists only its own sessions; one reopens with its transcript and pending approval and continues in place; screenshot kept", async (t) => {
  const context = await launchChromium(t);
  if (context === undefined) return;
  const alice = apiToken(ALICE_TOKEN, { id: 'alice' });
  const bob = apiToken(BOB_TOKEN, { id: 'bob' });
  const agent = createAgent({
    name: 'playground',
    model: echoModel(),
    tools: [refund],
    store: memoryStore(),
    sessions: 'owned',
  });
  const server = await serve({ agent, auth: [alice, bob], port: 0, log: 'off', playground: true });
  t.after(() => server.close());
  const [alicePrincipal, bobPrincipal] = [await principalOf(alice, ALICE_TOKEN), await principalOf(bob, BOB_TOKEN)];
  refunds.length = 0;

  const page = context.pages()[0] ?? (await context.newPage());
  const problems = watchProblems(page);
  const bobPage = await context.newPage();
  const bobProblems = watchProblems(bobPage);
  try {
    // Each page is brought to the front before use: a background tab's animation frames are throttled, and clicks wait for them.
    await page.bringToFront();
    await page.goto(`${server.url}/agent/playground`);
    await page.fill('#token', ALICE_TOKEN);
    await page.click('#use-token');
    await page.locator('#no-sessions').waitFor({ state: 'visible', timeout: 10_000 });
    assert.deepEqual(await listedTitles(page, 0), []);

    // Alice's first session ends with a tool call waiting for approval; her second is plain.
    await say(page, 'alice asks about order B-1');
    await page.fill('#message', '/tool refund {"orderId":"B-1","amount":5}');
    await page.click('#send');
    await page.locator('button.approve').waitFor({ timeout: 10_000 });
    assert.deepEqual(await listedTitles(page, 1), ['alice asks about order B-1']);
    await page.click('#new-chat');
    assert.equal(await page.locator('.msg').count(), 0, 'New chat empties the log');
    await say(page, 'alice second chat');
    assert.deepEqual(await listedTitles(page, 2), ['alice second chat', 'alice asks about order B-1'], 'newest first');
    assert.match(await page.locator('#session-list button.session').nth(1).innerText(), /1 pending/);

    const own = await agent.listSessions({ principal: alicePrincipal });
    assert.deepEqual(
      own.sessions.map((session) => session.title),
      ['alice second chat', 'alice asks about order B-1'],
    );
    const [second, first] = own.sessions.map((session) => session.sessionId);
    assert.equal(await page.textContent('#chat-id'), `chat ${second}`);

    // Bob: a wrong token is named as such; his own token lists none of Alice's sessions, then only his.
    await bobPage.bringToFront();
    await bobPage.goto(`${server.url}/agent/playground`);
    await bobPage.fill('#token', 'not-a-token-of-anyone-0123456789');
    await bobPage.click('#use-token');
    await bobPage.locator('#token-state', { hasText: 'token refused (401)' }).waitFor({ timeout: 10_000 });
    assert.equal(await bobPage.locator('#sessions').isHidden(), true);
    await bobPage.fill('#token', BOB_TOKEN);
    await bobPage.click('#use-token');
    await bobPage.locator('#no-sessions').waitFor({ state: 'visible', timeout: 10_000 });
    assert.deepEqual(await listedTitles(bobPage, 0), [], "bob's list holds none of alice's sessions");
    await say(bobPage, 'bob has his own question');
    assert.deepEqual(await listedTitles(bobPage, 1), ['bob has his own question']);
    assert.deepEqual(
      (await agent.listSessions({ principal: bobPrincipal })).sessions.map((session) => session.title),
      ['bob has his own question'],
    );
    // Reopening one of Alice's sessions by id answers as an unknown one would, and the page says so.
    await bobPage.evaluate(
      (id) => (globalThis as unknown as { openSession(id: string): Promise<void> }).openSession(id),
      first!,
    );
    await bobPage.locator('.msg.error', { hasText: 'could not open the session: 404' }).waitFor({ timeout: 10_000 });
    assert.match(await bobPage.locator('.msg.error').last().innerText(), /not yours/);
    // And an approval button for one of Alice's approvals, pressed in Bob's page: 404, named as such, nothing runs.
    const [pending] = await agent.pendingApprovals(first!, { principal: alicePrincipal });
    await bobPage.evaluate((id) => {
      const page = globalThis as unknown as {
        toolCard(parent: Element, name: string, input: unknown): Element;
        askApproval(card: Element, id: string): void;
      };
      page.askApproval(page.toolCard(document.getElementById('log')!, 'refund', {}), id);
    }, pending!.id);
    await bobPage.locator('button.approve').click();
    await bobPage.locator('.msg.error', { hasText: 'no such approval for this token' }).waitFor({ timeout: 10_000 });
    assert.deepEqual(refunds, []);

    // Alice reopens her first session: its transcript, its pending approval, then she continues it.
    await page.bringToFront();
    await page.locator('#session-list button.session', { hasText: 'alice asks about order B-1' }).click();
    await page.locator('#chat-id', { hasText: first! }).waitFor({ timeout: 10_000 });
    assert.equal(
      await page.locator('#session-list button.session.open .session-title').innerText(),
      'alice asks about order B-1',
    );
    const bubbles = page.locator('.msg');
    assert.deepEqual(
      (await bubbles.locator('.text').allInnerTexts()).slice(0, 2),
      ['alice asks about order B-1', 'alice asks about order B-1'],
      'the first exchange, echoed',
    );
    assert.equal(
      await page.locator('.msg', { hasText: 'alice second chat' }).count(),
      0,
      'nothing of the other session',
    );
    const card = page.locator('.tool', { hasText: 'B-1' });
    assert.match(await card.innerText(), /refund[\s\S]*waiting for your approval/);
    assert.deepEqual(refunds, []);
    await card.locator('button.approve').click();
    await page.locator('.msg.assistant.done .text', { hasText: 'Tool results: refund' }).waitFor({ timeout: 10_000 });
    assert.deepEqual(refunds, [{ orderId: 'B-1', amount: 5 }]);
    await say(page, 'alice continues the first chat');
    await page
      .locator('.msg.assistant.done .text', { hasText: 'alice continues the first chat' })
      .waitFor({ timeout: 10_000 });

    // The server's transcripts: the message landed in the first session, the second is untouched.
    const firstMessages = (await agent.transcript(first!, { principal: alicePrincipal })).messages;
    const userTexts = firstMessages.filter((message) => message.role === 'user').map((message) => message.content);
    assert.deepEqual(userTexts, [
      'alice asks about order B-1',
      '/tool refund {"orderId":"B-1","amount":5}',
      'alice continues the first chat',
    ]);
    assert.equal(firstMessages.at(-1)?.role, 'assistant');
    assert.match(String(firstMessages.at(-1)?.content), /alice continues the first chat/);
    const http = await send(`${server.url}/agent/chat/${first}`, {
      headers: { authorization: `Bearer ${ALICE_TOKEN}` },
    });
    assert.equal(http.status, 200);
    assert.deepEqual(JSON.parse(http.text).messages, firstMessages);
    const secondMessages = (await agent.transcript(second!, { principal: alicePrincipal })).messages;
    assert.deepEqual(
      secondMessages.filter((message) => message.role === 'user').map((message) => message.content),
      ['alice second chat'],
    );
    assert.deepEqual(await agent.pendingApprovals(first!, { principal: alicePrincipal }), []);
    // Still two sessions, the continued one first and no longer pending.
    for (
      let tries = 0;
      (await page.locator('#session-list button.session').first().innerText()).split('\n')[0] !==
      'alice asks about order B-1';
      tries++
    ) {
      assert.ok(tries < 200, 'the list was not refreshed after the exchange');
      await page.waitForTimeout(50);
    }
    assert.deepEqual(await listedTitles(page, 2), ['alice asks about order B-1', 'alice second chat']);
    assert.doesNotMatch(await page.locator('#session-list').innerText(), /pending/);

    await page.click('#new-chat');
    assert.notEqual(await page.textContent('#chat-id'), `chat ${first}`);
    assert.equal(await page.locator('#session-list button.session.open').count(), 0);

    const storage = await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie]);
    assert.deepEqual(storage, [0, 0, '']);
    assert.deepEqual(problems, []);
    assert.deepEqual(
      bobProblems.filter((problem) => !/status of (401|404)/.test(problem)),
      [],
    );
  } finally {
    await page
      .locator('#session-list button.session')
      .first()
      .click()
      .catch(() => {});
    await page
      .locator('.msg.assistant.done')
      .last()
      .waitFor({ timeout: 5_000 })
      .catch(() => {});
    await page.screenshot({ path: join(ARTIFACTS, 'playground-sessions.png'), fullPage: true });
  }
  assert.ok(existsSync(join(ARTIFACTS, 'playground-sessions.png')));
});

test("playground in Chromium, sessions: 'owned': a long list comes a page at a time; More appends the rest, newest first", async (t) => {
  const context = await launchChromium(t);
  if (context === undefined) return;
  const alice = apiToken(ALICE_TOKEN, { id: 'alice' });
  const agent = createAgent({ name: 'playground', model: echoModel(), store: memoryStore(), sessions: 'owned' });
  const server = await serve({ agent, auth: [alice], port: 0, log: 'off', playground: true });
  t.after(() => server.close());
  const principal = await principalOf(alice, ALICE_TOKEN);
  for (let n = 1; n <= 23; n++) await agent.send(`session number ${n}`, { principal });
  // The server's order (updatedAt descending, then id descending: several share a millisecond).
  const titles = (await agent.listSessions({ principal, limit: 100 })).sessions.map((session) => session.title);
  assert.equal(new Set(titles).size, 23);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = watchProblems(page);
  await page.goto(`${server.url}/agent/playground`);
  await page.fill('#token', ALICE_TOKEN);
  await page.click('#use-token');
  assert.deepEqual(await listedTitles(page, 20), titles.slice(0, 20));
  await page.click('#more-sessions');
  assert.deepEqual(await listedTitles(page, 23), titles);
  assert.equal(await page.locator('#more-sessions').isHidden(), true, 'no further page');
  assert.deepEqual(problems, []);
});

const cliFile = join(root, 'src', 'cli', 'main.ts');

/** `agentward dev <dir>` (a real process), its sessions in a folder of the test. */
async function startDev(t: TestContext, dir: string) {
  const server = await startNodeServer([cliFile, 'dev', dir], {
    AGENT_LOG: 'off',
    AGENT_DATA_DIR: tempFolder(t, 'agentward-playground-data-'),
  });
  t.after(async () => void (await server.stop()));
  return server;
}

test("playground in Chromium on agentward init's scaffold under agentward dev: no request 404s, the scaffold's tool asks Approve or Deny, the page says who you are; screenshot kept", async (t) => {
  const context = await launchChromium(t);
  if (context === undefined) return;
  const dir = join(tempFolder(t, 'agentward-playground-init-'), 'my-agent');
  const { apiToken: baked } = await initAgentDir(dir);
  const server = await startDev(t, dir);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = watchProblems(page);
  const asked = watchRequests(page);
  try {
    await page.goto(`${server.agentUrl}/playground`);
    assert.match((await page.getAttribute('#message', 'placeholder')) ?? '', /\/tool NAME/);
    await page.fill('#token', baked);
    await page.click('#use-token');
    await page
      .locator('#who.accepted', { hasText: 'you are api-token (service, api-token)' })
      .waitFor({ timeout: 10_000 });

    // The page's own hint, on the scaffold's tool: denied first, then approved.
    for (const [button, state, reply] of [
      ['deny', 'denied', /Tool results: refund: .*denied/i],
      ['approve', 'approved', /Tool results: refund: \{"orderId":"A-1","refunded":20\}/],
    ] as const) {
      const replies = await page.locator('.msg.assistant').count();
      await page.fill('#message', FIRST_TOOL_CALL);
      await page.click('#send');
      const card = page.locator('.tool').last();
      await card.locator(`button.${button}`).waitFor({ timeout: 10_000 });
      assert.match(
        await card.innerText(),
        /tool refund[\s\S]*"orderId": "A-1"[\s\S]*waiting for your approval\s*Approve\s*Deny/,
      );
      await card.locator(`button.${button}`).click();
      await page
        .locator('.msg.assistant.done')
        .nth(replies + 1)
        .waitFor({ timeout: 10_000 });
      assert.match(await card.locator('.tool-state').innerText(), new RegExp(state));
      assert.match(await page.locator('.msg.assistant.done .text').last().innerText(), reply);
    }
    assert.match(await page.locator('#who').innerText(), /you are api-token/);
    assert.deepEqual(problems, []);
    assert.deepEqual(
      asked.filter((request) => request.status >= 400),
      [],
      'no request failed, none 404s by design',
    );
    assert.deepEqual(
      [
        ...new Set(
          asked.map((request) => `${request.method} ${request.path.replace(/\/approvals\/.+$/, '/approvals/:id')}`),
        ),
      ].sort(),
      ['GET /agent/playground', 'GET /agent/playground/whoami', 'POST /agent/approvals/:id', 'POST /agent/ui'],
    );
  } finally {
    await page.screenshot({ path: join(ARTIFACTS, 'playground-scaffold.png'), fullPage: true });
  }
});

const JWT_SECRET = 'playground-jwt-secret-0123456789abcdef';
const ISSUER = 'https://id.playground.example';

/** An HS256 token for the dev server's jwt() entry, `exp` seconds from now. */
function token(claims: Record<string, unknown>, exp = 300): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const signed = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iss: ISSUER, aud: 'agent', sub: 'ada', iat: now - 5, exp: now + exp, ...claims })}`;
  return `${signed}.${createHmac('sha256', JWT_SECRET).update(signed).digest('base64url')}`;
}

const JWT_DIR = {
  'agent.ts':
    "import { createAgent, echoModel } from 'agentward';\nexport default createAgent({ name: 'jwt-dev', model: echoModel() });\n",
  'auth.ts': `import { jwt } from 'agentward/auth';\nexport default jwt({ secret: ${JSON.stringify(JWT_SECRET)}, audience: 'agent', issuer: ${JSON.stringify(ISSUER)} });\n`,
};

test('playground in Chromium on a JWT-protected agentward dev: a refused token shows why (expired, audience, signature), never the token; an accepted one shows its principal; screenshot kept', async (t) => {
  const context = await launchChromium(t);
  if (context === undefined) return;
  const dir = writeDir(tempFolder(t, 'agentward-playground-jwt-'), JWT_DIR);
  const server = await startDev(t, dir);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = watchProblems(page);
  const asked = watchRequests(page);
  const refusedTokens = {
    expired: token({}, -60),
    audience: token({ aud: 'another-api' }),
    signature: `${token({}).slice(0, -4)}AAAA`,
  };
  try {
    await page.goto(`${server.agentUrl}/playground`);
    for (const [reason, refused] of Object.entries(refusedTokens)) {
      await page.fill('#token', refused);
      await page.click('#use-token');
      await page.locator('#who.refused', { hasText: `jwt refused the token: ${reason}` }).waitFor({ timeout: 10_000 });
      // The request itself says why too, with its 401.
      const errors = await page.locator('.msg.error').count();
      await page.fill('#message', `hello with a token refused for ${reason}`);
      await page.click('#send');
      await page.locator('.msg.error').nth(errors).waitFor({ timeout: 10_000 });
      assert.match(
        await page.locator('.msg.error').last().innerText(),
        new RegExp(`401 Unauthorized \\(jwt refused the token: ${reason}\\)`),
      );
      assert.match(await page.locator('#who').innerText(), new RegExp(`jwt refused the token: ${reason}`));
      const shown = await page.evaluate(() => document.documentElement.outerHTML + document.body.innerText);
      assert.equal(shown.includes(refused), false, 'the token is never on the page');
      assert.equal(shown.includes(refused.split('.')[2]!), false, 'nor its signature');
    }
    const accepted = token({ sub: 'ada' });
    await page.fill('#token', accepted);
    await page.click('#use-token');
    await page
      .locator('#who.accepted', { hasText: `you are ada (user, jwt, issuer ${ISSUER})` })
      .waitFor({ timeout: 10_000 });
    await page.fill('#message', 'hello as ada');
    await page.press('#message', 'Enter');
    await page.locator('.msg.assistant.done .text', { hasText: 'hello as ada' }).waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('#who').innerText(), `you are ada (user, jwt, issuer ${ISSUER})`);
    assert.equal((await page.evaluate(() => document.documentElement.outerHTML)).includes(accepted), false);
    // The browser logs the 401s asked for; nothing else failed, and nothing 404ed.
    assert.deepEqual(
      problems.filter((problem) => !/status of 401/.test(problem)),
      [],
    );
    assert.deepEqual(
      asked.filter((request) => request.status === 404 || request.path === '/agent/sessions'),
      [],
    );
  } finally {
    await page.screenshot({ path: join(ARTIFACTS, 'playground-jwt.png'), fullPage: true });
  }
});

test('who a request ran as, and why a token was refused, is said by agentward dev only: never by start (AGENTWARD_DEV_CHILD=1 set or not), a build or serve()', async (t) => {
  const dir = writeDir(tempFolder(t, 'agentward-playground-start-'), JWT_DIR);
  const dev = await startDev(t, dir);
  // The variable the dev loop once set for its server turns nothing on (design §26).
  const started = await startNodeServer([cliFile, 'start', dir, '--playground', '--log-refusals'], {
    AGENT_LOG: 'off',
    AGENTWARD_DEV_CHILD: '1',
  });
  t.after(async () => void (await started.stop()));
  const programmatic = await serve({
    agent: createAgent({ name: 'serve', model: echoModel(), store: memoryStore() }),
    auth: [apiToken(TOKEN)],
    port: 0,
    log: 'off',
    playground: true,
  });
  t.after(() => programmatic.close());

  const post = (url: string, authorization: string) =>
    send(url, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: '{"message":"hi"}',
    });
  const expired = `Bearer ${token({}, -60)}`;
  const valid = `Bearer ${token({})}`;
  // dev: both said, on the answer and by whoami.
  assert.equal(
    (await post(dev.agentUrl, expired)).headers['x-agentward-dev-refusal'],
    '{"entry":"jwt","reason":"expired"}',
  );
  assert.equal(
    (await post(dev.agentUrl, valid)).headers['x-agentward-dev-principal'],
    `{"id":"ada","type":"user","authenticator":"jwt","issuer":"${ISSUER}"}`,
  );
  const whoami = await send(`${dev.agentUrl}/playground/whoami`, { headers: { authorization: expired } });
  assert.deepEqual(JSON.parse(whoami.text), { refused: { status: 401, entry: 'jwt', reason: 'expired' } });
  assert.match((await send(`${dev.agentUrl}/playground`)).text, /<body data-sessions="shared" data-dev="on">/);

  // start (even with the playground and --log-refusals), and serve(): nothing.
  for (const url of [started.agentUrl, `${programmatic.url}/agent`]) {
    for (const authorization of [expired, valid, `Bearer ${TOKEN}`]) {
      const answer = await post(url, authorization);
      assert.deepEqual(
        Object.keys(answer.headers).filter((name) => name.startsWith('x-agentward')),
        [],
        `${url} ${answer.status}`,
      );
    }
    assert.equal(
      (await send(`${url}/playground/whoami`, { headers: { authorization: valid } })).status,
      url === started.agentUrl ? 404 : 401,
    );
    assert.match((await send(`${url}/playground`)).text, /<body data-sessions="shared" data-dev="off">/);
  }
  // A string key is no way in: serve()'s options are closed.
  await assert.rejects(
    serve({ agent: createAgent({ name: 'x', model: echoModel() }), port: 0, devInspect: true } as never),
    /unknown option "devInspect"/,
  );
});

test("agentward dev's /playground/whoami sits behind limits.failures like every route: past the address's failures it answers 429, not the next token's reason", async (t) => {
  const dir = writeDir(tempFolder(t, 'agentward-playground-failures-'), {
    ...JWT_DIR,
    'agentward.json': JSON.stringify({ limits: { failures: { limit: 3, windowSec: 600 } } }),
  });
  const dev = await startDev(t, dir);
  const whoami = (authorization: string) => send(`${dev.agentUrl}/playground/whoami`, { headers: { authorization } });
  const expired = `Bearer ${token({}, -60)}`;
  for (let i = 0; i < 3; i++) {
    const answer = await whoami(expired);
    assert.deepEqual(
      JSON.parse(answer.text),
      { refused: { status: 401, entry: 'jwt', reason: 'expired' } },
      `try ${i}`,
    );
  }
  const past = await whoami(expired);
  assert.equal(past.status, 429);
  assert.equal(past.text.includes('expired'), false, 'no reason past the failures');
  // The agent route counts the same failures: the address is out of tries there too.
  const post = await send(dev.agentUrl, {
    method: 'POST',
    headers: { authorization: expired, 'content-type': 'application/json' },
    body: '{"message":"hi"}',
  });
  assert.equal(post.status, 429);
});

test("playground in Chromium: a reply reads in the order its run went (text, the tool card, the text after it), shows the run's usage, and suggests /tool only for echoModel (design §31); screenshot kept", async (t) => {
  const context = await launchChromium(t);
  if (context === undefined) return;
  // A model that says something, calls a tool, then answers with its result, reporting usage each turn.
  const model = {
    async generate(request: { messages: readonly { role: string }[] }) {
      const usage = { inputTokens: 12, outputTokens: 5 };
      if (request.messages.at(-1)?.role === 'tool') return { text: 'The order is shipped.', usage };
      return {
        text: 'Let me look that up.',
        toolCalls: [{ id: 'call-1', name: 'lookup', arguments: { orderId: 'A-1' } }],
        usage,
      };
    },
  };
  const lookup: Tool<{ orderId: string }> = {
    name: 'lookup',
    description: 'Looks an order up',
    parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
    execute: () => ({ status: 'shipped' }),
  };
  const server = await serve({
    agent: createAgent({ name: 'ordered', model, tools: [lookup], store: memoryStore() }),
    auth: [apiToken(TOKEN)],
    port: 0,
    log: 'off',
    playground: true,
  });
  t.after(() => server.close());
  const echo = await startServer(t, true);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = watchProblems(page);
  try {
    await page.goto(`${echo.url}/agent/playground`);
    assert.match((await page.getAttribute('#message', 'placeholder')) ?? '', /try: \/tool NAME/);
    await page.goto(`${server.url}/agent/playground`);
    assert.equal(await page.getAttribute('#message', 'placeholder'), 'Message (Enter sends)');
    await page.fill('#token', TOKEN);
    await page.click('#use-token');
    await page.fill('#message', 'where is A-1?');
    await page.press('#message', 'Enter');
    const reply = page.locator('.msg.assistant.done').last();
    await reply.waitFor({ timeout: 10_000 });
    const parts = await reply.evaluate((node) =>
      [...node.children].map(
        (child) => `${child.className}: ${(child as HTMLElement).innerText.replace(/\s+/g, ' ').trim()}`,
      ),
    );
    assert.deepEqual(parts, [
      'who: Agent',
      'text: Let me look that up.',
      'tool: tool lookup { "orderId": "A-1" } output: {"status":"shipped"}',
      'text: The order is shipped.',
      'usage: 24 tokens in · 10 out',
    ]);
    assert.deepEqual(problems, []);
  } finally {
    await page.screenshot({ path: join(ARTIFACTS, 'playground-order-usage.png'), fullPage: true });
  }
});

test("playground in Chromium: Approve with a token that lacks the approve scope shows the 403's missing scope from its challenge, not a bare 403 Forbidden (design §31)", async (t) => {
  const context = await launchChromium(t);
  if (context === undefined) return;
  const agent = createAgent({ name: 'playground', model: echoModel(), tools: [refund], store: memoryStore() });
  const server = await serve({
    agent,
    auth: [jwt({ secret: JWT_SECRET, audience: 'agent', issuer: ISSUER })],
    scopes: { approve: ['agent:approve'] },
    port: 0,
    log: 'off',
    playground: true,
  });
  t.after(() => server.close());
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`${server.url}/agent/playground`);
  const chatOnly = token({ scope: 'agent:chat' });
  await page.fill('#token', chatOnly);
  await page.click('#use-token');
  await page.fill('#message', '/tool refund {"orderId":"A-9","amount":5}');
  await page.click('#send');
  const approve = page.locator('button.approve');
  await approve.waitFor({ timeout: 10_000 });
  await approve.click();
  const error = page.locator('.msg.error', { hasText: '403' });
  await error.waitFor({ timeout: 10_000 });
  assert.equal(
    await error.locator('.text').innerText(),
    '403 Forbidden (this token lacks the scope agent:approve: use a token that carries it)',
  );
  assert.ok(!(await page.content()).includes(chatOnly), 'never the token');
  assert.deepEqual(
    refunds.filter((args) => (args as { orderId: string }).orderId === 'A-9'),
    [],
  );
});
