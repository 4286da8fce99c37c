import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { slackChannel } from '../../src/node/slack.ts';
import { AuthConfigError } from '../../src/auth/errors.ts';
import { channelContext, expectedSessionId, platformApi, recordingAgent } from '../helpers/channels.ts';

const SIGNING_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const BOT_TOKEN = 'xoxb-test-bot-token';
const now = () => Math.floor(Date.now() / 1000);

/** Slack's documented request signing: `v0=` + hex HMAC-SHA256(signing secret, `v0:<timestamp>:<raw body>`). */
function slackSignature(secret: string, timestamp: number | string, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

function slackRequest(
  body: string,
  { timestamp = now() as number | string, secret = SIGNING_SECRET, headers = {} as Record<string, string> } = {},
): Request {
  return new Request('http://localhost/channels/slack', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': slackSignature(secret, timestamp, body),
      ...headers,
    },
    body,
  });
}

const messageEvent = (event: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: 'event_callback',
    team_id: 'T0001',
    event_id: 'Ev1',
    event: { type: 'message', user: 'U0042', channel: 'C0007', text: 'hello agent', ts: '1700000000.000100', ...event },
  });

async function setup(t: { after(fn: () => Promise<void>): void }) {
  const api = await platformApi();
  t.after(() => api.close());
  const { agent, sends } = recordingAgent();
  const context = channelContext(agent);
  const slack = slackChannel({ signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN, apiBaseUrl: api.baseUrl });
  return { api, sends, context, slack };
}

test('slack: url_verification with a valid signature is answered with its challenge', async (t) => {
  const { slack, context, sends } = await setup(t);
  const response = await slack(
    slackRequest(JSON.stringify({ type: 'url_verification', challenge: 'c-123', token: 'x' })),
    context,
  );
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { challenge: 'c-123' });
  assert.equal(sends.length, 0);
});

test('slack: a signed message event reaches the agent with the sender as principal and the reply is posted with chat.postMessage', async (t) => {
  const { slack, context, sends, api } = await setup(t);
  const response = await slack(slackRequest(messageEvent()), context);
  assert.equal(response.status, 200);
  await context.settled();

  assert.equal(sends.length, 1);
  assert.equal(sends[0]?.message, 'hello agent');
  assert.deepEqual(sends[0]?.options?.principal, {
    id: 'U0042',
    type: 'user',
    authenticator: 'slack',
    issuer: 'T0001',
  });
  assert.ok(Object.isFrozen(sends[0]?.options?.principal));
  assert.equal(sends[0]?.options?.sessionId, expectedSessionId('slack', SIGNING_SECRET, ['T0001', 'C0007', 'U0042']));

  assert.equal(api.calls.length, 1);
  assert.equal(api.calls[0]?.method, 'POST');
  assert.equal(api.calls[0]?.url, '/api/chat.postMessage');
  assert.equal(api.calls[0]?.headers.authorization, `Bearer ${BOT_TOKEN}`);
  assert.deepEqual(api.calls[0]?.body, { channel: 'C0007', text: 'echo: hello agent' });
});

test('slack: a reply to a threaded message is posted in the thread', async (t) => {
  const { slack, context, api } = await setup(t);
  await slack(slackRequest(messageEvent({ thread_ts: '1699999999.000001' })), context);
  await context.settled();
  assert.deepEqual(api.calls[0]?.body, { channel: 'C0007', text: 'echo: hello agent', thread_ts: '1699999999.000001' });
});

const refused: [string, () => Request][] = [
  [
    'a tampered body',
    () => {
      const signed = slackRequest(messageEvent());
      return new Request(signed.url, {
        method: 'POST',
        headers: signed.headers,
        body: messageEvent({ user: 'U_ADMIN' }),
      });
    },
  ],
  ['a timestamp older than 5 minutes', () => slackRequest(messageEvent(), { timestamp: now() - 301 })],
  ['a timestamp more than 5 minutes ahead', () => slackRequest(messageEvent(), { timestamp: now() + 301 })],
  [
    'a signature made with another signing secret',
    () => slackRequest(messageEvent(), { secret: 'another-signing-secret-0123456789' }),
  ],
  [
    'a signature over another timestamp',
    () => {
      const timestamp = now();
      const body = messageEvent();
      return new Request('http://localhost/channels/slack', {
        method: 'POST',
        headers: {
          'x-slack-request-timestamp': String(timestamp),
          'x-slack-signature': slackSignature(SIGNING_SECRET, timestamp - 1, body),
        },
        body,
      });
    },
  ],
  [
    'a missing X-Slack-Signature',
    () => {
      const body = messageEvent();
      return new Request('http://localhost/channels/slack', {
        method: 'POST',
        headers: { 'x-slack-request-timestamp': String(now()) },
        body,
      });
    },
  ],
  [
    'a missing X-Slack-Request-Timestamp',
    () => {
      const body = messageEvent();
      return new Request('http://localhost/channels/slack', {
        method: 'POST',
        headers: { 'x-slack-signature': slackSignature(SIGNING_SECRET, now(), body) },
        body,
      });
    },
  ],
  [
    'a signature without the v0= prefix',
    () =>
      slackRequest(messageEvent(), {
        headers: { 'x-slack-signature': slackSignature(SIGNING_SECRET, now(), messageEvent()).slice(3) },
      }),
  ],
  ['a non-numeric timestamp', () => slackRequest(messageEvent(), { timestamp: `${now()}.5` })],
];

for (const [name, makeRequest] of refused) {
  test(`slack: ${name} is refused with 401 and never reaches the agent`, async (t) => {
    const { slack, context, sends, api } = await setup(t);
    const response = await slack(makeRequest(), context);
    assert.equal(response.status, 401);
    assert.deepEqual(await response.json(), { error: 'Unauthorized' });
    await context.settled();
    assert.equal(sends.length, 0);
    assert.equal(api.calls.length, 0);
  });
}

test('slack: bot messages, message subtypes and Slack retries are acknowledged and not delivered', async (t) => {
  const { slack, context, sends, api } = await setup(t);
  const ignored = [
    slackRequest(messageEvent({ bot_id: 'B01', user: undefined })),
    slackRequest(messageEvent({ subtype: 'bot_message' })),
    slackRequest(messageEvent({ subtype: 'message_changed' })),
    slackRequest(messageEvent(), { headers: { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' } }),
    slackRequest(
      JSON.stringify({ type: 'event_callback', team_id: 'T0001', event: { type: 'reaction_added', user: 'U0042' } }),
    ),
  ];
  for (const request of ignored) assert.equal((await slack(request, context)).status, 200);
  await context.settled();
  assert.equal(sends.length, 0);
  assert.equal(api.calls.length, 0);
});

test('slack: a run waiting for approval posts what it waits for', async (t) => {
  const api = await platformApi();
  t.after(() => api.close());
  const { agent } = recordingAgent();
  agent.send = async () => ({
    sessionId: 's',
    status: 'awaiting-approval',
    text: '',
    messages: [],
    approvals: [{ id: 'ap-1', tool: 'refund', arguments: {}, toolCallId: 'c1' }],
  });
  const context = channelContext(agent);
  const slack = slackChannel({ signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN, apiBaseUrl: api.baseUrl });
  await slack(slackRequest(messageEvent()), context);
  await context.settled();
  assert.match(String((api.calls[0]?.body as { text: string }).text), /refund \(approval ap-1\)/);
});

test('slackChannel(): options that cannot work are configuration errors', () => {
  assert.throws(() => slackChannel({ signingSecret: '', botToken: BOT_TOKEN }), AuthConfigError);
  assert.throws(() => slackChannel({ signingSecret: SIGNING_SECRET, botToken: '' }), AuthConfigError);
  assert.throws(
    () => slackChannel({ signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN, apiBaseUrl: 'ftp://x' }),
    AuthConfigError,
  );
  assert.throws(() => slackChannel(undefined as never), AuthConfigError);
});

test('slack: session ids cannot be computed from public Slack ids: keyed with a secret, stable for every instance with that secret', async (t) => {
  const api = await platformApi();
  t.after(() => api.close());
  const idFrom = async (options: { signingSecret: string; sessionSecret?: string }, request: Request) => {
    const { agent, sends } = recordingAgent();
    const context = channelContext(agent);
    await slackChannel({ ...options, botToken: BOT_TOKEN, apiBaseUrl: api.baseUrl })(request, context);
    await context.settled();
    return sends[0]?.options?.sessionId;
  };
  const first = await idFrom({ signingSecret: SIGNING_SECRET }, slackRequest(messageEvent()));
  const restarted = await idFrom({ signingSecret: SIGNING_SECRET }, slackRequest(messageEvent({ text: 'later' })));
  assert.equal(first, restarted, 'another instance (or a restart) with the same secret continues the conversation');
  assert.match(first!, /^slack:[A-Za-z0-9_-]{43}$/);
  for (const publicId of ['T0001', 'C0007', 'U0042']) assert.ok(!first!.includes(publicId));
  const otherSecret = 'another-signing-secret-0123456789ab';
  const other = await idFrom({ signingSecret: otherSecret }, slackRequest(messageEvent(), { secret: otherSecret }));
  assert.notEqual(other, first);
  const chosen = 'a-session-secret-of-at-least-32-bytes!!';
  const withOption = await idFrom(
    { signingSecret: otherSecret, sessionSecret: chosen },
    slackRequest(messageEvent(), { secret: otherSecret }),
  );
  assert.equal(
    withOption,
    expectedSessionId('slack', chosen, ['T0001', 'C0007', 'U0042']),
    'sessionSecret keys the ids, so rotating the signing secret keeps them',
  );
  assert.throws(
    () => slackChannel({ signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN, sessionSecret: 'short' }),
    AuthConfigError,
  );
});

test('slack: a replayed request (same signature, or the same event_id) is acknowledged and not run again; the memory of seen requests is bounded', async (t) => {
  const { slack, context, sends, api } = await setup(t);
  const body = messageEvent();
  const timestamp = now();
  for (let i = 0; i < 5; i++) assert.equal((await slack(slackRequest(body, { timestamp }), context)).status, 200);
  // The same event signed again at another second (Slack would not; the event_id says it is the same).
  assert.equal((await slack(slackRequest(body, { timestamp: timestamp - 1 }), context)).status, 200);
  await context.settled();
  assert.equal(sends.length, 1);
  assert.equal(api.calls.length, 1);
  const next = JSON.stringify({ ...JSON.parse(body), event_id: 'Ev2' });
  await slack(slackRequest(next), context);
  await context.settled();
  assert.equal(sends.length, 2, 'a new event runs');
});

test('replayGuard: remembers at most max requests (oldest forgotten first), each for twice the signature window', async () => {
  const { replayGuard, MAX_SIGNATURE_AGE_SEC } = await import('../../src/node/channel.ts');
  const seen = replayGuard(3);
  assert.equal(seen(['a', 'a-id']), false);
  assert.equal(seen(['x', 'a-id']), true, 'the platform id alone marks a replay');
  for (const key of ['b', 'c', 'd']) assert.equal(seen([key]), false);
  assert.equal(seen(['a']), false, 'forgotten: only 3 are kept');
  assert.equal(seen(['d']), true);
  const realNow = Date.now;
  try {
    const start = realNow();
    Date.now = () => start + 2 * MAX_SIGNATURE_AGE_SEC * 1000 + 1;
    assert.equal(seen(['d']), false, 'past the window its timestamp is refused anyway: forgotten');
  } finally {
    Date.now = realNow;
  }
});
