// SPDX-License-Identifier: MIT
import { AuthConfigError } from './errors.ts';
import { checkOptionNames } from './options.ts';
import type { AuthFn, Challenge } from './types.ts';

/** What an entry advertises when it declares no `challenges`. */
export const DEFAULT_CHALLENGES: readonly Challenge[] = Object.freeze([Object.freeze({ scheme: 'Bearer' })]);

/** RFC 9110 `token`: scheme and auth-param names. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Throws `AuthConfigError` when `value` (a `realm`, a URL, a param) cannot be written into a header as a quoted-string. */
export function checkQuotable(helper: string, option: string, value: unknown): string {
  if (typeof value !== 'string' || CONTROL.test(value) || /[^\u0000-\u00ff]/.test(value)) {
    throw new AuthConfigError(`${helper}: ${option} must be a string of printable Latin-1 characters without control characters`);
  }
  return value;
}

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
  const parts = basic ? [`realm=${quote(realm ?? 'agent')}`, 'charset="UTF-8"'] : realm === undefined ? [] : [`realm=${quote(realm)}`];
  if (error !== undefined) parts.push(`error=${quote(error)}`);
  if (params !== undefined) for (const name of Object.keys(params)) parts.push(`${name}=${quote(params[name] as string)}`);
  return parts.length === 0 ? scheme : `${scheme} ${parts.join(', ')}`;
}

/** Checks one declared challenge (closed, a token scheme, quotable values), at creation. */
function checkChallenge(challenge: unknown): Challenge {
  if (typeof challenge !== 'object' || challenge === null || typeof (challenge as Challenge).scheme !== 'string' || !TOKEN.test((challenge as Challenge).scheme)) {
    throw new AuthConfigError('routeAuth(): a challenge scheme must be an RFC 9110 token');
  }
  checkOptionNames('routeAuth(): a challenge', challenge, ['scheme', 'realm', 'params']);
  const { realm, params } = challenge as Challenge;
  if (realm !== undefined) checkQuotable('routeAuth()', 'realm', realm);
  if (params !== undefined) {
    if (typeof params !== 'object' || params === null || Array.isArray(params)) throw new AuthConfigError('routeAuth(): a challenge\'s params must be an object of auth-param names to values');
    for (const [name, value] of Object.entries(params)) {
      if (!TOKEN.test(name) || ['realm', 'error', 'charset'].includes(name.toLowerCase())) throw new AuthConfigError(`routeAuth(): challenge param ${JSON.stringify(name.slice(0, 64))} must be an RFC 9110 token other than realm, error and charset`);
      checkQuotable('routeAuth()', `challenge param ${name}`, value);
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
    if (!Array.isArray(challenges)) throw new AuthConfigError('routeAuth(): an entry\'s challenges must be a list of { scheme, realm?, params? }');
    for (const challenge of challenges as readonly unknown[]) declared.push(checkChallenge(challenge));
  }
  const format = (scheme: string | undefined, code: string | undefined): readonly string[] => {
    const lines: string[] = [];
    for (const challenge of declared) {
      const line = formatChallenge(challenge, scheme !== undefined && challenge.scheme.toLowerCase() === scheme ? code : undefined);
      if (!lines.includes(line)) lines.push(line);
    }
    return Object.freeze(lines);
  };
  const plain = format(undefined, undefined);
  // Made on first use, one set of lines per (scheme, error): a list has few of them.
  const withError = new Map<string, readonly string[]>();
  const schemes = new Set(declared.map((challenge) => challenge.scheme.toLowerCase()));
  return {
    lines(error) {
      if (error === undefined) return plain;
      const scheme = error.scheme.toLowerCase();
      const key = `${scheme} ${error.code}`;
      let lines = withError.get(key);
      if (lines === undefined) withError.set(key, (lines = format(scheme, error.code)));
      return lines;
    },
    param(scheme, name) {
      const lower = scheme.toLowerCase();
      return declared.find((challenge) => challenge.scheme.toLowerCase() === lower && challenge.params?.[name] !== undefined)?.params?.[name];
    },
    reads: (scheme) => schemes.has(scheme),
  };
}

const CHALLENGE_ERROR: unique symbol = Symbol.for('agentward.challengeError') as never;

/** A skip that also asks the list's 401 for `error="<code>"` on the challenges of `scheme` (DPoP's `invalid_dpop_proof`). */
export interface ChallengeErrorSkip {
  readonly [CHALLENGE_ERROR]: { readonly scheme: string; readonly code: string };
}

const errorSkips = new Map<string, ChallengeErrorSkip>();

/** The skip of an entry that knows what its 401 should say (one frozen object per scheme and code). */
export function skipWithError(scheme: string, code: string): ChallengeErrorSkip {
  const key = `${scheme} ${code}`;
  let skip = errorSkips.get(key);
  if (skip === undefined) errorSkips.set(key, (skip = Object.freeze({ [CHALLENGE_ERROR]: Object.freeze({ scheme, code }) })));
  return skip;
}

/** The error a skip asks for, when it is one of `skipWithError`'s. */
export function challengeErrorOf(value: object): { scheme: string; code: string } | undefined {
  return (value as Partial<ChallengeErrorSkip>)[CHALLENGE_ERROR];
}
