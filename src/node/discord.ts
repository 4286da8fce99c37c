import { AuthConfigError, checkOptionNames, encodeBase64url } from '../auth/internal.ts';
import type { Principal } from '../agent/types.ts';
import {
  apiBase,
  badRequest,
  bytesToHex,
  type Channel,
  channelResponse,
  channelSessionIds,
  concatBytes,
  hexToBytes,
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

export interface DiscordChannelOptions {
  /** The application's public key, 64 hex characters (Developer Portal → General Information). */
  publicKey: string;
  /** Not needed for replies, which the interaction's own token authorizes; when set and `sessionSecret` is not, it keys the session ids. */
  botToken?: string;
  /**
   * Keys the session ids (at least 32 bytes); default: `botToken`. The public key is public, so
   * with neither a random key is made per process: the ids stay secret, but conversations start
   * over after a restart and differ between instances (a warning says so once).
   */
  sessionSecret?: string;
  /** Discord API base; default `https://discord.com/api/v10`. */
  apiBaseUrl?: string;
  /** When set, interactions for another application are refused (400). */
  applicationId?: string;
}

interface Command {
  id?: string;
  applicationId: string;
  token: string;
  user: string;
  channel: string;
  text: string;
}

const PING = 1;
const APPLICATION_COMMAND = 2;
const PONG = 1;
const DEFERRED_CHANNEL_MESSAGE = 5;
const MAX_CONTENT = 2000;
const encoder = new TextEncoder();

/**
 * The Discord interactions endpoint. Each request must carry `X-Signature-Ed25519`, the
 * Ed25519 signature with the application's public key of `X-Signature-Timestamp` followed by
 * the raw body, and a timestamp within 5 minutes; anything else is a 401 that never reaches
 * the agent. PING is answered with PONG. An application command is answered at once with a
 * deferred response (type 5, Discord's 3-second limit leaves no time for a model); the agent
 * then runs with the invoking user as principal `{ id: <user id>, type: 'user',
 * authenticator: 'discord' }` in the session of (channel, user), whose id is `discord:` and an
 * HMAC of those ids keyed with `sessionSecret` (default `botToken`), and its reply
 * (cut to 2000 characters) is posted as the follow-up message to
 * `<apiBaseUrl>/webhooks/<application id>/<interaction token>`. The message given to the
 * agent is the command's string options joined by spaces, or the command's name. A replay (a
 * signature or an interaction id already handled within the signature window) is answered the
 * same deferred response and not run again.
 * @example
 * serve({ agent, channels: { discord: discordChannel({ publicKey: env.DISCORD_PUBLIC_KEY }) } });
 */
export function discordChannel(options: DiscordChannelOptions): Channel {
  if (typeof options !== 'object' || options === null)
    throw new AuthConfigError('discordChannel(): options { publicKey } are required');
  checkOptionNames('discordChannel()', options, [
    'publicKey',
    'botToken',
    'sessionSecret',
    'apiBaseUrl',
    'applicationId',
  ]);
  const { publicKey, apiBaseUrl, applicationId } = options;
  const rawKey = typeof publicKey === 'string' ? hexToBytes(publicKey, 32) : null;
  if (rawKey === null)
    throw new AuthConfigError('discordChannel(): publicKey must be the 64 hex characters of an Ed25519 public key');
  if (applicationId !== undefined && (typeof applicationId !== 'string' || applicationId.length === 0)) {
    throw new AuthConfigError('discordChannel(): applicationId must be a non-empty string');
  }
  if (options.botToken !== undefined && (typeof options.botToken !== 'string' || options.botToken === ''))
    throw new AuthConfigError('discordChannel(): botToken must be a non-empty string');
  const base = apiBase('discordChannel()', apiBaseUrl, 'https://discord.com/api/v10');
  const keyBytes = rawKey;
  let secret = sessionSecretOf(
    'discordChannel()',
    options.sessionSecret,
    typeof options.botToken === 'string' && options.botToken !== '' ? options.botToken : undefined,
  );
  if (secret === undefined) {
    console.warn(
      'agentward: discordChannel() has neither sessionSecret nor botToken: its session ids are keyed per process, so conversations start over after a restart',
    );
    secret = encodeBase64url(crypto.getRandomValues(new Uint8Array(32)));
  }
  const sessionIdOf = channelSessionIds('discord', secret);
  const seen = replayGuard();
  let key: Promise<CryptoKey> | undefined;

  async function isSigned(timestamp: string, body: Uint8Array, signature: Uint8Array<ArrayBuffer>): Promise<boolean> {
    key ??= crypto.subtle.importKey('raw', keyBytes, { name: 'Ed25519' }, false, ['verify']);
    return crypto.subtle.verify('Ed25519', await key, signature, concatBytes(encoder.encode(timestamp), body));
  }

  return async function discord(request, { agent, waitUntil }) {
    if (request.method !== 'POST') return methodNotAllowed();
    const timestamp = request.headers.get('x-signature-timestamp');
    const signature = hexToBytes(request.headers.get('x-signature-ed25519') ?? '', 64);
    if (signature === null || !isFreshTimestamp(timestamp)) return unauthorized();
    const body = await readRawBody(request);
    if (body === null) return tooLarge();
    if (!(await isSigned(timestamp, body, signature))) return unauthorized();

    const interaction = parseJsonObject(body);
    if (interaction === null) return badRequest('Request body must be a JSON object');
    if (applicationId !== undefined && interaction.application_id !== applicationId)
      return badRequest('Interaction for another application');
    if (interaction.type === PING) return channelResponse({ type: PONG });
    if (interaction.type !== APPLICATION_COMMAND) return badRequest('Unsupported interaction type');
    const command = readCommand(interaction);
    if (command === null) return badRequest('Malformed application command');

    if (
      seen([`signature:${bytesToHex(signature)}`, ...(command.id === undefined ? [] : [`interaction:${command.id}`])])
    ) {
      return channelResponse({ type: DEFERRED_CHANNEL_MESSAGE });
    }
    const principal: Principal = Object.freeze({ id: command.user, type: 'user', authenticator: 'discord' });
    waitUntil(
      (async () => {
        const text = await runForReply('discord', agent, command.text, {
          principal,
          sessionId: await sessionIdOf([command.channel, command.user]),
          metadata: { discord: { channel: command.channel } },
        });
        const url = `${base}/webhooks/${encodeURIComponent(command.applicationId)}/${encodeURIComponent(command.token)}`;
        const { status } = await postJson(url, { content: truncate(text || '(no reply)') });
        if (status < 200 || status > 299) console.error(`agentward: discord follow-up message failed: HTTP ${status}`);
      })().catch((error: unknown) => console.error('agentward: the discord channel could not post its reply', error)),
    );
    return channelResponse({ type: DEFERRED_CHANNEL_MESSAGE });
  };
}

function readCommand(interaction: Record<string, unknown>): Command | null {
  const { id, application_id: applicationId, token, channel_id: channel, data } = interaction;
  const member = interaction.member as { user?: { id?: unknown } } | undefined;
  const user = member?.user?.id ?? (interaction.user as { id?: unknown } | undefined)?.id;
  if (!isId(applicationId) || !isId(token) || !isId(channel) || !isId(user)) return null;
  if (typeof data !== 'object' || data === null) return null;
  const { name, options } = data as { name?: unknown; options?: unknown };
  const strings = Array.isArray(options)
    ? options.flatMap((o: { type?: unknown; value?: unknown } | null) =>
        o?.type === 3 && typeof o.value === 'string' ? [o.value] : [],
      )
    : [];
  const text = strings.length > 0 ? strings.join(' ') : typeof name === 'string' ? name : '';
  if (text === '') return null;
  return { ...(isId(id) && { id }), applicationId, token, user, channel, text };
}

const isId = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

function truncate(text: string): string {
  return text.length <= MAX_CONTENT ? text : `${text.slice(0, MAX_CONTENT - 1)}…`;
}
