// What a provider said when a model call failed (design §31): its HTTP status, error type and
// message. It never goes into the error's message (what the routes and the streams answer with
// is the status alone, §21): it rides on the error under a Symbol, which `JSON.stringify`,
// `console.error` and own-property listings do not show, redacted of every key and header value
// known, and is handed to the one listener `agentward dev` (and `start --verbose`) installs to
// print it on the server's terminal.
import type { AgentError } from './errors.ts';
import { modelFailures } from './model-turn.ts';
import { isNonEmptyString } from './shapes.ts';

export interface ProviderDetail {
  /** Which model: an AI SDK model's `provider` and `modelId`, or `openAICompatible`'s host and model. */
  readonly provider?: string;
  readonly status?: number;
  /** The provider's error type or code (`invalid_request_error`), or the AI SDK error's name. */
  readonly type?: string;
  readonly message?: string;
}

const DETAIL = Symbol('agentward.providerDetail');
/** The most of a message kept: a provider body can be long (a quoted prompt, HTML of a proxy). */
const MESSAGE_LIMIT = 2000;

/** Known secrets of a request, credential-shaped text, and a bearer value: each replaced by `[redacted]`. */
const CREDENTIAL_SHAPES = [
  // A URL's user name and password (design §26): `https://user:pass@host` → `https://[redacted]@host`.
  /(?<=\b[a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"']+(?=@)/gi,
  /\b(?:Bearer|Basic)\s+[^\s"',;]+/gi,
  /\b(?:sk|pk|rk|gsk|xai|hf)[-_][A-Za-z0-9_*-]{8,}/g,
  /\bAIza[0-9A-Za-z_-]{20,}/g,
  /\beyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*/g,
];

/** `text` with each of `secrets` (8 characters or more) and each credential-shaped word replaced by `[redacted]`. */
export function redact(text: string, secrets: Iterable<string> = []): string {
  let out = text;
  const known = [...secrets].filter((secret) => typeof secret === 'string' && secret.length >= 8);
  // The longest first: a key that contains another is removed whole.
  for (const secret of known.sort((a, b) => b.length - a.length)) out = out.split(secret).join('[redacted]');
  for (const shape of CREDENTIAL_SHAPES)
    out = out.replace(shape, (match) =>
      /^(?:Bearer|Basic)\s/i.test(match) ? `${match.split(/\s/)[0]} [redacted]` : '[redacted]',
    );
  return out;
}

/** `error` with `detail` attached (its text redacted of `secrets`), for the listener below and nobody else. */
export function withProviderDetail(
  error: AgentError,
  detail: ProviderDetail,
  secrets: Iterable<string> = [],
): AgentError {
  const list = [...secrets];
  const clean = (text: string | undefined) =>
    text === undefined || text === '' ? undefined : redact(text, list).slice(0, MESSAGE_LIMIT);
  const kept: ProviderDetail = {
    ...(detail.provider !== undefined && { provider: clean(detail.provider) }),
    ...(Number.isInteger(detail.status) && { status: detail.status }),
    ...(clean(detail.type) !== undefined && { type: clean(detail.type) }),
    ...(clean(detail.message) !== undefined && { message: clean(detail.message) }),
  };
  Object.defineProperty(error, DETAIL, { value: Object.freeze(kept), enumerable: false });
  return error;
}

/** What the provider said, of `error` or of an error in its `cause` chain; `undefined` when none said anything. */
export function providerDetail(error: unknown): ProviderDetail | undefined {
  for (let at = error, depth = 0; typeof at === 'object' && at !== null && depth < 8; depth++) {
    const detail = (at as { [DETAIL]?: ProviderDetail })[DETAIL];
    if (detail !== undefined) return detail;
    at = (at as { cause?: unknown }).cause;
  }
  return undefined;
}

/** What a provider's error body says: `{ error: { message, type, code } }` (OpenAI, Anthropic, most others), `{ error: "…" }`, `{ message }`, or the text. */
export function detailOfBody(body: unknown): { type?: string; message?: string } {
  const text = (value: unknown) => (isNonEmptyString(value) ? value : undefined);
  if (typeof body === 'string') {
    try {
      return detailOfBody(JSON.parse(body) as unknown);
    } catch {
      return { message: text(body.trim()) };
    }
  }
  if (typeof body !== 'object' || body === null) return {};
  const { error, message, type, code } = body as Record<string, unknown>;
  if (typeof error === 'string') return { message: error, type: text(type) ?? text(code) };
  if (typeof error === 'object' && error !== null) {
    const inner = error as Record<string, unknown>;
    return {
      type: text(inner.type) ?? text(inner.code) ?? text(inner.status) ?? (type === 'error' ? undefined : text(type)),
      message: text(inner.message) ?? text(JSON.stringify(error)),
    };
  }
  return { type: text(type) ?? text(code), message: text(message) };
}

type FailureListener = (detail: ProviderDetail, error: Error) => void;
let listener: FailureListener | undefined;

/**
 * Installs the one listener of model failures that carry a provider's detail (`agentward dev`
 * and `start --verbose` print them); `undefined` removes it. Not part of the package's API.
 */
export function onProviderFailure(next: FailureListener | undefined): void {
  listener = next;
  modelFailures.report = next === undefined ? undefined : reportModelFailure;
}

/** Tells the listener of a failed model turn, when the provider said something. A listener that throws is ignored. */
function reportModelFailure(error: unknown): void {
  const detail = listener === undefined ? undefined : providerDetail(error);
  if (detail === undefined) return;
  try {
    listener?.(detail, error as Error);
  } catch {}
}
