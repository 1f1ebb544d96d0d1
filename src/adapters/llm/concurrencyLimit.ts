/** A counting semaphore: at most `max` tasks run at once, the rest wait their turn in order. */
export interface ConcurrencyLimit {
  /** Most tasks allowed to run at once. */
  readonly max: number;
  /** Tasks running now. */
  readonly active: number;
  /** Tasks waiting for a slot. */
  readonly waiting: number;
  /**
   * Runs `task` once a slot is free (first come, first served) and frees the slot when it settles.
   * If `signal` aborts while the task is still waiting, the task never starts and the promise
   * rejects with the signal's reason; an already running task is not interrupted by the limit.
   */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}

interface Waiter {
  start: () => void;
}

/** Creates a FIFO {@link ConcurrencyLimit} allowing `max` (a whole number, 1 or more) tasks at once. */
export function createConcurrencyLimit(max: number): ConcurrencyLimit {
  if (!Number.isInteger(max) || max < 1) {
    throw new RangeError(`A concurrency limit must be a whole number of 1 or more, got ${max}`);
  }
  let active = 0;
  const queue: Waiter[] = [];

  const release = () => {
    const next = queue.shift();
    // Hand the slot straight to the next waiter, so `active` never dips and lets a newcomer jump in.
    if (next) next.start();
    else active -= 1;
  };

  const acquire = (signal: AbortSignal | undefined): Promise<void> => {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (active < max) {
      active += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const index = queue.indexOf(waiter);
        if (index >= 0) queue.splice(index, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      queue.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  };

  return {
    max,
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
    async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      await acquire(signal);
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}
