import { encodeBase64url, readBoundedBody, AuthConfigError } from '../auth/internal.ts';
import { MAX_BODY_BYTES } from '../http/body.ts';
import { errorResponse, jsonResponse } from '../http/responses.ts';
import type { Agent, RunResult, SendOptions } from '../agent/types.ts';

/** What the server gives a channel besides the request. */
export interface ChannelContext {
  readonly agent: Agent;
  /** Keeps the server's graceful shutdown waiting for work that outlives the response (the run and the reply). */
  waitUntil(task: Promise<unknown>): void;
}

/**
 * A chat platform's endpoint, mounted by `serve()` at `/channels/<key>` outside the auth list:
 * it verifies its own requests (a bad or missing signature is a 401 that never reaches the agent).
 */
export type Channel = (request: Request, context: ChannelContext) => Promise<Response>;

/** Platforms sign a timestamp with each request; older (or further ahead) than this is refused as a replay. */
export const MAX_SIGNATURE_AGE_SEC = 5 * 60;

/** Signed requests a channel remembers to refuse their replays; past it the oldest are forgotten first. */
export const MAX_REMEMBERED_REQUESTS = 10_000;

/**
 * Remembers the signed requests a channel has handled, by their signature and their platform
 * id (Slack `event_id`, Discord interaction `id`), for as long as their timestamp can pass the
 * freshness check (twice the window: it runs both ways). `seen(keys)` is true when any key was
 * seen (a replay), and records them otherwise. At most `max` requests are kept, so a flood
 * cannot grow it; a replay of a forgotten request runs again. Kept in this process only.
 */
export function replayGuard(max = MAX_REMEMBERED_REQUESTS): (keys: readonly string[]) => boolean {
  const expiries = new Map<string, number>();
  const keep = 2 * MAX_SIGNATURE_AGE_SEC * 1000;
  return function seen(keys) {
    const now = Date.now();
    for (const [key, expiry] of expiries) {
      if (expiry > now && expiries.size <= max) break;
      expiries.delete(key);
    }
    if (keys.some((key) => expiries.has(key))) return true;
    for (const key of keys) expiries.set(key, now + keep);
    while (expiries.size > max) expiries.delete(expiries.keys().next().value as string);
    return false;
  };
}

const encoder = new TextEncoder();
const hmacKey = (secret: Uint8Array<ArrayBuffer>) =>
  crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);

/**
 * The session ids of a channel: `<channel>:` then the base64url HMAC-SHA256 of the platform ids
 * under a key derived from `secret`. Nobody without the secret can compute one from the public
 * platform ids, and every process configured with the same secret computes the same ids, so
 * a conversation survives restarts and spans instances.
 */
export function channelSessionIds(
  channel: string,
  secret: string,
): (platformIds: readonly string[]) => Promise<string> {
  // A key of its own for this use, so the platform secret itself never signs anything but requests.
  const key = hmacKey(encoder.encode(secret)).then(async (root) =>
    hmacKey(
      new Uint8Array(
        await crypto.subtle.sign('HMAC', root, encoder.encode(`agentward channel session ids v1 ${channel}`)),
      ),
    ),
  );
  return async (platformIds) => {
    const mac = await crypto.subtle.sign('HMAC', await key, encoder.encode(JSON.stringify(platformIds)));
    return `${channel}:${encodeBase64url(new Uint8Array(mac))}`;
  };
}

/** `sessionSecret` when given (at least 32 bytes), else the fallback; names the helper in its error. */
export function sessionSecretOf(
  helper: string,
  sessionSecret: unknown,
  fallback: string | undefined,
): string | undefined {
  if (sessionSecret === undefined) return fallback;
  if (typeof sessionSecret !== 'string' || encoder.encode(sessionSecret).byteLength < 32) {
    throw new AuthConfigError(`${helper}: sessionSecret must be a string of at least 32 bytes`);
  }
  return sessionSecret;
}

/** A channel's answer: the route handler's JSON response, never cached. */
export const channelResponse = jsonResponse;

export const unauthorized = (): Response => errorResponse(401, 'Unauthorized');
export const methodNotAllowed = (): Response => errorResponse(405, 'Method Not Allowed', { allow: 'POST' });
export const tooLarge = (): Response => errorResponse(413, 'Request body too large (limit 1 MiB)');
export const badRequest = (message: string): Response => errorResponse(400, message);

/** True when `timestamp` (Unix seconds, digits only) is within `MAX_SIGNATURE_AGE_SEC` of now. */
export function isFreshTimestamp(timestamp: string | null): timestamp is string {
  if (timestamp === null || !/^\d{1,12}$/.test(timestamp)) return false;
  return Math.abs(Date.now() / 1000 - Number(timestamp)) <= MAX_SIGNATURE_AGE_SEC;
}

/** The raw request body, which signatures cover byte for byte; `null` when it exceeds 1 MiB. */
export async function readRawBody(request: Request): Promise<Uint8Array<ArrayBuffer> | null> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) return null;
  return readBoundedBody(request.body, MAX_BODY_BYTES);
}

export function bytesToHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** Decodes lowercase or uppercase hex of exactly `length` bytes, or `null`. */
export function hexToBytes(hex: string, length: number): Uint8Array<ArrayBuffer> | null {
  if (hex.length !== length * 2 || !/^[0-9a-fA-F]*$/.test(hex)) return null;
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** The platform API base: an http(s) URL, without its trailing `/`. */
export function apiBase(helper: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^https?:\/\//.test(value) || !URL.canParse(value)) {
    throw new AuthConfigError(`${helper}: apiBaseUrl must be an http(s) URL`);
  }
  return value.replace(/\/+$/, '');
}

export function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const joined = new Uint8Array(a.byteLength + b.byteLength);
  joined.set(a, 0);
  joined.set(b, a.byteLength);
  return joined;
}

/** Parses a verified body as a JSON object, or `null`. */
export function parseJsonObject(bytes: Uint8Array): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The text a channel posts back for a run: its reply, or what it waits for. */
export function replyText(result: RunResult): string {
  if (result.status === 'awaiting-approval') {
    const waiting = result.approvals.map((a) => `${a.tool} (approval ${a.id})`).join(', ');
    return [result.text, `Waiting for approval: ${waiting}.`].filter(Boolean).join('\n\n');
  }
  return result.text;
}

/** Runs the agent for a platform message and returns the text to post back; a failure is logged and answered generically. */
export async function runForReply(
  channel: string,
  agent: Agent,
  message: string,
  options: SendOptions,
): Promise<string> {
  try {
    return replyText(await agent.send(message, options));
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'APPROVAL_PENDING')
      return 'This conversation is waiting for an approval decision.';
    console.error(`agentward: the ${channel} channel's run failed`, error);
    return 'Sorry, something went wrong.';
  }
}

/** Posts JSON to a platform API and returns its status and JSON answer (`undefined` when it is not JSON). */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as unknown };
  } catch {
    return { status: response.status, body: undefined };
  }
}
