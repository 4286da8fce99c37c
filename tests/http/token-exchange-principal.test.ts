// The token a caller presented, beside its principal and nowhere else (design §27): routeAuth ties
// it to the principal only when jwt(), oidc() or introspection() verified it; the agent's dynamic
// tools function closes over the principal and a tool exchanges the token; a search of the
// principal, the transcript, the store, every log line and the tool's arguments finds it nowhere.
// A run resumed by a decision of the same caller (POST /approvals/:id, /ui, MCP decide) exchanges
// the decision's token; every other principal gets NO_SUBJECT_TOKEN, and never another's token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tool as aiTool } from 'ai';
import { z } from 'zod';
import {
  anonymous,
  apiToken,
  basic,
  introspection,
  routeAuth,
  TokenExchangeError,
  type AuthFn,
  type Principal,
} from '../../src/auth/index.ts';
import { jwtAt } from '../helpers/test-hook.ts';
import { createAgent, memoryAuditLog, memoryStore } from '../../src/agent/index.ts';
import type { Agent, Model } from '../../src/agent/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { AUDIENCE, ISSUER, NOW, claims, signToken, testKey } from '../helpers/jwt.ts';
import { dpopProof, thumbprint } from '../helpers/dpop.ts';
import { accessToken, exchangeWith, fakeEndpoint, jwtEntry, principalOf } from '../helpers/token-endpoint.ts';

const endpoint = fakeEndpoint();
// Created first: routeAuth ties tokens to principals once a tokenExchange() exists.
const exchange = exchangeWith(endpoint.fetch);
const subjects = () => endpoint.exchanges().map((request) => request.form.get('subject_token'));

const isNoSubjectToken = (error: unknown) => error instanceof TokenExchangeError && error.code === 'NO_SUBJECT_TOKEN';

test('routeAuth ties the token to the principal when jwt() accepted it as Bearer or as DPoP, and when introspection() did', async () => {
  const bearer = await accessToken();
  const fromJwt = await principalOf(jwtEntry(), `Bearer ${bearer}`);
  // DPoP (RFC 9449): the bound token is the subject token, never the proof.
  const tokenKey = await testKey('ES256');
  const proofKey = await testKey('ES256');
  const bound = await signToken(
    { alg: 'ES256', typ: 'at+jwt' },
    claims({ cnf: { jkt: await thumbprint(proofKey.jwk) } }),
    tokenKey.sign,
  );
  const dpopEntry = jwtAt({ publicKey: tokenKey.jwk, issuer: ISSUER, audience: AUDIENCE }, () => NOW);
  const proof = await dpopProof(proofKey, { token: bound, iat: NOW });
  const dpopResult = await routeAuth(dpopEntry)(
    new Request('https://agent.example.com/agent', { headers: { authorization: `DPoP ${bound}`, dpop: proof } }),
  );
  assert.ok(dpopResult.ok);
  // An opaque token that the introspection endpoint calls active.
  const opaque = 'opaque-access-token-0123456789';
  const introspected = introspection({
    endpoint: 'https://id.example.com/introspect',
    clientId: 'rs',
    clientSecret: 'rs-secret',
    audience: AUDIENCE,
    _internal: {
      fetch: async () => Response.json({ active: true, sub: 'ada', aud: AUDIENCE, exp: NOW + 600 }),
      now: () => NOW * 1000,
    },
  });
  const fromIntrospection = await principalOf(introspected, `Bearer ${opaque}`);
  const before = endpoint.exchanges().length;
  for (const principal of [fromJwt, dpopResult.principal, fromIntrospection]) await exchange(principal);
  assert.deepEqual(subjects().slice(before), [bearer, bound, opaque]);
  for (const principal of [fromJwt, dpopResult.principal, fromIntrospection])
    assert.doesNotMatch(JSON.stringify(principal), new RegExp(`${bearer}|${bound}|${opaque}`));
});

test('apiToken(), basic(), anonymous(), a custom entry and a boolean function tie no token: NO_SUBJECT_TOKEN, and the endpoint never sees their credentials', async () => {
  const API_TOKEN = 'api-token-never-exchanged-0123456789';
  const custom: AuthFn = (request) =>
    request.headers.get('authorization') === `Bearer ${API_TOKEN}` ? { id: 'svc', type: 'service' } : null;
  const cases: [AuthFn | AuthFn[], string][] = [
    [apiToken(API_TOKEN), `Bearer ${API_TOKEN}`],
    [basic({ users: { ada: 'a-password-0123' } }), `Basic ${btoa('ada:a-password-0123')}`],
    [anonymous(), `Bearer ${API_TOKEN}`],
    [custom, `Bearer ${API_TOKEN}`],
    [(() => true) as never, `Bearer ${API_TOKEN}`],
  ];
  const before = endpoint.seen.length;
  for (const [entries, authorization] of cases)
    await assert.rejects(exchange(await principalOf(entries, authorization)), isNoSubjectToken);
  assert.equal(endpoint.seen.length, before);
});

test('a principal object a mapper hands to several callers is copied per request: each exchanges its own token, never the other', async () => {
  const shared = await principalOf(anonymous(), 'Bearer x');
  const entry = jwtEntry({ principal: () => shared });
  const [ada, grace] = [await accessToken(), await accessToken({ sub: 'grace' })];
  const first = await principalOf(entry, `Bearer ${ada}`);
  const second = await principalOf(entry, `Bearer ${grace}`);
  assert.notEqual(first, second);
  const before = endpoint.exchanges().length;
  await exchange(second);
  await exchange(first);
  assert.deepEqual(subjects().slice(before), [grace, ada]);
});

/** A model that calls `crm` once with a query, then answers with the tool's message. */
const callsCrm: Model = {
  async generate({ messages }) {
    const last = messages.at(-1)!;
    if (last.role === 'tool') return { text: last.content };
    return { toolCalls: [{ id: `call_${messages.length}`, name: 'crm', arguments: { query: 'renewals' } }] };
  },
};

/** An agent whose `crm` tool calls the CRM with a token exchanged for the run's principal. */
function crmAgent(needsApproval: boolean, data = new Map<string, string>()) {
  const seen = { principals: [] as (Principal | undefined)[], args: [] as unknown[], failures: [] as unknown[] };
  const agent = createAgent({
    name: 'crm-agent',
    model: callsCrm,
    store: memoryStore(data),
    tools: ({ principal }) => {
      seen.principals.push(principal);
      return {
        crm: aiTool({
          description: 'Asks the CRM',
          inputSchema: z.object({ query: z.string() }),
          needsApproval,
          execute: async (input, options) => {
            seen.args.push([input, options]);
            try {
              const token = await exchange(principal, { audience: 'https://crm.example.com' });
              return { crm: `answered ${input.query} with a ${token.tokenType} token` };
            } catch (error) {
              seen.failures.push(error);
              throw error;
            }
          },
        }),
      };
    },
  });
  return { agent, seen, data };
}

const post = (handler: (request: Request) => Promise<Response>, path: string, token: string, body: unknown) =>
  handler(
    new Request(`https://agent.example.com/agent${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );

/** Runs `body` with every console method recorded. */
async function logged<T>(body: () => Promise<T>): Promise<{ result: T; lines: string[] }> {
  const methods = ['log', 'info', 'warn', 'error', 'debug'] as const;
  const originals = methods.map((name) => console[name]);
  const lines: string[] = [];
  for (const name of methods)
    console[name] = (...args: unknown[]) =>
      void lines.push(
        args
          .map((arg) =>
            arg instanceof Error ? `${arg.stack} ${JSON.stringify(arg)}` : (JSON.stringify(arg) ?? String(arg)),
          )
          .join(' '),
      );
  try {
    return { result: await body(), lines };
  } finally {
    methods.forEach((name, index) => (console[name] = originals[index]!));
  }
}

test('through agentHandler: the tools function closes over the principal, the tool exchanges the token the caller presented; the principal, the transcript, the store, every log line and the tool arguments hold no trace of it', async () => {
  const { agent, seen, data } = crmAgent(false);
  const handler = agentHandler(agent, { basePath: '/agent', auth: [jwtEntry()] });
  const token = await accessToken();
  const signature = token.split('.')[2]!;
  const { result: response, lines } = await logged(async () => {
    const answer = await post(handler, '', token, { message: 'renewals?', sessionId: 'crm-1' });
    // A failing exchange logs its error too: the log must hold no token then either.
    await agent.send('again', { sessionId: 'crm-1' });
    return answer;
  });
  assert.equal(response.status, 200);
  const body = await response.text();
  assert.match(body, /answered renewals with a Bearer token/);
  assert.equal(subjects().at(-1), token, 'the subject token is the one presented');
  assert.equal(endpoint.exchanges().at(-1)!.form.get('audience'), 'https://crm.example.com');
  assert.equal(seen.failures.length, 1, 'the in-process send had no token to exchange');
  assert.ok(isNoSubjectToken(seen.failures[0]));
  assert.ok(lines.length > 0, 'the failure was logged');
  const transcript = await agent.transcript('crm-1');
  const places = {
    principal: JSON.stringify(seen.principals),
    'the answer': body,
    'the transcript': JSON.stringify(transcript),
    'the store': JSON.stringify([...data]),
    'the log': lines.join('\n'),
    'the tool arguments': JSON.stringify(seen.args),
  };
  assert.ok(places.principal.includes('user-1') && places['the store'].includes('renewals'));
  for (const [place, text] of Object.entries(places)) {
    assert.equal(text.includes(token), false, `${place} holds the token`);
    assert.equal(text.includes(signature), false, `${place} holds its signature`);
  }
});

async function paused(handler: (request: Request) => Promise<Response>, token: string, sessionId: string) {
  const started = (await (await post(handler, '', token, { message: 'renewals?', sessionId })).json()) as {
    status: string;
    approvals: { id: string }[];
  };
  assert.equal(started.status, 'awaiting-approval');
  return started.approvals[0]!.id;
}

test('POST /approvals/:id by the same caller (issuer, authenticator, id) resumes the run with the token presented on that request', async () => {
  const { agent } = crmAgent(true);
  const handler = agentHandler(agent, { basePath: '/agent', auth: [jwtEntry()] });
  const asked = await accessToken();
  const approvalId = await paused(handler, asked, 'approve-1');
  const deciding = await accessToken();
  const decided = await post(handler, `/approvals/${approvalId}`, deciding, { approved: true });
  assert.match(await decided.text(), /answered renewals with a Bearer token/);
  assert.equal(subjects().at(-1), deciding);
});

test('a run decided by another caller, or by agent.decide() in process, gets NO_SUBJECT_TOKEN: never the token of the caller who started it', async () => {
  const { agent, seen } = crmAgent(true);
  const handler = agentHandler(agent, { basePath: '/agent', auth: [jwtEntry()] });
  const before = endpoint.exchanges().length;
  await logged(async () => {
    const byGrace = await paused(handler, await accessToken(), 'approve-2');
    const grace = await accessToken({ sub: 'grace' });
    const decided = await post(handler, `/approvals/${byGrace}`, grace, { approved: true });
    assert.match(await decided.text(), /tool \\"crm\\" failed/);
    const inProcess = await paused(handler, await accessToken(), 'approve-3');
    const result = await agent.decide(inProcess, { approved: true });
    assert.equal(result.text, 'Error: tool "crm" failed');
  });
  assert.equal(endpoint.exchanges().length, before);
  assert.equal(seen.failures.length, 2);
  assert.ok(seen.failures.every(isNoSubjectToken));
});

test('MCP decide and the useChat endpoint: a decision by the same caller exchanges the token presented with it', async () => {
  const { agent } = crmAgent(true);
  const handler = agentHandler(agent, { basePath: '/agent', auth: [jwtEntry()], mcp: true });
  const rpc = (token: string, name: string, args: Record<string, unknown>) =>
    post(handler, '/mcp', token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
  const asked = (await (await rpc(await accessToken(), 'ask', { message: 'renewals?' })).json()) as {
    result: { structuredContent: { approvals: { id: string }[] } };
  };
  const deciding = await accessToken();
  const decided = await rpc(deciding, 'decide', {
    approvalId: asked.result.structuredContent.approvals[0]!.id,
    approved: true,
  });
  assert.match(await decided.text(), /answered renewals with a Bearer token/);
  assert.equal(subjects().at(-1), deciding);

  const chatId = 'ui-approve';
  const user = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'renewals?' }] };
  await (
    await post(handler, '/ui', await accessToken(), { id: chatId, messages: [user], trigger: 'submit-message' })
  ).text();
  const [pending] = await agent.pendingApprovals(chatId);
  const assistant = {
    id: 'm1',
    role: 'assistant',
    parts: [
      {
        type: 'tool-crm',
        toolCallId: pending!.toolCallId,
        state: 'approval-responded',
        input: { query: 'renewals' },
        approval: { id: pending!.id, approved: true },
      },
    ],
  };
  const viaUi = await accessToken();
  const streamed = await post(handler, '/ui', viaUi, {
    id: chatId,
    messages: [user, assistant],
    trigger: 'submit-message',
    messageId: 'm1',
  });
  assert.match(await streamed.text(), /answered renewals with a Bearer token/);
  assert.equal(subjects().at(-1), viaUi);
});

test('in process: send() with a principal made in code has no token to exchange', async () => {
  const { agent, seen } = crmAgent(false);
  const principal: Principal = { id: 'user-1', type: 'user', authenticator: 'jwt', issuer: ISSUER };
  await logged(() => agent.send('renewals?', { principal }));
  assert.equal(seen.failures.length, 1);
  assert.ok(isNoSubjectToken(seen.failures[0]));
});

// Keeps the Agent type import used when a test above changes.
void (null as unknown as Agent);

test('the presented token is reachable for the request’s lifetime only: a tool that keeps the principal cannot exchange it after the answer (design §32)', async () => {
  let kept: Principal | undefined;
  const agent = createAgent({
    name: 'keeper',
    model: callsCrm,
    store: memoryStore(),
    tools: ({ principal }) => ({
      crm: aiTool({
        description: 'Asks the CRM, and keeps the principal',
        inputSchema: z.object({ query: z.string() }),
        execute: async () => {
          kept = principal;
          const token = await exchange(principal, { audience: 'https://crm.example.com' });
          return { crm: `a ${token.tokenType} token` };
        },
      }),
    }),
  });
  const handler = agentHandler(agent, { basePath: '/agent', auth: [jwtEntry()] });
  const token = await accessToken();
  const answer = await post(handler, '', token, { message: 'renewals?' });
  assert.equal(answer.status, 200);
  assert.match(await answer.text(), /a Bearer token/, 'during the request, the tool exchanged it');
  assert.ok(kept !== undefined);
  await assert.rejects(exchange(kept!, { audience: 'https://crm.example.com' }), isNoSubjectToken);
  // The next request with the same token has it again, for its own lifetime.
  const again = await post(handler, '', token, { message: 'renewals?' });
  assert.match(await again.text(), /a Bearer token/);
  await assert.rejects(exchange(kept!, { audience: 'https://crm.example.com' }), isNoSubjectToken);
});

test("a token exchanged inside a request joins that request's audit log: the audience, never the token (design §34)", async () => {
  const { agent } = crmAgent(false);
  const log = memoryAuditLog();
  const handler = agentHandler(agent, { basePath: '/agent', auth: [jwtEntry()], audit: { log } });
  const token = await accessToken();
  assert.equal((await post(handler, '', token, { message: 'renewals?', sessionId: 'crm-audit' })).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const records: Record<string, unknown>[] = [];
  for await (const record of log.read()) records.push(record);
  const exchangedRecord = records.find((record) => record.type === 'token-exchanged');
  assert.deepEqual(exchangedRecord?.audience, ['https://crm.example.com']);
  const request = records.find((record) => record.status === 200);
  assert.equal(exchangedRecord?.requestId, request?.requestId, 'the request it was made in');
  assert.equal(JSON.stringify(records).includes(token.split('.')[2]!), false, 'no token in the log');
  // Outside a request (in process) an exchange has no log: nothing more is written.
  const before = records.length;
  await agent.send('again', { sessionId: 'crm-audit' });
  let after = 0;
  for await (const _ of log.read()) after++;
  assert.equal(after, before);
});
