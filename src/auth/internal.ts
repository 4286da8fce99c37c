// SPDX-License-Identifier: MIT
// The auth layer's second door: what the rest of agentward uses of it besides the public
// index.ts. Nothing outside src/auth imports any other file of this folder (design §30), so the
// folder can change inside without the package noticing, and a vendored copy needs neither.
export * from './index.ts';
export { API_TOKEN_ID, apiTokenDigestEntry, MIN_TOKEN_LENGTH } from './api-token.ts';
export { B64TOKEN } from './authorization.ts';
export { readBoundedBody } from './bounded-body.ts';
export type { DpopReplayStore } from './dpop-replay.ts';
export { isScopeList, kindOf } from './errors.ts';
export { decodeBase64url, encodeBase64url } from './jws/base64url.ts';
export { hasScopes } from './jws/claims.ts';
export { checkOptionNames, closest } from './options.ts';
export { completePrincipal, deepFreeze } from './principal.ts';
export { adoptDpopAlgs, advertisedDpopAlgs, isProtectedResourceMetadata } from './protected-resource.ts';
export { authResponseText } from './responses.ts';
export { BOOLEAN_PRINCIPAL } from './route-auth.ts';
export { notASecret } from './weak-secrets.ts';
