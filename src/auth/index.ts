// SPDX-License-Identifier: MIT
export { routeAuth, authEntries } from './route-auth.ts';
export type { Authenticate, AuthenticateOptions, RouteAuthOptions, ViewedRequest } from './route-auth.ts';
export type { Refusal, RefusalListener, RefusalReason } from './refusals.ts';
export { basic } from './basic.ts';
export type { BasicOptions, BasicVerifier } from './basic.ts';
export { apiToken } from './api-token.ts';
export { anonymous } from './anonymous.ts';
export { AuthError, AuthConfigError, AuthUpstreamError, isAuthError } from './errors.ts';
export type { AuthUpstreamErrorCode } from './errors.ts';
export { authResponse, wwwAuthenticateLines } from './responses.ts';
export { formatChallenge } from './challenges.ts';
export { constantTimeEqual, secretsEqual } from './constant-time.ts';
export { sha256 } from './sha256.ts';
export { readBearerToken } from './authorization.ts';
export type {
  Principal,
  PrincipalInput,
  AuthFn,
  Challenge,
  AuthOption,
  AuthResult,
  BooleanAuth,
  EntryGrant,
  RequestView,
} from './types.ts';
export { jwt } from './jwt.ts';
export type { JwtOptions, JwtPrincipalMapper } from './jwt.ts';
export type { TenantsOption } from './tenants.ts';
export { oidc, type OidcOptions } from './oidc.ts';
export { protectedResourceMetadata, protectedResourcePath } from './protected-resource.ts';
export type { ProtectedResourceMetadata, ProtectedResourceOptions } from './protected-resource.ts';
export { introspection } from './introspection.ts';
export type { IntrospectionOptions } from './introspection.ts';
export { tokenExchange, TokenExchangeError } from './token-exchange.ts';
export type { Exchange, ExchangedToken, ExchangeRequest, TokenExchangeOptions } from './token-exchange.ts';
export { idJag } from './id-jag.ts';
export type {
  IdJagAuthorizationServerOptions,
  IdJagExchange,
  IdJagIdpOptions,
  IdJagOptions,
  IdJagRequest,
} from './id-jag.ts';
export type { ClientPrivateKey } from './client-auth.ts';
export type { TokenClientOptions } from './token-client.ts';
