// SPDX-License-Identifier: MIT
// DPoP, the resource server's side (RFC 9449, design §16): the proof a request carries in its
// `DPoP` header, checked against the request and the access token it comes with. Every failure
// is a skip; the entry's 401 then says `error="invalid_dpop_proof"`. Read or skip this file as a unit.
import { skipWithError } from './challenges.ts';
import type { DpopPolicy } from './dpop-options.ts';
import { jwsAlgorithm, type JwsAlgorithm } from './jws/algorithms.ts';
import { encodeBase64url } from './jws/base64url.ts';
import { normalizeAudience } from './jws/claims.ts';
import { parseCompactJws, signatureOf, signingInputOf, type JwsHeader } from './jws/compact.ts';
import { parseJsonObject } from './jws/json.ts';
import { importVerifyKey, type VerifyKey } from './jws/key-source.ts';
import { readPublicJwk } from './jws/keys.ts';
import { verifySignature } from './jws/verify.ts';
import { sha256 } from './sha256.ts';

const MAX_JTI_LENGTH = 256;

/** The skip of an entry whose DPoP proof failed: its 401 says `error="invalid_dpop_proof"` on the DPoP challenge. */
export const INVALID_DPOP_PROOF = /* @__PURE__ */ skipWithError('DPoP', 'invalid_dpop_proof');
/** The skip of a proof without the current nonce (RFC 9449 §9): `error="use_dpop_nonce"`, the nonce in `DPoP-Nonce`. */
const USE_DPOP_NONCE = /* @__PURE__ */ skipWithError('DPoP', 'use_dpop_nonce', true);

/** Why a proof failed, as the skip that asks the 401 for it. */
export const proofSkip = (failed: ProofFailure) => (failed === 'dpop-nonce' ? USE_DPOP_NONCE : INVALID_DPOP_PROOF);

export type ProofFailure = 'dpop-proof' | 'dpop-nonce' | 'dpop-replay';

/** The `cnf.jkt` of a token's claims (or introspection answer): the thumbprint of the key it is bound to, or `undefined`. */
export function boundThumbprint(claims: Readonly<Record<string, unknown>>): string | undefined {
  const cnf = claims.cnf;
  if (cnf === undefined) return undefined;
  // A token bound some other way (a certificate's x5t#S256), or to a malformed key, is bound all
  // the same: '' matches no thumbprint, so it is presented neither as Bearer nor with a proof.
  const jkt = typeof cnf === 'object' && cnf !== null ? (cnf as Record<string, unknown>).jkt : undefined;
  return typeof jkt === 'string' ? jkt : '';
}

/**
 * A proof key's thumbprint, kept by the header object the JWS parser's header cache hands back
 * for the same header: a client's every proof shares it, so it is hashed once (docs/design.md
 * §30, "Speed tricks and what they bought").
 */
const thumbprints = new WeakMap<object, string | undefined>();

/** The base64url SHA-256 of `text`'s UTF-8 bytes. */
const digest = (text: string): string => encodeBase64url(sha256(text));

/** RFC 7638: the SHA-256 thumbprint of a public JWK, base64url; `undefined` for a key without its required members. */
export function jwkThumbprint(jwk: Readonly<Record<string, unknown>>): string | undefined {
  if (thumbprints.has(jwk)) return thumbprints.get(jwk);
  const { kty, crv, x, y, n, e } = jwk;
  // The required members in lexicographic order, as JSON.stringify writes an object's members in insertion order.
  const members =
    kty === 'EC' ? { crv, kty, x, y } : kty === 'RSA' ? { e, kty, n } : kty === 'OKP' ? { crv, kty, x } : undefined;
  const thumbprint =
    members !== undefined && Object.values(members).every((value) => typeof value === 'string')
      ? digest(JSON.stringify(members))
      : undefined;
  thumbprints.set(jwk, thumbprint);
  return thumbprint;
}

/** RFC 9449 §4.2 `ath`: the base64url SHA-256 of the access token. */
export const accessTokenHash = (token: string): string => digest(token);

/** What a request needs for its proof to be checked: its method, URL and headers (a Web `Request` or the node server's view). */
export interface ProofRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: { get(name: string): string | null };
  /** Takes the nonce offered for the request's answer (`routeAuth()`'s view, with DPoP nonces). */
  readonly offerNonce?: (nonce: string) => void;
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

/**
 * Whether `signature` over `input` verifies with the proof's `jwk` (public members only; the key
 * rules of `publicKey`). The Wycheproof vectors test this function, which `checkProof` calls.
 */
export async function proofSignatureVerifies(
  jwk: Readonly<Record<string, unknown>>,
  algorithm: JwsAlgorithm,
  signature: Uint8Array<ArrayBuffer>,
  input: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  const key = await proofKey(jwk, algorithm);
  try {
    return key !== null && (await verifySignature(key, signature, input));
  } catch {
    return false; // a signature the runtime refuses to process is not a valid one
  }
}

/** The request's URL as `htu` names it (RFC 9449 §4.3): without query and fragment, `dpopOrigin` in place of its origin, normalized. */
function requestUri(request: ProofRequest, origin: string | undefined): string {
  const url = withoutQuery(request.url);
  if (origin === undefined) return normalizeAudience(url);
  const slash = url.startsWith('/') ? 0 : url.indexOf('/', url.indexOf('//') + 2);
  return normalizeAudience(origin + (slash < 0 ? '/' : url.slice(slash)));
}

/**
 * The algorithm of a proof whose header and claims fit the request and the token (RFC 9449 §4.3):
 * `typ`, an allowed `alg`, a `jwk`, `jti`, `htm`, `htu`, a numeric `iat` and `ath`. `undefined`
 * when any does not.
 */
function proofAlgorithm(
  header: JwsHeader,
  claims: Readonly<Record<string, unknown>>,
  request: ProofRequest,
  ath: string,
  policy: DpopPolicy,
): JwsAlgorithm | undefined {
  const { alg, typ, jwk } = header;
  const { jti, htm, htu, iat } = claims;
  const fits =
    typ === 'dpop+jwt' &&
    policy.algorithms.has(alg) &&
    typeof jti === 'string' &&
    jti.length > 0 &&
    jti.length <= MAX_JTI_LENGTH &&
    htm === request.method &&
    typeof htu === 'string' &&
    URL.canParse(htu) &&
    normalizeAudience(withoutQuery(htu)) === requestUri(request, policy.origin) &&
    typeof iat === 'number' &&
    claims.ath === ath &&
    jwk !== undefined;
  return fits ? jwsAlgorithm(alg) : undefined;
}

/**
 * Checks the proof of a request that presented a token with the `DPoP` scheme, bound to the key
 * whose thumbprint is `jkt` (RFC 9449 §4.3, §7.1, §8): `null` when it holds, else why not
 * (`dpop-proof`, `dpop-nonce` for a proof without a nonce the entry accepts now, `dpop-replay`
 * for a proof already used). With nonces, the current one is offered for the request's answer. `ath` is the token's
 * `accessTokenHash()` (a cached token keeps it); `clock` in seconds, read once, after the signature.
 * The proof's `jwk` has `jkt` as its RFC 7638 thumbprint.
 */
export async function checkProof(
  request: ProofRequest,
  ath: string,
  jkt: string,
  policy: DpopPolicy,
  clock: () => number,
): Promise<ProofFailure | null> {
  // The nonces first: every answer to the request carries the current one, this 401's too.
  let nonces: readonly string[] | undefined;
  if (policy.nonces !== undefined) {
    try {
      nonces = await policy.nonces(clock());
    } catch (error) {
      storeFailed('failed to give a nonce', error);
      return 'dpop-proof';
    }
    request.offerNonce?.(nonces[0] as string);
  }
  const proof = request.headers.get('dpop');
  // One DPoP header: fetch and the node server join repeated ones with ", ", which a JWS never holds.
  const jws = proof === null || proof.includes(',') ? null : parseCompactJws(proof);
  const claims = jws === null ? null : parseJsonObject(jws.payload);
  if (jws === null || claims === null) return 'dpop-proof';
  const algorithm = proofAlgorithm(jws.header, claims, request, ath, policy);
  const jwk = jws.header.jwk as Readonly<Record<string, unknown>>;
  if (algorithm === undefined || jwkThumbprint(jwk) !== jkt) return 'dpop-proof';
  // Copies: the parser's shared buffers may hold another token's bytes once the key import is awaited.
  if (!(await proofSignatureVerifies(jwk, algorithm, signatureOf(jws).slice(), signingInputOf(jws).slice())))
    return 'dpop-proof';
  // One clock reading, after the signature, judges the window and the replay store's expiry
  // (design §20): read before, a proof accepted at the window's last instant met a store that
  // had already let it expire, and was accepted again.
  const now = clock();
  const iat = claims.iat as number;
  const { maxAgeSec, toleranceSec } = policy;
  if (iat > now + toleranceSec || iat < now - maxAgeSec - toleranceSec) return 'dpop-proof';
  if (nonces !== undefined && !nonces.includes(claims.nonce as string)) return 'dpop-nonce';
  return (await alreadySeen(
    policy,
    digest(`${jkt} ${claims.jti}`),
    Math.ceil(iat + maxAgeSec + 2 * toleranceSec) + 1,
    now,
  ))
    ? 'dpop-replay'
    : null;
}

/**
 * Last: only a proof that holds takes a place in the replay store, kept past the last instant any
 * instance accepts it (its clock up to toleranceSec ahead of the one that purges). A store that
 * fails refuses the proof (it cannot tell a replay): a skip, never a 500.
 */
async function alreadySeen(policy: DpopPolicy, key: string, expiresAtSec: number, now: number): Promise<boolean> {
  try {
    return (await policy.replay.seen(key, expiresAtSec, now)) !== false;
  } catch (error) {
    storeFailed('failed', error);
    return true;
  }
}

/** A replay store that failed refuses the proof: said to the operator (`how` it failed), never to the client. */
const storeFailed = (how: string, error: unknown) =>
  console.error(
    `agentward: the DPoP replay store ${how}; the proof is refused`,
    error instanceof Error ? error.message : error,
  );
