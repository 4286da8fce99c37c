// SPDX-License-Identifier: MIT
// DPoP, the resource server's side (RFC 9449, design §16): the proof a request carries in its
// `DPoP` header, checked against the request and the access token it comes with. Every failure
// is a skip; the entry's 401 then says `error="invalid_dpop_proof"`. Read or skip this file as a unit.
import { jwsAlgorithm, type AlgorithmName, type JwsAlgorithm } from './jws/algorithms.ts';
import { encodeBase64url } from './jws/base64url.ts';
import { normalizeAudience } from './jws/claims.ts';
import { parseCompactJws, signatureOf, signingInputOf } from './jws/compact.ts';
import { parseJsonObject } from './jws/json.ts';
import { importVerifyKey, type VerifyKey } from './jws/key-source.ts';
import { readPublicJwk } from './jws/keys.ts';
import { verifySignature } from './jws/verify.ts';
import { sha256 } from './sha256.ts';
import { throwConfigError } from './errors.ts';
import { isNumberIn } from './options.ts';
import { DEFAULT_CHALLENGES, skipWithError } from './challenges.ts';
import type { Challenge } from './types.ts';

/**
 * Remembers proofs seen: `seen` is true when `key` was seen already (and has not expired at
 * `nowSec`), and records it otherwise, until `expiresAtSec`. `nowSec` is the clock reading the
 * entry judged the proof's `iat` by: a store that judges expiry by it too never lets a proof
 * the entry still accepts pass as unseen (design §20).
 */
export interface DpopReplayStore {
  seen(key: string, expiresAtSec: number, nowSec?: number): boolean | Promise<boolean>;
}

/** The DPoP options of `jwt()`, `oidc()` and `introspection()`. */
export interface DpopOptions {
  /** `'allowed'` (default): a token comes as `Bearer` (unbound tokens only) or as `DPoP` with its proof; `'required'`: as `DPoP` only. */
  dpop?: 'allowed' | 'required';
  /** Proof algorithms accepted (asymmetric only); default `ES256`, `EdDSA`, `Ed25519`, `RS256`, `PS256`. */
  dpopAlgorithms?: readonly string[];
  /** How old a proof's `iat` may be, in seconds (plus `clockToleranceSec`); default 300. */
  dpopMaxAgeSec?: number;
  /** The origin the client called, e.g. `https://api.example`, when a proxy in front changes it: the proof's `htu` names it. */
  dpopOrigin?: string;
  /** Where used proofs are remembered; default one bounded set in this entry's memory. Several instances share one (`postgresReplayStore`). */
  dpopReplay?: DpopReplayStore;
}

export const DPOP_OPTION_NAMES = ['dpop', 'dpopAlgorithms', 'dpopMaxAgeSec', 'dpopOrigin', 'dpopReplay'] as const;

const DEFAULT_ALGORITHMS: readonly AlgorithmName[] = ['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256'];
const MAX_JTI_LENGTH = 256;
/** Proofs the default replay store holds at once; when full it refuses new proofs (fails closed). */
export const DEFAULT_REPLAY_KEYS = 100_000;

/** What a DPoP entry checks, read from its options at creation. */
export interface DpopPolicy {
  readonly required: boolean;
  /**
   * Whether the 401 advertises `DPoP algs="…"`: when `dpop` is set. Unset, DPoP-bound tokens are
   * still accepted with their proof, and the challenge stays the spec's `Bearer` for `jwt()`/`oidc()`.
   */
  readonly advertised: boolean;
  readonly algorithms: ReadonlySet<string>;
  readonly maxAgeSec: number;
  readonly toleranceSec: number;
  /** `dpopOrigin`, normalized, without a trailing `/`. */
  readonly origin: string | undefined;
  readonly replay: DpopReplayStore;
}

/** Checks the DPoP options at creation; `clockToleranceSec` is the entry's. */
export function readDpopPolicy(helper: string, options: DpopOptions, toleranceSec: number): DpopPolicy {
  const { dpop = 'allowed', dpopMaxAgeSec = 300, dpopOrigin, dpopReplay } = options;
  if (dpop !== 'allowed' && dpop !== 'required') throwConfigError(helper, `dpop must be 'allowed' or 'required'`);
  const names = options.dpopAlgorithms ?? DEFAULT_ALGORITHMS;
  if (!Array.isArray(names) || names.length === 0)
    throwConfigError(helper, 'dpopAlgorithms must be a non-empty list of asymmetric JWS algorithms');
  for (const name of names as unknown[]) {
    const algorithm = typeof name === 'string' ? jwsAlgorithm(name) : undefined;
    if (algorithm === undefined || algorithm.kty === 'oct') {
      throwConfigError(
        helper,
        `dpopAlgorithms entry ${JSON.stringify(String(name).slice(0, 16))} is not an asymmetric JWS algorithm this verifier knows (e.g. ES256, EdDSA, RS256, PS256)`,
      );
    }
  }
  if (!isNumberIn(dpopMaxAgeSec, 1, 3600)) {
    throwConfigError(helper, 'dpopMaxAgeSec must be a number of seconds from 1 to 3600');
  }
  let origin: string | undefined;
  if (dpopOrigin !== undefined) {
    const parsed =
      typeof dpopOrigin === 'string' && /^https?:\/\/[^/?#@]+\/?$/i.test(dpopOrigin) && URL.canParse(dpopOrigin)
        ? new URL(dpopOrigin)
        : undefined;
    if (parsed === undefined) {
      throwConfigError(
        helper,
        'dpopOrigin must be an origin such as "https://api.example" (no path, query or user info)',
      );
    }
    origin = parsed.origin;
  }
  if (dpopReplay !== undefined && typeof (dpopReplay as DpopReplayStore | null)?.seen !== 'function') {
    throwConfigError(helper, 'dpopReplay must be { seen(key, expiresAtSec, nowSec) }, e.g. postgresReplayStore()');
  }
  return Object.freeze({
    required: dpop === 'required',
    advertised: options.dpop !== undefined,
    algorithms: new Set(names as string[]),
    maxAgeSec: dpopMaxAgeSec,
    toleranceSec,
    origin,
    replay: dpopReplay ?? memoryReplayStore(DEFAULT_REPLAY_KEYS),
  });
}

/** The skip of an entry whose DPoP proof failed: its 401 says `error="invalid_dpop_proof"` on the DPoP challenge. */
export const INVALID_DPOP_PROOF = /* @__PURE__ */ skipWithError('DPoP', 'invalid_dpop_proof');

/**
 * The challenges of a `jwt()`, `oidc()` or `introspection()` entry: `Bearer` (unless DPoP is
 * required) and, when `dpop` is set, `DPoP algs="…"` (RFC 9449 §7.1), each with `resource_metadata`
 * (RFC 9728) and the `scope` it requires (MCP asks for exactly these).
 */
export function entryChallenges(
  policy: DpopPolicy,
  resourceMetadata: string | undefined,
  scopes: readonly string[] | undefined,
): readonly Challenge[] {
  const params: Record<string, string> = {};
  if (resourceMetadata !== undefined) params.resource_metadata = resourceMetadata;
  if (scopes !== undefined) params.scope = scopes.join(' ');
  const bearer =
    Object.keys(params).length === 0
      ? DEFAULT_CHALLENGES[0]!
      : Object.freeze({ scheme: 'Bearer', params: Object.freeze(params) });
  if (!policy.advertised) return bearer === DEFAULT_CHALLENGES[0] ? DEFAULT_CHALLENGES : Object.freeze([bearer]);
  // Names of the algorithm table only (readDpopPolicy refuses any other): letters and digits, quotable as they are.
  const algs = [...policy.algorithms].join(' ');
  const dpop = Object.freeze({ scheme: 'DPoP', params: Object.freeze({ algs, ...params }) });
  return Object.freeze(policy.required ? [dpop] : [bearer, dpop]);
}

/** The `cnf.jkt` of a token's claims (or introspection answer): the thumbprint of the key it is bound to, or `undefined`. */
export function boundThumbprint(claims: Readonly<Record<string, unknown>>): string | undefined {
  const cnf = claims.cnf;
  if (cnf === undefined) return undefined;
  // A token bound some other way (a certificate's x5t#S256), or to a malformed key, is bound all
  // the same: '' matches no thumbprint, so it is presented neither as Bearer nor with a proof.
  const jkt = typeof cnf === 'object' && cnf !== null ? (cnf as Record<string, unknown>).jkt : undefined;
  return typeof jkt === 'string' ? jkt : '';
}

/** RFC 7638: the SHA-256 thumbprint of a public JWK, base64url; `undefined` for a key without its required members. */
export function jwkThumbprint(jwk: Readonly<Record<string, unknown>>): string | undefined {
  const { kty, crv, x, y, n, e } = jwk;
  // The required members in lexicographic order, as JSON.stringify writes an object's members in insertion order.
  const members =
    kty === 'EC' ? { crv, kty, x, y } : kty === 'RSA' ? { e, kty, n } : kty === 'OKP' ? { crv, kty, x } : undefined;
  if (members === undefined || !Object.values(members).every((value) => typeof value === 'string')) return undefined;
  return encodeBase64url(sha256(JSON.stringify(members)));
}

/**
 * The thumbprint of a proof's `jwk`, kept by the header object the JWS parser's header cache
 * hands back for the same header: a client's every proof shares it. Hashing it each time cost
 * 8 µs of a 143 µs cached DPoP request (bench suite dpop, in-process, Node 22).
 */
const thumbprints = new WeakMap<object, string | undefined>();

function thumbprintOf(jwk: unknown): string | undefined {
  if (typeof jwk !== 'object' || jwk === null) return undefined;
  if (thumbprints.has(jwk)) return thumbprints.get(jwk);
  const thumbprint = jwkThumbprint(jwk as Record<string, unknown>);
  thumbprints.set(jwk, thumbprint);
  return thumbprint;
}

/** RFC 9449 §4.2 `ath`: the base64url SHA-256 of the access token. */
export const accessTokenHash = (token: string): string => encodeBase64url(sha256(token));

/** What a request needs for its proof to be checked: its method, URL and headers (a Web `Request` or the node server's view). */
export interface ProofRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: { get(name: string): string | null };
}

/** Imported proof keys by algorithm and the whole JWK (every member, so each one is checked once): a client signs every proof with one key. */
const importedKeys = new Map<string, Promise<VerifyKey | null>>();
const IMPORTED_KEYS = 1_000;

function proofKey(jwk: Readonly<Record<string, unknown>>, algorithm: JwsAlgorithm): Promise<VerifyKey | null> {
  const cacheKey = `${algorithm.name} ${JSON.stringify(jwk)}`;
  let key = importedKeys.get(cacheKey);
  if (key === undefined) {
    // The same key rules as `publicKey`: public members only, RSA 2048 bits or more, EC points on their curve.
    const spec = readPublicJwk(jwk);
    key =
      typeof spec === 'string' || !spec.algorithms.includes(algorithm.name)
        ? Promise.resolve(null)
        : importVerifyKey(spec, algorithm).catch(() => null);
    if (importedKeys.size >= IMPORTED_KEYS) importedKeys.delete(importedKeys.keys().next().value as string);
    importedKeys.set(cacheKey, key);
  }
  return key;
}

const withoutQuery = (url: string) => {
  const end = url.search(/[?#]/);
  return end < 0 ? url : url.slice(0, end);
};

/** Whether `signature` over `input` verifies with the proof's `jwk` (public members only; the key rules of `publicKey`). */
export async function proofSignatureVerifies(
  jwk: Readonly<Record<string, unknown>>,
  algorithm: JwsAlgorithm,
  signature: Uint8Array<ArrayBuffer>,
  input: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  const key = await proofKey(jwk, algorithm);
  return key !== null && (await verifySignature(key, signature, input).catch(() => false));
}

/** The request's URL as `htu` names it (RFC 9449 §4.3): without query and fragment, `dpopOrigin` in place of its origin, normalized. */
function requestUri(request: ProofRequest, origin: string | undefined): string {
  const url = withoutQuery(request.url);
  if (origin === undefined) return normalizeAudience(url);
  const slash = url.startsWith('/') ? 0 : url.indexOf('/', url.indexOf('//') + 2);
  return normalizeAudience(origin + (slash < 0 ? '/' : url.slice(slash)));
}

/**
 * Checks the proof of a request that presented a token with the `DPoP` scheme, bound to the key
 * whose thumbprint is `jkt` (RFC 9449 §4.3, §7.1): `null` when it holds, else why not
 * (`dpop-proof`, or `dpop-replay` for a proof already used). `ath` is the token's
 * `accessTokenHash()` (a cached token keeps it); `clock` in seconds, read once, after the signature.
 */
export async function checkProof(
  request: ProofRequest,
  ath: string,
  jkt: string,
  policy: DpopPolicy,
  clock: () => number,
): Promise<'dpop-proof' | 'dpop-replay' | null> {
  const proof = request.headers.get('dpop');
  // One DPoP header: fetch and the node server join repeated ones with ", ", which a JWS never holds.
  const jws = proof === null || proof.includes(',') ? null : parseCompactJws(proof);
  const claims = jws === null ? null : parseJsonObject(jws.payload);
  if (jws === null || claims === null) return 'dpop-proof';
  const { alg, typ, jwk } = jws.header;
  const algorithm = policy.algorithms.has(alg) ? jwsAlgorithm(alg) : undefined;
  const { jti, htm, htu, iat } = claims;
  const valid =
    typ === 'dpop+jwt' &&
    algorithm !== undefined &&
    jwk !== undefined &&
    typeof jti === 'string' &&
    jti.length > 0 &&
    jti.length <= MAX_JTI_LENGTH &&
    htm === request.method &&
    typeof htu === 'string' &&
    URL.canParse(htu) &&
    normalizeAudience(withoutQuery(htu)) === requestUri(request, policy.origin) &&
    typeof iat === 'number' &&
    claims.ath === ath &&
    thumbprintOf(jwk) === jkt;
  if (!valid) return 'dpop-proof';
  const key = await proofKey(jwk, algorithm);
  // The parser's shared buffers are read after the await: signatureOf/signingInputOf reload them if another token came between.
  if (key === null || !(await verifySignature(key, signatureOf(jws), signingInputOf(jws)).catch(() => false)))
    return 'dpop-proof';
  // One clock reading, after the signature, judges the window and the replay store's expiry
  // (design §20): read before, a proof accepted at the window's last instant met a store that
  // had already let it expire, and was accepted again.
  const now = clock();
  const { maxAgeSec, toleranceSec } = policy;
  if (iat > now + toleranceSec || iat < now - maxAgeSec - toleranceSec) return 'dpop-proof';
  // Last: only a proof that holds takes a place in the replay store, kept past the last instant
  // any instance accepts it (its clock up to toleranceSec ahead of the one that purges). A store
  // that fails refuses the proof (it cannot tell a replay): a skip, never a 500.
  const replayKey = encodeBase64url(sha256(`${jkt} ${jti}`));
  const seen = await Promise.resolve()
    .then(() => policy.replay.seen(replayKey, Math.ceil(iat + maxAgeSec + 2 * toleranceSec) + 1, now))
    .catch((error: unknown) => {
      console.error(
        'agentward: the DPoP replay store failed; the proof is refused',
        error instanceof Error ? error.message : error,
      );
      return true;
    });
  return seen === false ? null : 'dpop-replay';
}

/**
 * The default replay store: proof keys in memory until they expire, at most `limit` at once.
 * Full, it refuses every new proof and warns once (it fails closed): size it, or share a
 * database store, for the proofs a window of `dpopMaxAgeSec` brings.
 */
export function memoryReplayStore(limit: number): DpopReplayStore {
  const expiries = new Map<string, number>();
  let warned = false;
  return {
    seen(key, expiresAtSec, now = Date.now() / 1000) {
      // Keys arrive about in the order they expire: drop expired ones from the oldest on.
      for (const [old, at] of expiries) {
        if (at > now) break;
        expiries.delete(old);
      }
      const at = expiries.get(key);
      if (at !== undefined && at > now) return true;
      if (expiries.size >= limit) {
        if (!warned)
          console.warn(
            `agentward: the DPoP replay store holds ${limit} proofs; new proofs are refused until older ones expire (use dpopReplay to share a larger store)`,
          );
        warned = true;
        return true;
      }
      expiries.set(key, expiresAtSec);
      return false;
    },
  };
}
