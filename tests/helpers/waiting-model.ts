import type { Model } from '../../src/agent/types.ts';

/**
 * A model that says it started, then waits until the run's signal aborts, as a slow provider
 * would while its client leaves: `started` once it is called, `aborted` with the signal's reason.
 */
export function abortWaitingModel(): { model: Model; started: Promise<void>; aborted: Promise<unknown> } {
  let started!: () => void;
  let aborted!: (reason: unknown) => void;
  const model: Model = {
    generate: ({ signal }) =>
      new Promise((_, reject) => {
        signal?.addEventListener(
          'abort',
          () => {
            aborted(signal.reason);
            reject(signal.reason);
          },
          { once: true },
        );
        started();
      }),
  };
  return {
    model,
    started: new Promise((resolve) => (started = resolve)),
    aborted: new Promise((resolve) => (aborted = resolve)),
  };
}
