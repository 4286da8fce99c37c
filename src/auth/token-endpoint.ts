// SPDX-License-Identifier: MIT
// The token endpoint's side of tokenExchange() and idJag() (RFC 8693 §2.2, RFC 6749 §5, design
// §27): one POST, no redirect followed, a bounded answer read in a bounded time, and what it
// means: the issued token, or the error that names the OAuth `error` code and the HTTP status,
// never a token or the body.
import { readBoundedBody } from './bounded-body.ts';
import { parseJsonObject } from './jws/json.ts';
import type { InternalOptions } from './internal-options.ts';
import { isNumberIn } from './options.ts';

/**
 * Why an exchange failed: `code` is the authorization server's OAuth `error` (`invalid_grant`,
 * `invalid_target`, …) with the HTTP `status`, or `NO_SUBJECT_TOKEN` (the principal presented no
 * access token on the request now running, or it expired), `UNAVAILABLE` (no endpoint, no answer
 * in time), `INVALID_RESPONSE` (an answer without a usable token, or a redirect),
 * `INVALID_CLIENT_KEY` (the private key cannot sign). Never a token, never the body. `leg` says
 * which call of `idJag()` failed: at the enterprise IdP or at the resource's authorization server.
 */
export class TokenExchangeError extends Error {
  readonly code: string;
  readonly status: number | undefined;
  readonly leg: 'idp' | 'authorization-server' | undefined;
  constructor(code: string, status?: number, leg?: 'idp' | 'authorization-server') {
    const at = leg === undefined ? '' : ` at the ${leg === 'idp' ? 'IdP' : 'authorization server'}`;
    super(`token exchange failed${at}: ${code}${status === undefined ? '' : ` (HTTP ${status})`}`);
    this.name = 'TokenExchangeError';
    this.code = code;
    this.status = status;
    this.leg = leg;
  }
}

/** The token the authorization server issued (RFC 8693 §2.2.1). */
export interface ExchangedToken {
  readonly accessToken: string;
  /** `Bearer`, `DPoP`, or `N_A` for a token that is not an access token. */
  readonly tokenType: string;
  /** Milliseconds since the epoch (`Date.now()`'s unit); `undefined` when the server named no `expires_in`. */
  readonly expiresAt: number | undefined;
  readonly scope: string | undefined;
  /** `urn:ietf:params:oauth:token-type:access_token`, or what else the server issued. */
  readonly issuedTokenType: string;
}

const MAX_ANSWER_BYTES = 65_536; // 64 KiB
/** RFC 6749 §5.2 `error`: printable ASCII but `"` and `\`. */
const OAUTH_ERROR = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}$/;

/**
 * The token of a 2xx answer (RFC 8693 §2.2.1), or the error of any other (§2.2.2); `nowMs` dates
 * `expiresAt`. `impliedType` is the `issuedTokenType` of an answer without `issued_token_type`
 * (RFC 6749 §5.1's, to a grant other than token exchange); without it, one is required.
 */
export function exchanged(
  { status, answer }: { status: number; answer: Record<string, unknown> | null },
  nowMs: number,
  impliedType?: string,
): ExchangedToken {
  if (status < 200 || status > 299) {
    const error = answer?.error;
    throw new TokenExchangeError(
      typeof error === 'string' && OAUTH_ERROR.test(error) ? error : 'INVALID_RESPONSE',
      status,
    );
  }
  const { access_token, token_type, expires_in, scope } = answer ?? {};
  const issued_token_type = answer?.issued_token_type ?? impliedType;
  if (
    typeof access_token !== 'string' ||
    access_token === '' ||
    typeof token_type !== 'string' ||
    typeof issued_token_type !== 'string' ||
    (expires_in !== undefined && !isNumberIn(expires_in, 0, 1e9)) ||
    (scope !== undefined && typeof scope !== 'string')
  )
    throw new TokenExchangeError('INVALID_RESPONSE', status);
  return Object.freeze({
    accessToken: access_token,
    tokenType: token_type,
    expiresAt: expires_in === undefined ? undefined : nowMs + (expires_in as number) * 1000,
    scope: scope as string | undefined,
    issuedTokenType: issued_token_type,
  });
}

/** POSTs to the token endpoint: its status and JSON object (`null` when the body is not one). No redirect is followed; the whole call has `timeoutMs`. */
export async function post(
  url: string,
  init: RequestInit,
  internals: InternalOptions,
): Promise<{ status: number; answer: Record<string, unknown> | null }> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TokenExchangeError('UNAVAILABLE')), internals.timeoutMs);
  });
  const send = async () => {
    let response: Response;
    try {
      response = await (internals.fetch ?? fetch)(url, { ...init, redirect: 'manual', signal: controller.signal });
    } catch {
      throw new TokenExchangeError('UNAVAILABLE');
    }
    // A redirect (an `opaqueredirect` of status 0 in browsers) is never followed: the token would go with it.
    if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400))
      throw new TokenExchangeError('INVALID_RESPONSE', response.status);
    let answer: Record<string, unknown> | null = null;
    try {
      const bytes = await readBoundedBody(response.body, MAX_ANSWER_BYTES);
      if (bytes !== null) answer = parseJsonObject(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    } catch {
      // Not JSON, or cut: no answer to read.
    }
    return { status: response.status, answer };
  };
  try {
    return await Promise.race([send(), timedOut]);
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}
