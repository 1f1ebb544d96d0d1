/**
 * Counts work in flight (generations, sends, recovery) so the runtime can drain on `stop()` and a
 * test can tell when everything that can progress without time moving has done so.
 */
export class WorkTracker {
  private activeCount = 0;
  private waiters: (() => void)[] = [];
  /** One function for every unit's end (a closure per unit would be garbage per message). */
  private readonly finish = () => {
    this.activeCount -= 1;
    if (this.activeCount === 0 && this.waiters.length > 0) {
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
    }
  };

  /** Work in flight, including work parked on the clock. */
  get active(): number {
    return this.activeCount;
  }

  /**
   * Runs `work` as one unit; never lets its rejection escape unobserved: `onError` gets it, if
   * given. Returns `work`.
   */
  track<T>(work: Promise<T>, onError?: (error: unknown) => void): Promise<T> {
    this.activeCount += 1;
    work.then(
      this.finish,
      onError
        ? (error: unknown) => {
            this.finish();
            onError(error);
          }
        : this.finish,
    );
    return work;
  }

  /** Resolves when no work is in flight. */
  drained(): Promise<void> {
    if (this.activeCount === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
