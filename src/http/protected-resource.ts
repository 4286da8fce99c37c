import {
  isProtectedResourceMetadata,
  protectedResourceMetadata,
  type ProtectedResourceMetadata,
  type ProtectedResourceOptions,
} from '../auth/internal.ts';

export type { ProtectedResourceOptions } from '../auth/internal.ts';
export { protectedResourcePath } from '../auth/internal.ts';

/** The `protectedResource` option of `agentHandler`/`serve`: `protectedResourceMetadata()`'s result, or its options. */
export function protectedResourceRoute(
  helper: string,
  value: ProtectedResourceOptions | ProtectedResourceMetadata,
): ProtectedResourceMetadata {
  return isProtectedResourceMetadata(value) ? value : protectedResourceMetadata(value, `${helper}: protectedResource`);
}
