/**
 * Counts work in flight (generations, sends, recovery) so the runtime can drain on `stop()` and a
 * test can tell when everything that can progress without time moving has done so.
 */
export class WorkTracker {
  private activeCount = 0;
  private waiters: (() => void)[] = [];

  /** Work in flight, including work parked on the clock. */
  get active(): number {
    return this.activeCount;
  }

  /** Runs `work` as one unit; never lets its rejection escape unobserved. */
  track<T>(work: Promise<T>): Promise<T> {
    this.activeCount += 1;
    return work.finally(() => {
      this.activeCount -= 1;
      if (this.activeCount === 0) {
        const waiters = this.waiters;
        this.waiters = [];
        for (const w of waiters) w();
      }
    });
  }

  /** Resolves when no work is in flight. */
  drained(): Promise<void> {
    if (this.activeCount === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
