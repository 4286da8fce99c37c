// SPDX-License-Identifier: MIT
// The DPoP options of jwt(), oidc() and introspection() (RFC 9449, design §16), checked at creation,
// and the challenges an entry that accepts DPoP advertises.
import { jwsAlgorithm, type AlgorithmName } from './jws/algorithms.ts';
import { defaultReplayStore, type DpopReplayStore } from './dpop-replay.ts';
import { throwConfigError } from './errors.ts';
import { checkOptionNames, isNumberIn } from './options.ts';
import { challengeScope } from './challenges.ts';
import { dpopNonces, type DpopNonces } from './dpop-nonce.ts';
import type { Challenge } from './types.ts';

/** The DPoP options of `jwt()`, `oidc()` and `introspection()`. */
export interface DpopOptions {
  /**
   * `'allowed'` (default): a token comes as `Bearer` (unbound tokens only) or as `DPoP` with its
   * proof; `'required'`: as `DPoP` only. The object form adds server nonces (RFC 9449 §8): with
   * `nonce: true` a proof must carry the nonce the server gave in `DPoP-Nonce` (401
   * `use_dpop_nonce` otherwise); it changes every `nonceRotateSec` (default 300, 10 to 86,400) and
   * the previous one is accepted one period more. `required: true` is `'required'`.
   */
  dpop?: 'allowed' | 'required' | DpopNonceOptions;
  /** Proof algorithms accepted (asymmetric only); default `ES256`, `EdDSA`, `Ed25519`, `RS256`, `PS256`. */
  dpopAlgorithms?: readonly string[];
  /** How old a proof's `iat` may be, in seconds (plus `clockToleranceSec`); default 300. */
  dpopMaxAgeSec?: number;
  /** The origin the client called, e.g. `https://api.example`, when a proxy in front changes it: the proof's `htu` names it. */
  dpopOrigin?: string;
  /**
   * Where used proofs are remembered; default one bounded set in this process's memory, shared by every
   * entry without a store of its own. Several instances share one (`postgresReplayStore`).
   */
  dpopReplay?: DpopReplayStore;
}

/** The object form of `dpop`: `{ nonce: true }`, `{ required: true, nonce: true, nonceRotateSec: 600 }`. */
export interface DpopNonceOptions {
  required?: boolean;
  nonce: true;
  nonceRotateSec?: number;
}

export const DPOP_OPTION_NAMES = ['dpop', 'dpopAlgorithms', 'dpopMaxAgeSec', 'dpopOrigin', 'dpopReplay'] as const;

const DEFAULT_ALGORITHMS: readonly AlgorithmName[] = ['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256'];

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
  /** With `dpop: { nonce: true }`: the nonces a proof may carry now. */
  readonly nonces?: DpopNonces;
}

/** Checks the DPoP options at creation; `clockToleranceSec` is the entry's. */
export function readDpopPolicy(helper: string, options: DpopOptions, toleranceSec: number): DpopPolicy {
  const { dpop = 'allowed', dpopMaxAgeSec = 300, dpopOrigin, dpopReplay } = options;
  const form = typeof dpop === 'object' && dpop !== null;
  if (form) checkOptionNames(`${helper}: dpop`, dpop, ['required', 'nonce', 'nonceRotateSec']);
  if (
    form
      ? dpop.nonce !== true || (dpop.required !== undefined && typeof dpop.required !== 'boolean')
      : dpop !== 'allowed' && dpop !== 'required'
  )
    throwConfigError(
      helper,
      `dpop must be 'allowed', 'required' or { nonce: true, required?: boolean, nonceRotateSec? }`,
    );
  if (form && !isNumberIn(dpop.nonceRotateSec ?? 300, 10, 86_400))
    throwConfigError(helper, 'dpop.nonceRotateSec must be a number of seconds from 10 to 86400');
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
  const replay = dpopReplay ?? defaultReplayStore();
  if (form && typeof replay.nonce !== 'function')
    throwConfigError(helper, 'dpop nonces need a dpopReplay store with nonce(key, expiresAtSec)');
  return Object.freeze({
    required: form ? dpop.required === true : dpop === 'required',
    advertised: options.dpop !== undefined,
    algorithms: new Set(names as string[]),
    maxAgeSec: dpopMaxAgeSec,
    toleranceSec,
    origin,
    replay,
    nonces: form ? dpopNonces(replay, dpop.nonceRotateSec ?? 300) : undefined,
  });
}

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
  const scope = scopes && challengeScope(scopes);
  if (scope) params.scope = scope;
  const bearer = Object.freeze(
    Object.keys(params).length === 0 ? { scheme: 'Bearer' } : { scheme: 'Bearer', params: Object.freeze(params) },
  );
  if (!policy.advertised) return Object.freeze([bearer]);
  // Names of the algorithm table only (readDpopPolicy refuses any other): letters and digits, quotable as they are.
  const algs = [...policy.algorithms].join(' ');
  const dpop = Object.freeze({ scheme: 'DPoP', params: Object.freeze({ algs, ...params }) });
  return Object.freeze(policy.required ? [dpop] : [bearer, dpop]);
}
