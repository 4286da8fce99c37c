import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { discordChannel } from '../../src/node/discord.ts';
import { AuthConfigError } from '../../src/auth/errors.ts';
import { channelContext, expectedSessionId, platformApi, recordingAgent } from '../helpers/channels.ts';

const BOT_TOKEN = 'discord-bot-token-for-the-tests-0123456789';

const application = generateKeyPairSync('ed25519');
const stranger = generateKeyPairSync('ed25519');
const now = () => Math.floor(Date.now() / 1000);

function publicKeyHex(key: KeyObject): string {
  return Buffer.from(String(key.export({ format: 'jwk' }).x), 'base64url').toString('hex');
}

/** Discord's documented interaction signing: Ed25519 over the timestamp followed by the raw body, hex-encoded. */
function discordSignature(privateKey: KeyObject, timestamp: number | string, body: string): string {
  return sign(null, Buffer.from(`${timestamp}${body}`), privateKey).toString('hex');
}

function discordRequest(
  body: string,
  {
    timestamp = now() as number | string,
    privateKey = application.privateKey,
    headers = {} as Record<string, string>,
  } = {},
): Request {
  return new Request('http://localhost/channels/discord', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-signature-timestamp': String(timestamp),
      'x-signature-ed25519': discordSignature(privateKey, timestamp, body),
      ...headers,
    },
    body,
  });
}

const command = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: 2,
    id: '1100',
    application_id: 'APP1',
    token: 'interaction-token-abc',
    channel_id: '2200',
    guild_id: '3300',
    member: { user: { id: '4400', username: 'ada' } },
    data: { id: '5500', name: 'ask', type: 1, options: [{ name: 'prompt', type: 3, value: 'hello agent' }] },
    ...fields,
  });

async function setup(t: { after(fn: () => Promise<void>): void }) {
  const api = await platformApi({ id: 'm1' });
  t.after(() => api.close());
  const { agent, sends } = recordingAgent();
  const context = channelContext(agent);
  const discord = discordChannel({
    publicKey: publicKeyHex(application.publicKey),
    botToken: BOT_TOKEN,
    apiBaseUrl: api.baseUrl,
  });
  return { api, sends, context, discord };
}

test('discord: a signed PING is answered with PONG', async (t) => {
  const { discord, context, sends } = await setup(t);
  const response = await discord(
    discordRequest(JSON.stringify({ type: 1, id: '1', application_id: 'APP1', token: 't' })),
    context,
  );
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { type: 1 });
  assert.equal(sends.length, 0);
});

test('discord: a signed application command reaches the agent with the invoking user as principal and the reply is the follow-up message', async (t) => {
  const { discord, context, sends, api } = await setup(t);
  const response = await discord(discordRequest(command()), context);
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { type: 5 });
  await context.settled();

  assert.equal(sends.length, 1);
  assert.equal(sends[0]?.message, 'hello agent');
  assert.deepEqual(sends[0]?.options?.principal, { id: '4400', type: 'user', authenticator: 'discord' });
  assert.ok(Object.isFrozen(sends[0]?.options?.principal));
  assert.equal(sends[0]?.options?.sessionId, expectedSessionId('discord', BOT_TOKEN, ['2200', '4400']));

  assert.equal(api.calls.length, 1);
  assert.equal(api.calls[0]?.method, 'POST');
  assert.equal(api.calls[0]?.url, '/api/webhooks/APP1/interaction-token-abc');
  assert.deepEqual(api.calls[0]?.body, { content: 'echo: hello agent' });
});

test('discord: a command in a direct message takes the principal from `user`', async (t) => {
  const { discord, context, sends } = await setup(t);
  const body = command({ member: undefined, guild_id: undefined, user: { id: '7700', username: 'grace' } });
  assert.equal((await discord(discordRequest(body), context)).status, 200);
  await context.settled();
  assert.deepEqual(sends[0]?.options?.principal, { id: '7700', type: 'user', authenticator: 'discord' });
});

const refused: [string, () => Request][] = [
  [
    'a tampered body',
    () => {
      const signed = discordRequest(command());
      return new Request(signed.url, {
        method: 'POST',
        headers: signed.headers,
        body: command({ member: { user: { id: '1' } } }),
      });
    },
  ],
  ['a timestamp older than 5 minutes', () => discordRequest(command(), { timestamp: now() - 301 })],
  ['a signature made with another key', () => discordRequest(command(), { privateKey: stranger.privateKey })],
  [
    'a signature over another timestamp',
    () => {
      const timestamp = now();
      return discordRequest(command(), {
        timestamp,
        headers: { 'x-signature-ed25519': discordSignature(application.privateKey, timestamp - 1, command()) },
      });
    },
  ],
  [
    'a missing X-Signature-Ed25519',
    () =>
      new Request('http://localhost/channels/discord', {
        method: 'POST',
        headers: { 'x-signature-timestamp': String(now()) },
        body: command(),
      }),
  ],
  [
    'a missing X-Signature-Timestamp',
    () => {
      const signed = discordRequest(command());
      const headers = new Headers(signed.headers);
      headers.delete('x-signature-timestamp');
      return new Request(signed.url, { method: 'POST', headers, body: command() });
    },
  ],
  [
    'a signature that is not hex',
    () => discordRequest(command(), { headers: { 'x-signature-ed25519': 'z'.repeat(128) } }),
  ],
];

for (const [name, makeRequest] of refused) {
  test(`discord: ${name} is refused with 401 and never reaches the agent`, async (t) => {
    const { discord, context, sends, api } = await setup(t);
    const response = await discord(makeRequest(), context);
    assert.equal(response.status, 401);
    await context.settled();
    assert.equal(sends.length, 0);
    assert.equal(api.calls.length, 0);
  });
}

test('discord: with applicationId set, interactions for another application are refused', async (t) => {
  const api = await platformApi();
  t.after(() => api.close());
  const { agent, sends } = recordingAgent();
  const context = channelContext(agent);
  const discord = discordChannel({
    publicKey: publicKeyHex(application.publicKey),
    apiBaseUrl: api.baseUrl,
    applicationId: 'OTHER',
  });
  assert.equal((await discord(discordRequest(command()), context)).status, 400);
  await context.settled();
  assert.equal(sends.length, 0);
});

test('discordChannel(): options that cannot work are configuration errors', () => {
  assert.throws(() => discordChannel({ publicKey: 'abc' }), AuthConfigError);
  assert.throws(() => discordChannel({ publicKey: 'g'.repeat(64) }), AuthConfigError);
  assert.throws(
    () => discordChannel({ publicKey: publicKeyHex(application.publicKey), apiBaseUrl: 'not a url' }),
    AuthConfigError,
  );
  assert.throws(() => discordChannel(undefined as never), AuthConfigError);
});

test('discord: session ids are keyed (sessionSecret, else botToken), stable across instances, never the public Discord ids', async (t) => {
  const api = await platformApi({ id: 'm1' });
  t.after(() => api.close());
  const idWith = async (options: { botToken?: string; sessionSecret?: string }, interactionId: string) => {
    const { agent, sends } = recordingAgent();
    const context = channelContext(agent);
    await discordChannel({ publicKey: publicKeyHex(application.publicKey), apiBaseUrl: api.baseUrl, ...options })(
      discordRequest(command({ id: interactionId })),
      context,
    );
    await context.settled();
    return sends[0]?.options?.sessionId;
  };
  const first = await idWith({ botToken: BOT_TOKEN }, 'i1');
  assert.equal(await idWith({ botToken: BOT_TOKEN }, 'i2'), first);
  assert.match(first!, /^discord:[A-Za-z0-9_-]{43}$/);
  assert.ok(!first!.includes('2200') && !first!.includes('4400'));
  const secret = 'a-discord-session-secret-of-32-bytes!!';
  assert.equal(
    await idWith({ botToken: BOT_TOKEN, sessionSecret: secret }, 'i3'),
    expectedSessionId('discord', secret, ['2200', '4400']),
  );
  // Neither: a random key per process, with one warning at creation.
  const warnings: unknown[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warnings.push(args);
  try {
    const a = await idWith({}, 'i4');
    const b = await idWith({}, 'i5');
    assert.notEqual(a, b);
    assert.ok(a !== first && b !== first);
  } finally {
    console.warn = warn;
  }
  assert.equal(warnings.length, 2);
  assert.match(String((warnings[0] as unknown[])[0]), /sessionSecret/);
  assert.throws(
    () => discordChannel({ publicKey: publicKeyHex(application.publicKey), sessionSecret: 'short' }),
    AuthConfigError,
  );
});

test('discord: a replayed interaction (same signature, or the same interaction id) is acknowledged and not run again', async (t) => {
  const { discord, context, sends, api } = await setup(t);
  const body = command();
  const timestamp = now();
  for (let i = 0; i < 5; i++) {
    const response = await discord(discordRequest(body, { timestamp }), context);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { type: 5 });
  }
  await discord(discordRequest(body, { timestamp: timestamp - 1 }), context);
  await context.settled();
  assert.equal(sends.length, 1);
  assert.equal(api.calls.length, 1);
  await discord(discordRequest(command({ id: '1101' })), context);
  await context.settled();
  assert.equal(sends.length, 2, 'a new interaction runs');
});
