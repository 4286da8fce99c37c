// The playground in a real browser: Debian's Chromium driven by playwright-core. It pastes a
// token, sends a message, sees the streamed reply, approves a tool call, and keeps a screenshot
// in test-artifacts/ (gitignored). Without Chromium the test is skipped with a loud line.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createAgent } from '../../src/agent/agent.ts';
import { echoModel } from '../../src/agent/models/echo.ts';
import { memoryStore } from '../../src/agent/store.ts';
import type { Tool } from '../../src/agent/types.ts';
import { apiToken } from '../../src/auth/api-token.ts';
import { serve } from '../../src/node/server.ts';
import { send } from '../fixtures-node/http-client.ts';
import { root } from './build-helpers.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const TOKEN = 'playground-token-0123456789abcdef';
const ARTIFACTS = join(root, 'test-artifacts');
const LAUNCH_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

const refunds: unknown[] = [];
const refund: Tool<{ orderId: string; amount: number }> = {
  name: 'refund',
  description: 'Refunds an order after a human approves',
  parameters: { type: 'object', properties: { orderId: { type: 'string' }, amount: { type: 'number' } }, required: ['orderId', 'amount'] },
  needsApproval: true,
  execute: (args) => (refunds.push(args), { refunded: args.amount, orderId: args.orderId }),
};

async function startServer(t: { after(fn: () => Promise<void>): void }, playground: boolean) {
  const agent = createAgent({ name: 'playground', model: echoModel(), tools: [refund], store: memoryStore() });
  const server = await serve({ agent, auth: [apiToken(TOKEN)], port: 0, log: 'off', playground });
  t.after(() => server.close());
  return server;
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
  assert.doesNotMatch(page.text, /<script[^>]+src=|<link[^>]+href="(?!data:)|https?:\/\//, 'nothing loaded from elsewhere');
  assert.doesNotMatch(page.text, /localStorage|sessionStorage|document\.cookie|indexedDB/, 'the token stays in page memory');
  assert.equal((await send(`${server.url}/agent/playground`, { method: 'POST' })).status, 405);
  assert.equal((await send(`${server.url}/agent/ui`, { method: 'POST', body: '{}' })).status, 401, 'the routes it calls stay behind auth');
});

test('playground: serve() without playground: true leaves <base>/playground to the handler (401 behind auth)', async (t) => {
  const server = await startServer(t, false);
  assert.equal((await send(`${server.url}/agent/playground`)).status, 401);
});

test('playground in Chromium: paste a token, send a message, see the streamed reply, approve a tool call; screenshot kept', async (t) => {
  if (!existsSync(CHROMIUM)) {
    const line = `SKIPPED: no Chromium at ${CHROMIUM}: the playground browser test did not run (apt-get install -y chromium)`;
    console.log(`\n${'!'.repeat(line.length)}\n${line}\n${'!'.repeat(line.length)}\n`);
    t.skip(line);
    return;
  }
  const { chromium } = await import('playwright-core');
  const server = await startServer(t, true);
  const userDataDir = mkdtempSync(join(tmpdir(), 'agentgate-chromium-'));
  t.after(() => rmSync(userDataDir, { recursive: true, force: true }));
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: LAUNCH_ARGS });
  t.after(() => context.close());
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
  mkdirSync(ARTIFACTS, { recursive: true });

  try {
    await page.goto(`${server.url}/agent/playground`);
    // Without a token the agent answers 401, and the page says so.
    await page.fill('#message', 'hello before token');
    await page.click('#send');
    await page.locator('.msg.error', { hasText: '401' }).waitFor({ timeout: 10_000 });

    await page.fill('#token', TOKEN);
    await page.click('#use-token');
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
    // The browser logs each answer that is not 2xx: the 401 asked for above, and the 404 of the sessions probe.
    assert.deepEqual(problems.filter((problem) => !/status of (401|404)/.test(problem)), []);
  } finally {
    await page.screenshot({ path: join(ARTIFACTS, 'playground.png'), fullPage: true });
  }
  assert.ok(existsSync(join(ARTIFACTS, 'playground.png')));
});
