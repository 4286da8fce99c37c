import { constantTimeEqual, AuthConfigError, checkOptionNames } from '../auth/internal.ts';
import type { Principal } from '../agent/types.ts';
import {
  apiBase,
  badRequest,
  bytesToHex,
  type Channel,
  channelResponse,
  channelSessionIds,
  concatBytes,
  isFreshTimestamp,
  methodNotAllowed,
  parseJsonObject,
  postJson,
  readRawBody,
  replayGuard,
  runForReply,
  sessionSecretOf,
  tooLarge,
  unauthorized,
} from './channel.ts';

export interface SlackChannelOptions {
  /** The app's signing secret (Basic Information → App Credentials). */
  signingSecret: string;
  /** The bot token (`xoxb-…`) that posts replies with `chat.postMessage`. */
  botToken: string;
  /** Slack Web API base; default `https://slack.com/api`. */
  apiBaseUrl?: string;
  /**
   * Keys the session ids (at least 32 bytes); default: derived from `signingSecret`. Set it to
   * keep conversations across a rotation of the signing secret. Every instance must use the same.
   */
  sessionSecret?: string;
}

interface SlackMessage {
  team: string;
  user: string;
  channel: string;
  text: string;
  ts?: string;
  threadTs?: string;
  eventId?: string;
}

const encoder = new TextEncoder();

/**
 * The Slack Events API endpoint. Each request must carry `X-Slack-Signature: v0=<hex>`, the
 * HMAC-SHA256 with the signing secret of `v0:<X-Slack-Request-Timestamp>:<raw body>`, and a
 * timestamp within 5 minutes; anything else is a 401 that never reaches the agent.
 * `url_verification` is answered with its challenge. A user's `message` event is acknowledged
 * at once; the agent then runs with the sender as principal `{ id: <user>, type: 'user',
 * authenticator: 'slack', issuer: <team id> }` in the session of (team, channel, user), whose id
 * is `slack:` and an HMAC of those ids keyed with `sessionSecret` (default: derived from the
 * signing secret), so it cannot be computed from public Slack ids; and the reply is posted
 * with `chat.postMessage` (in the thread when the message was in one). Bot messages, edits
 * and other subtypes, Slack's retries (`X-Slack-Retry-Num`) and replays (a signature or an
 * `event_id` already handled within the signature window) are acknowledged and ignored.
 * @example
 * serve({ agent, channels: { slack: slackChannel({ signingSecret: env.SLACK_SIGNING_SECRET, botToken: env.SLACK_BOT_TOKEN }) } });
 */
export function slackChannel(options: SlackChannelOptions): Channel {
  if (typeof options !== 'object' || options === null)
    throw new AuthConfigError('slackChannel(): options { signingSecret, botToken } are required');
  checkOptionNames('slackChannel()', options, ['signingSecret', 'botToken', 'apiBaseUrl', 'sessionSecret']);
  const { signingSecret, botToken, apiBaseUrl } = options;
  if (typeof signingSecret !== 'string' || signingSecret.length === 0) {
    throw new AuthConfigError('slackChannel(): signingSecret must be a non-empty string');
  }
  if (typeof botToken !== 'string' || botToken.length === 0)
    throw new AuthConfigError('slackChannel(): botToken must be a non-empty string');
  const postMessageUrl = `${apiBase('slackChannel()', apiBaseUrl, 'https://slack.com/api')}/chat.postMessage`;
  const sessionIdOf = channelSessionIds(
    'slack',
    sessionSecretOf('slackChannel()', options.sessionSecret, signingSecret)!,
  );
  const seen = replayGuard();
  const key = crypto.subtle.importKey('raw', encoder.encode(signingSecret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);

  async function isSigned(timestamp: string, body: Uint8Array, signature: string): Promise<boolean> {
    const mac = await crypto.subtle.sign('HMAC', await key, concatBytes(encoder.encode(`v0:${timestamp}:`), body));
    return constantTimeEqual(encoder.encode(`v0=${bytesToHex(new Uint8Array(mac))}`), encoder.encode(signature));
  }

  return async function slack(request, { agent, waitUntil }) {
    if (request.method !== 'POST') return methodNotAllowed();
    const timestamp = request.headers.get('x-slack-request-timestamp');
    const signature = request.headers.get('x-slack-signature');
    if (signature === null || !isFreshTimestamp(timestamp)) return unauthorized();
    const body = await readRawBody(request);
    if (body === null) return tooLarge();
    if (!(await isSigned(timestamp, body, signature))) return unauthorized();

    const payload = parseJsonObject(body);
    if (payload === null) return badRequest('Request body must be a JSON object');
    if (payload.type === 'url_verification') {
      if (typeof payload.challenge !== 'string') return badRequest('challenge must be a string');
      return channelResponse({ challenge: payload.challenge });
    }
    const message = request.headers.has('x-slack-retry-num') ? null : userMessage(payload);
    const replayed =
      message !== null &&
      seen([
        `signature:${signature}`,
        ...(message.eventId === undefined ? [] : [`event:${message.team}:${message.eventId}`]),
      ]);
    if (message !== null && !replayed) {
      const principal: Principal = Object.freeze({
        id: message.user,
        type: 'user',
        authenticator: 'slack',
        issuer: message.team,
      });
      waitUntil(
        (async () => {
          const text = await runForReply('slack', agent, message.text, {
            principal,
            sessionId: await sessionIdOf([message.team, message.channel, message.user]),
            metadata: { slack: { team: message.team, channel: message.channel, ts: message.ts } },
          });
          if (text === '') return;
          const reply = {
            channel: message.channel,
            text,
            ...(message.threadTs !== undefined && { thread_ts: message.threadTs }),
          };
          const answer = await postMessage(postMessageUrl, botToken, reply);
          if (answer !== 'ok') console.error(`agentward: slack chat.postMessage failed: ${answer}`);
        })().catch((error: unknown) => console.error('agentward: the slack channel could not post its reply', error)),
      );
    }
    return new Response(null, { status: 200, headers: { 'cache-control': 'no-store' } });
  };
}

/** A plain message from a user in an `event_callback`, or `null` for anything to ignore. */
function userMessage(payload: Record<string, unknown>): SlackMessage | null {
  if (payload.type !== 'event_callback') return null;
  const event = payload.event as Record<string, unknown> | null | undefined;
  if (typeof event !== 'object' || event === null || event.type !== 'message') return null;
  if (event.subtype !== undefined || event.bot_id !== undefined) return null;
  const { team_id: team, event_id: eventId } = payload;
  const { user, channel, text, ts, thread_ts: threadTs } = event;
  if (!isId(team) || !isId(user) || !isId(channel) || typeof text !== 'string' || text === '') return null;
  return {
    team,
    user,
    channel,
    text,
    ...(typeof ts === 'string' && { ts }),
    ...(typeof threadTs === 'string' && { threadTs }),
    ...(isId(eventId) && { eventId }),
  };
}

const isId = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/** `'ok'`, or Slack's error code (never the token). */
async function postMessage(url: string, botToken: string, reply: Record<string, string>): Promise<string> {
  const { status, body } = await postJson(url, reply, { authorization: `Bearer ${botToken}` });
  const answer = body as { ok?: unknown; error?: unknown } | undefined;
  if (status === 200 && answer?.ok === true) return 'ok';
  return `HTTP ${status}${typeof answer?.error === 'string' ? ` ${answer.error}` : ''}`;
}
