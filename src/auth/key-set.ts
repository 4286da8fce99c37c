// SPDX-License-Identifier: MIT
import { ALGORITHM_NAMES, jwsAlgorithm, type AlgorithmName, type JwsAlgorithm } from './jws/algorithms.ts';
import type { JwsHeader } from './jws/compact.ts';
import { parseJsonObject, isRecord } from './jws/json.ts';
import {
  importFailed,
  importVerifyKey,
  KEY_SET_UNAVAILABLE,
  NO_KEYS,
  type KeySource,
  type VerifyKey,
} from './jws/key-source.ts';
import { readPublicJwk, type PublicKeySpec } from './jws/keys.ts';
import { readBoundedBody } from './bounded-body.ts';
import { attemptGate } from './attempt-gate.ts';
import { AuthUpstreamError, throwConfigError } from './errors.ts';
import { clockOf, type FetchLike, type InternalOptions } from './internal-options.ts';

/** Limits of a key-set (and discovery) fetch and of the cache. */
export const KEY_SET_TIMEOUT_MS = 5_000;
export const MAX_KEY_SET_BYTES = 1_048_576; // 1 MiB (a literal: a bundle without key sets drops it)
export const KEY_SET_FRESH_MS = 600_000; // 10 minutes
export const MAX_KEY_SET_KEYS = 100;
/** Keys tried for a token without `kid`. */
export const MAX_KEYS_TRIED = 8;

/** What a key set may serve: RSA, EC and Ed25519 keys, never an HMAC key. */
export const KEY_SET_ALGORITHMS: readonly AlgorithmName[] = /* @__PURE__ */ (() =>
  Object.freeze(ALGORITHM_NAMES.filter((name) => jwsAlgorithm(name)?.kty !== 'oct')))();
export const DEFAULT_KEY_SET_ALGORITHMS: readonly AlgorithmName[] = /* @__PURE__ */ Object.freeze([
  'RS256',
  'ES256',
] as const);

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Checks a URL option at creation (key set, discovery, resource metadata): `https:`, or `http:` on localhost, without user info. */
export function readHttpsUrl(helper: string, option: string, value: unknown): string {
  const url = (typeof value === 'string' || value instanceof URL) && URL.canParse(value) ? new URL(value) : undefined;
  if (url === undefined) throwConfigError(helper, `${option} must be an absolute URL`);
  const local = url.protocol === 'http:' && LOCAL_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !local) {
    throwConfigError(
      helper,
      `${option} must use https: (http: only on localhost, 127.0.0.1 or [::1]); got ${url.protocol}`,
    );
  }
  if (url.username !== '' || url.password !== '')
    throwConfigError(helper, `${option} must not contain a user name or password`);
  return url.href;
}

const utf8 = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * GETs `url` (or sends `request`: introspection's POST) and returns its body as a JSON object.
 * Throws on timeout (the whole exchange, body included), any answer but 2xx (a redirect is not
 * followed), a body over `limit` bytes (default 1 MiB), or a body that is not a JSON object.
 */
export async function fetchJsonObject(
  url: string,
  internals: InternalOptions,
  request: { init?: RequestInit; limit?: number } = {},
): Promise<Record<string, unknown>> {
  const timeoutMs = internals.timeoutMs ?? KEY_SET_TIMEOUT_MS;
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new AuthUpstreamError('AGENT_AUTH_UPSTREAM_UNAVAILABLE', `no answer within ${timeoutMs} ms`));
      controller.abort();
    }, timeoutMs);
  });
  try {
    return await Promise.race([
      readJsonObject(
        url,
        internals.fetch ?? fetch,
        controller.signal,
        request.init,
        request.limit ?? MAX_KEY_SET_BYTES,
      ),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
    // Releases a body left unread (a refused answer) and whatever a timed-out exchange still holds.
    controller.abort();
  }
}

/** Why a fetched answer was refused, for the warning that names the URL: `answered <what>`. */
const refused = (message: string) => new AuthUpstreamError('AGENT_AUTH_UPSTREAM_INVALID', message);

async function readJsonObject(
  url: string,
  fetchImpl: FetchLike,
  signal: AbortSignal,
  init: RequestInit | undefined,
  limit: number,
): Promise<Record<string, unknown>> {
  const response = await fetchImpl(url, {
    headers: { accept: 'application/json' },
    ...init,
    redirect: 'manual',
    signal,
  });
  // `redirect: 'manual'` yields the 3xx itself (Node, workerd) or an `opaqueredirect` of status 0 (browsers).
  if (response.type === 'opaqueredirect') throw refused('answered a redirect');
  if (!response.ok) throw refused(`answered ${response.status}`);
  const bytes = await readBoundedBody(response.body, limit);
  if (bytes === null) throw refused(`answered more than ${limit} bytes`);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw refused('answered a body that is not UTF-8');
  }
  const object = parseJsonObject(text);
  if (object === null) throw refused('answered a body that is not a JSON object');
  return object;
}

/**
 * The keys of a JWKS document that can serve `algorithms`, imported. Each member of `keys`
 * that cannot serve (not a public RSA/EC JWK, `kty` `oct`, RSA under 2048 bits or with a bad
 * exponent, `use` other than `sig`, `key_ops` without `verify`, an `alg` not allowed,
 * malformed, refused by Web Crypto) is dropped on its own; at most 100 keys are kept.
 */
export async function importKeySet(
  document: Record<string, unknown>,
  algorithms: readonly AlgorithmName[],
  warned = new Set<string>(),
): Promise<VerifyKey[]> {
  const { keys } = document;
  if (!Array.isArray(keys)) throw refused('answered JSON without a "keys" array');
  const candidates: { spec: PublicKeySpec; algorithms: JwsAlgorithm[] }[] = [];
  for (const jwk of keys as unknown[]) {
    if (candidates.length === MAX_KEY_SET_KEYS) break;
    if (!isRecord(jwk)) continue;
    const spec = readPublicJwk(jwk);
    if (typeof spec === 'string') continue;
    const usable = spec.algorithms
      .filter((name) => algorithms.includes(name))
      .map((name) => jwsAlgorithm(name) as JwsAlgorithm);
    if (usable.length > 0) candidates.push({ spec, algorithms: usable });
  }
  const imported = await Promise.all(
    candidates.map(({ spec, algorithms: usable }) =>
      Promise.all(
        usable.map((algorithm) =>
          importVerifyKey(spec, algorithm).catch((error: unknown) => importFailed(algorithm, error, warned)),
        ),
      ),
    ),
  );
  return imported.flat(2);
}

/**
 * The keys for `header`: those of its `alg` (and its `kid`, when it has one), the first
 * `MAX_KEYS_TRIED` of them; `undefined` when its `kid` is not in the set.
 */
function pick(keys: readonly VerifyKey[], header: JwsHeader): readonly VerifyKey[] | undefined {
  const { alg, kid } = header;
  if (kid !== undefined && !keys.some((key) => key.kid === kid)) return undefined;
  return keys
    .filter((key) => key.algorithm.name === alg && (kid === undefined || key.kid === kid))
    .slice(0, MAX_KEYS_TRIED);
}

/**
 * The remote key set of `jwt({ jwksUrl })` and `oidc()` (design §3 "Key sets"). Fetched on
 * first use, never at creation; fresh for 10 minutes after a successful fetch; a `kid` not in
 * the set refetches only when the last attempt began 30 s ago or more, and a failed fetch is
 * retried on the same bound (requests in between skip). Concurrent requests share one fetch,
 * except on Workers, where each request that needs keys fetches for itself and the imported
 * keys are still shared. Every failure gives no keys (a skip), never an error.
 */
export function keySetCache(
  url: string,
  algorithms: readonly AlgorithmName[],
  internals: InternalOptions = {},
): KeySource {
  const now = clockOf(internals);
  /** The keys of the last fetch that succeeded, and when it was. */
  let fetched:
    | { readonly keys: readonly VerifyKey[]; readonly all: ReadonlySet<VerifyKey>; readonly at: number }
    | undefined;
  const warned = new Set<string>();
  let started = 0;
  let installed = 0;

  const load = async (attempt: number): Promise<boolean> => {
    try {
      const keys = await importKeySet(await fetchJsonObject(url, internals), algorithms, warned);
      // On Workers fetches overlap: an older answer never replaces a newer one.
      if (attempt > installed) {
        installed = attempt;
        fetched = { keys, all: new Set(keys), at: now() };
      }
      return true;
    } catch (error) {
      console.warn(
        `agentward: key set ${withoutQuery(url)} could not be fetched (${(error as Error).message}); tokens that need it skip, next attempt in 30 s`,
      );
      return false;
    }
  };
  const fetches = attemptGate(internals, () => load(++started));
  /** The last fetch that succeeded, while fresh. */
  const freshAt = (time: number) => (time - (fetched?.at ?? -Infinity) < KEY_SET_FRESH_MS ? fetched : undefined);

  return {
    keysFor(header) {
      const time = now();
      const fresh = freshAt(time);
      const keys = fresh && pick(fresh.keys, header);
      if (keys !== undefined) return keys;
      // Without fresh keys a request on Workers makes its own fetch; with them (an unknown kid) it keeps to the 30 s bound.
      const attempt = fetches.next(time, fresh === undefined);
      if (attempt === undefined) return fresh ? NO_KEYS : KEY_SET_UNAVAILABLE;
      return attempt.then(() => {
        const after = freshAt(now());
        return after ? (pick(after.keys, header) ?? NO_KEYS) : KEY_SET_UNAVAILABLE;
      });
    },
    holds: (key) => freshAt(now())?.all.has(key) === true,
  };
}

/** A URL for the logs: its query (which may hold a key) and fragment left out. */
export function withoutQuery(url: string): string {
  const { origin, pathname } = new URL(url);
  return origin + pathname;
}
