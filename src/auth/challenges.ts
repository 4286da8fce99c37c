import { AuthConfigError } from './errors.ts';
import type { AuthFn, Challenge } from './types.ts';

/** What an entry advertises when it declares no `challenges`. */
export const DEFAULT_CHALLENGES: readonly Challenge[] = Object.freeze([Object.freeze({ scheme: 'Bearer' })]);

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Throws `AuthConfigError` when `value` (a `realm`, a `resourceMetadata`) cannot be written into a header. */
export function checkQuotable(helper: string, option: string, value: unknown): string {
  if (typeof value !== 'string' || CONTROL.test(value) || /[^\u0000-\u00ff]/.test(value)) {
    throw new AuthConfigError(`${helper}: ${option} must be a string of printable Latin-1 characters without control characters`);
  }
  return value;
}

function quote(value: string): string {
  return `"${value.replace(/["\\]/g, '\\$&')}"`;
}

/** `Bearer`, `Basic realm="agent", charset="UTF-8"`, `<Scheme> realm="<realm>"`, then `resource_metadata="<URL>"` (RFC 9728 §5.1). */
export function formatChallenge(challenge: Challenge): string {
  const { scheme, realm, resourceMetadata } = challenge;
  const basic = scheme.toLowerCase() === 'basic';
  const params = basic ? [`realm=${quote(realm ?? 'agent')}`, 'charset="UTF-8"'] : realm === undefined ? [] : [`realm=${quote(realm)}`];
  if (resourceMetadata !== undefined) params.push(`resource_metadata=${quote(resourceMetadata)}`);
  return params.length === 0 ? scheme : `${scheme} ${params.join(', ')}`;
}

/** The distinct formatted challenges of a list, in list order; invalid declarations fail at creation. */
export function listChallenges(entries: readonly AuthFn[]): readonly string[] {
  const lines: string[] = [];
  for (const entry of entries) {
    const declared = entry.challenges ?? DEFAULT_CHALLENGES;
    if (!Array.isArray(declared)) throw new AuthConfigError('routeAuth(): an entry\'s challenges must be a list of { scheme, realm?, resourceMetadata? }');
    for (const challenge of declared as readonly Challenge[]) {
      if (typeof challenge !== 'object' || challenge === null || typeof challenge.scheme !== 'string' || !TOKEN.test(challenge.scheme)) {
        throw new AuthConfigError('routeAuth(): a challenge scheme must be an RFC 9110 token');
      }
      if (challenge.realm !== undefined) checkQuotable('routeAuth()', 'realm', challenge.realm);
      if (challenge.resourceMetadata !== undefined) checkQuotable('routeAuth()', 'resourceMetadata', challenge.resourceMetadata);
      const line = formatChallenge(challenge);
      if (!lines.includes(line)) lines.push(line);
    }
  }
  return Object.freeze(lines);
}
