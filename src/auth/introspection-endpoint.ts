// SPDX-License-Identifier: MIT
// Where introspection() and tokenExchange() send their calls (RFC 7662, RFC 8693, RFC 8414,
// design §17, §27): the configured endpoint, or the one the issuer's metadata names.
import { attemptGate } from './attempt-gate.ts';
import type { InternalOptions } from './internal-options.ts';
import { fetchJsonObject } from './key-set.ts';

/** The configured endpoint, the same for every call. */
export function staticEndpoint(url: string): (time: number) => Promise<string> {
  const answer = Promise.resolve(url);
  return () => answer;
}

/** What a discovery looks for, and who says so when it finds nothing. */
export interface DiscoveredField {
  /** The metadata member naming the endpoint: `introspection_endpoint`, `token_endpoint`. */
  readonly field: string;
  /** Names the helper and what its calls do meanwhile, in the warning: `introspection(): …; tokens skip`. */
  readonly helper: string;
  readonly meanwhile: string;
}

/**
 * The endpoint `wanted.field` of `issuer`'s metadata (default: the introspection endpoint): RFC
 * 8414's document (`/.well-known/oauth-authorization-server` inserted before the issuer's
 * path), else OpenID discovery; its `issuer` must equal the configured one exactly, its endpoint
 * `https:` (`http:` on the issuer's loopback host). Found once, on first use; a failed discovery
 * is retried at most once per 30 s.
 */
export function discoveredEndpoint(
  issuer: string,
  issuerHref: string,
  internals: InternalOptions,
  wanted: DiscoveredField = { field: 'introspection_endpoint', helper: 'introspection()', meanwhile: 'tokens skip' },
): (time: number) => Promise<string | undefined> {
  const { field, helper, meanwhile } = wanted;
  const { origin, pathname } = new URL(issuerHref);
  const path = pathname === '/' ? '' : pathname.replace(/\/+$/, '');
  const documents = [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`,
  ];
  let endpoint: string | undefined;
  const discover = async (): Promise<boolean> => {
    for (const url of documents) {
      try {
        const document = await fetchJsonObject(url, internals);
        if (document.issuer !== issuer) continue;
        const named = document[field];
        const found = typeof named === 'string' && URL.canParse(named) ? new URL(named) : undefined;
        const local =
          found?.protocol === 'http:' &&
          new URL(issuerHref).protocol === 'http:' &&
          found.hostname === new URL(issuerHref).hostname;
        if (found === undefined || (found.protocol !== 'https:' && !local)) continue;
        endpoint = found.href;
        return true;
      } catch {
        // The next document, or the next attempt in 30 s.
      }
    }
    console.warn(
      `agentward: ${helper}: no metadata of ${JSON.stringify(issuer.slice(0, 200))} names a usable ${field} for that issuer; ${meanwhile}, next attempt in 30 s`,
    );
    return false;
  };
  const attempts = attemptGate(internals, discover);
  return async (time) => {
    if (endpoint !== undefined) return endpoint;
    await attempts.next(time * 1000);
    return endpoint;
  };
}
