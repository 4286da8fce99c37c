import { AuthConfigError } from './errors.ts';
import type { AuthFn, Challenge } from './types.ts';

/** What an entry advertises when it declares no `challenges`. */
export const DEFAULT_CHALLENGES: readonly Challenge[] = Object.freeze([Object.freeze({ scheme: 'Bearer' })]);

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Throws `AuthConfigError` when `realm` cannot be written into a header. */
export function checkRealm(helper: string, realm: unknown): string {
  if (typeof realm !== 'string' || CONTROL.test(realm) || /[^\u0000-\u00ff]/.test(realm)) {
    throw new AuthConfigError(`${helper}: realm must be a string of printable Latin-1 characters without control characters`);
  }
  return realm;
}

function quote(value: string): string {
  return `"${value.replace(/["\\]/g, '\\$&')}"`;
}

/** `Bearer`, `Basic realm="agent", charset="UTF-8"`, `<Scheme> realm="<realm>"`. */
export function formatChallenge(challenge: Challenge): string {
  const { scheme, realm } = challenge;
  if (scheme.toLowerCase() === 'basic') return `${scheme} realm=${quote(realm ?? 'agent')}, charset="UTF-8"`;
  return realm === undefined ? scheme : `${scheme} realm=${quote(realm)}`;
}

/** The distinct formatted challenges of a list, in list order; invalid declarations fail at creation. */
export function listChallenges(entries: readonly AuthFn[]): readonly string[] {
  const lines: string[] = [];
  for (const entry of entries) {
    const declared = entry.challenges ?? DEFAULT_CHALLENGES;
    if (!Array.isArray(declared)) throw new AuthConfigError('routeAuth(): an entry\'s challenges must be a list of { scheme, realm? }');
    for (const challenge of declared as readonly Challenge[]) {
      if (typeof challenge !== 'object' || challenge === null || typeof challenge.scheme !== 'string' || !TOKEN.test(challenge.scheme)) {
        throw new AuthConfigError('routeAuth(): a challenge scheme must be an RFC 9110 token');
      }
      if (challenge.realm !== undefined) checkRealm('routeAuth()', challenge.realm);
      const line = formatChallenge(challenge);
      if (!lines.includes(line)) lines.push(line);
    }
  }
  return Object.freeze(lines);
}
