/**
 * Runs tasks one after another per key: each starts after the previous one for its key has
 * settled, whatever its outcome. Keys with nothing queued are forgotten.
 */
export function keyedQueue(): <T>(key: string, task: () => Promise<T>) => Promise<T> {
  const queues = new Map<string, Promise<unknown>>();
  return function exclusive<T>(key: string, task: () => Promise<T>): Promise<T> {
    const next = (queues.get(key) ?? Promise.resolve()).then(task, task);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    queues.set(key, tail);
    void tail.then(() => {
      if (queues.get(key) === tail) queues.delete(key);
    });
    return next;
  };
}
