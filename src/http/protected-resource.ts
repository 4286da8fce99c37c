import {
  isProtectedResourceMetadata,
  protectedResourceMetadata,
  type ProtectedResourceMetadata,
  type ProtectedResourceOptions,
} from '../auth/protected-resource.ts';

export type { ProtectedResourceOptions } from '../auth/protected-resource.ts';
export { protectedResourcePath } from '../auth/protected-resource.ts';

/** The `protectedResource` option of `agentHandler`/`serve`: `protectedResourceMetadata()`'s result, or its options. */
export function protectedResourceRoute(
  helper: string,
  value: ProtectedResourceOptions | ProtectedResourceMetadata,
): ProtectedResourceMetadata {
  return isProtectedResourceMetadata(value) ? value : protectedResourceMetadata(value, `${helper}: protectedResource`);
}
