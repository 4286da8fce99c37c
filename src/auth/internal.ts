// SPDX-License-Identifier: MIT
// The auth layer's second door: what the rest of agentward uses of it, public or not (the public
// API is index.ts). Nothing outside src/auth imports any other file of this folder (design §30),
// so the folder can change inside without the package noticing, and a vendored copy needs neither.
export { API_TOKEN_ID, apiToken, apiTokenDigestEntry, MIN_TOKEN_LENGTH } from './api-token.ts';
export { B64TOKEN } from './authorization.ts';
export { readBoundedBody } from './bounded-body.ts';
export { constantTimeEqual } from './constant-time.ts';
export type { DpopReplayStore } from './dpop-replay.ts';
export { newDpopNonce } from './dpop-nonce.ts';
export { AuthConfigError, AuthUpstreamError, isScopeList, kindOf } from './errors.ts';
export { decodeBase64url, encodeBase64url } from './jws/base64url.ts';
export { hasScopes } from './jws/claims.ts';
export { readScopeImplies, type ScopeImplies } from './scope-implies.ts';
export { checkOptionNames, closest } from './options.ts';
export { completePrincipal, deepFreeze } from './principal.ts';
export { callerKey, sameCaller, type CallerKey } from './caller-key.ts';
export {
  carryPresentedToken,
  holdPresentedToken,
  releasePresentedToken,
  watchExchanges,
} from './presented-token.ts';
export {
  adoptDpopAlgs,
  advertisedDpopAlgs,
  isProtectedResourceMetadata,
  protectedResourceMetadata,
  protectedResourcePath,
} from './protected-resource.ts';
export type { ProtectedResourceMetadata, ProtectedResourceOptions } from './protected-resource.ts';
export type { Refusal, RefusalListener } from './refusals.ts';
export { authResponseText, wwwAuthenticateLines } from './responses.ts';
export { authEntries, BOOLEAN_PRINCIPAL, routeAuth } from './route-auth.ts';
export type { Authenticate } from './route-auth.ts';
export { sha256 } from './sha256.ts';
export type { AuthFn, AuthOption, AuthResult, EntryGrant, Principal, RequestView } from './types.ts';
export { notASecret } from './weak-secrets.ts';
