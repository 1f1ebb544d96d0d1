/**
 * The runtime's only source of time. Production uses {@link systemClock}; tests and the simulator
 * use {@link SimulatedClock}, which never sleeps: time moves only when the test advances it.
 */
export interface Clock {
  /** Current time, epoch milliseconds. */
  now(): number;
  /** Runs `fn` once at absolute time `due` (or at once, if `due` has passed). */
  setTimer(due: number, fn: () => void): TimerHandle;
  /** Cancels a timer; unknown or fired handles are ignored. */
  clearTimer(handle: TimerHandle): void;
  /**
   * Resolves after `ms`; rejects with the signal's reason if aborted first. Work waiting here is
   * "parked": a simulated clock knows it can only progress when time advances.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** An opaque timer handle. */
export type TimerHandle = { readonly id: number };
