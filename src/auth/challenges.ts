// SPDX-License-Identifier: MIT
import { isRecord } from './jws/json.ts';
import { throwConfigError } from './errors.ts';
import { checkOptionNames } from './options.ts';
import type { AuthFn, Challenge } from './types.ts';

/** What an entry advertises when it declares no `challenges`. */
export const DEFAULT_CHALLENGES: readonly Challenge[] = Object.freeze([Object.freeze({ scheme: 'Bearer' })]);

/** RFC 9110 `token`: scheme and auth-param names. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A character outside printable Latin-1: a control character (C0, DEL, C1) or one above U+00FF. */
const UNQUOTABLE = /[^\x20-\x7e\xa0-\xff]/;

/** Throws `AuthConfigError` when `value` (a `realm`, a URL, a param) cannot be written into a header as a quoted-string. */
export function checkQuotable(helper: string, option: string, value: unknown): string {
  if (typeof value !== 'string' || UNQUOTABLE.test(value)) {
    throwConfigError(helper, `${option} must be a string of printable Latin-1 characters`);
  }
  return value;
}

/**
 * The `scope` of a challenge (a 401's, a 403's `insufficient_scope`): the scopes, without
 * `offline_access`, which MCP (2026-07-28) never asks for in a challenge; empty when none remain.
 */
export const challengeScope = (scopes: readonly string[]): string =>
  scopes.filter((scope) => scope !== 'offline_access').join(' ');

function quote(value: string): string {
  return `"${value.replace(/["\\]/g, '\\$&')}"`;
}

/**
 * One challenge as written in `WWW-Authenticate` (RFC 9110 §11.6.1): `Bearer`, `Basic realm="agent",
 * charset="UTF-8"`, `<Scheme> realm="<realm>"`, then `error="<error>"` when given (RFC 6750 §3),
 * then the challenge's `params` in insertion order, each a quoted-string.
 */
export function formatChallenge(challenge: Challenge, error?: string): string {
  const { scheme, realm, params } = challenge;
  const basic = scheme.toLowerCase() === 'basic';
  const parts = realm === undefined && !basic ? [] : [`realm=${quote(realm ?? 'agent')}`];
  if (basic) parts.push('charset="UTF-8"');
  if (error !== undefined) parts.push(`error=${quote(error)}`);
  if (params !== undefined)
    for (const name of Object.keys(params)) parts.push(`${name}=${quote(params[name] as string)}`);
  return parts.length === 0 ? scheme : `${scheme} ${parts.join(', ')}`;
}

/** Declared challenges are checked by routeAuth(), which the errors name. */
const HELPER = 'routeAuth()';

/** Checks one declared challenge (closed, a token scheme, quotable values), at creation. */
function checkChallenge(challenge: unknown): Challenge {
  if (
    typeof challenge !== 'object' ||
    challenge === null ||
    typeof (challenge as Challenge).scheme !== 'string' ||
    !TOKEN.test((challenge as Challenge).scheme)
  ) {
    throwConfigError(HELPER, 'a challenge scheme must be an RFC 9110 token');
  }
  checkOptionNames(`${HELPER}: a challenge`, challenge, ['scheme', 'realm', 'params']);
  const { realm, params } = challenge as Challenge;
  if (realm !== undefined) checkQuotable(HELPER, 'realm', realm);
  if (params !== undefined) {
    if (!isRecord(params)) throwConfigError(HELPER, "a challenge's params must be { name: value }");
    for (const [name, value] of Object.entries(params)) {
      if (!TOKEN.test(name) || /^(?:realm|error|charset)$/i.test(name))
        throwConfigError(
          HELPER,
          `challenge param ${JSON.stringify(name.slice(0, 64))} must be an RFC 9110 token, not realm, error or charset`,
        );
      checkQuotable(HELPER, `challenge param ${name}`, value);
    }
  }
  return challenge as Challenge;
}

/**
 * The challenges of a list, to answer a 401 or a 403: each distinct formatted challenge once,
 * in list order. `lines(error)` adds `error` (RFC 6750 §3.1) to the challenges of one scheme
 * (`invalid_token` for a credential the list read and refused, `invalid_dpop_proof`);
 * `params(scheme, name)` finds a param the list declares for a scheme (a `resource_metadata`
 * for a 403's challenge). Invalid declarations fail at creation.
 */
export interface ListChallenges {
  /** The `WWW-Authenticate` lines, `error` added to the challenges of `scheme` (compared case-insensitively). */
  lines(error?: { scheme: string; code: string }): readonly string[];
  /** The first value of param `name` among the challenges of `scheme`. */
  param(scheme: string, name: string): string | undefined;
  /** Whether some entry advertises `scheme` (lower case): a credential of that scheme is one the list reads. */
  reads(scheme: string): boolean;
}

export function listChallenges(entries: readonly AuthFn[]): ListChallenges {
  const declared: Challenge[] = [];
  for (const entry of entries) {
    const challenges = entry.challenges ?? DEFAULT_CHALLENGES;
    if (!Array.isArray(challenges))
      throwConfigError(HELPER, "an entry's challenges must be a list of { scheme, realm?, params? }");
    for (const challenge of challenges as readonly unknown[]) declared.push(checkChallenge(challenge));
  }
  // Made on first use, one set of lines per (scheme, error), the plain lines too: a list has few of them.
  const formatted = new Map<string, readonly string[]>();
  /** The declared challenges of `scheme` (lower case). */
  const declaredFor = (scheme: string) => declared.filter((challenge) => challenge.scheme.toLowerCase() === scheme);
  return {
    lines(error) {
      const scheme = error?.scheme.toLowerCase();
      const key = `${scheme} ${error?.code}`;
      let lines = formatted.get(key);
      if (lines === undefined) {
        const unique = new Set(
          declared.map((challenge) =>
            formatChallenge(challenge, challenge.scheme.toLowerCase() === scheme ? error?.code : undefined),
          ),
        );
        formatted.set(key, (lines = Object.freeze([...unique])));
      }
      return lines;
    },
    param: (scheme, name) =>
      declaredFor(scheme.toLowerCase()).find((challenge) => challenge.params?.[name] !== undefined)?.params?.[name],
    reads: (scheme) => declaredFor(scheme).length > 0,
  };
}

const CHALLENGE_ERROR: unique symbol = Symbol.for('agentward.challengeError') as never;

/** A skip that also asks the list's 401 for `error="<code>"` on the challenges of `scheme` (DPoP's `invalid_dpop_proof`). */
export interface ChallengeErrorSkip {
  readonly [CHALLENGE_ERROR]: ChallengeError;
}

/**
 * What a skip asks the list's 401 to say. `step`: the 401 is a protocol step the client answers by
 * itself (DPoP's `use_dpop_nonce`, RFC 9449 §9), not a refused credential.
 */
export interface ChallengeError {
  readonly scheme: string;
  readonly code: string;
  readonly step?: boolean;
}

/** The skip of an entry that knows what its 401 should say; make it once and return it on every such skip. */
export function skipWithError(scheme: string, code: string, step = false): ChallengeErrorSkip {
  return Object.freeze({ [CHALLENGE_ERROR]: Object.freeze({ scheme, code, step }) });
}

/** The error a skip asks for, when it is one of `skipWithError`'s. */
export function challengeErrorOf(value: object): ChallengeError | undefined {
  return (value as Partial<ChallengeErrorSkip>)[CHALLENGE_ERROR];
}
