// SPDX-License-Identifier: MIT

/** The codes of `BuildError`. */
export type BuildErrorCode = 'BUILD_OPTIONS_INVALID' | 'BUILD_OUT_REFUSED' | 'BUILD_UNSUPPORTED' | 'BUILD_FAILED';

/**
 * What `build()` (and `agentward build`) throws; callers branch on `code`: `BUILD_OPTIONS_INVALID`
 * (`build()`'s options: an unknown one, a target that is none of the targets, no `out`),
 * `BUILD_OUT_REFUSED` (the output folder is or holds the agent directory, or holds something that
 * is no earlier build: nothing is overwritten), `BUILD_UNSUPPORTED` (the directory holds what the
 * target cannot build: module syntax the worker bundle cannot follow, an import cycle, `auth.ts` or
 * an agent.json field the cloudflare-worker target cannot honour) and `BUILD_FAILED` (agentward's
 * own package could not be compiled or copied). The message names the file or option at fault.
 */
export class BuildError extends Error {
  readonly code: BuildErrorCode;

  constructor(code: BuildErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BuildError';
    this.code = code;
  }
}
