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
  /** Its signal aborted while it waited: it stays in the queue, skipped when reached. */
  cancelled: boolean;
}

/**
 * The waiters in arrival order. A head index, not `shift()` (which copies a large array on every
 * call), and an abort marks its waiter instead of splicing it out (a mass abort on stop would be
 * quadratic). Spent slots are dropped once they outnumber the live waiters, so that stays linear.
 */
class WaiterQueue {
  private items: (Waiter | undefined)[] = [];
  private head = 0;
  /** Waiters neither started nor cancelled. */
  size = 0;

  push(waiter: Waiter): void {
    this.items.push(waiter);
    this.size += 1;
  }

  /** Takes the oldest waiter not cancelled, if any. */
  take(): Waiter | undefined {
    while (this.head < this.items.length) {
      const waiter = this.items[this.head];
      this.items[this.head] = undefined; // not kept alive by the slots behind the head
      this.head += 1;
      if (waiter && !waiter.cancelled) {
        this.size -= 1;
        this.compact();
        return waiter;
      }
    }
    this.compact();
    return undefined;
  }

  cancel(waiter: Waiter): void {
    if (waiter.cancelled) return;
    waiter.cancelled = true;
    this.size -= 1;
    this.compact();
  }

  private compact(): void {
    const spent = this.items.length - this.size;
    if (this.size === 0) {
      this.items.length = 0;
      this.head = 0;
    } else if (spent > 1024 && spent > this.size) {
      this.items = this.items.slice(this.head).filter((w) => w !== undefined && !w.cancelled);
      this.head = 0;
    }
  }
}

/** Creates a FIFO {@link ConcurrencyLimit} allowing `max` (a whole number, 1 or more) tasks at once. */
export function createConcurrencyLimit(max: number): ConcurrencyLimit {
  if (!Number.isInteger(max) || max < 1) {
    throw new RangeError(`A concurrency limit must be a whole number of 1 or more, got ${max}`);
  }
  let active = 0;
  const queue = new WaiterQueue();

  const release = () => {
    const next = queue.take();
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
        queue.cancel(waiter);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        cancelled: false,
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
      return queue.size;
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
