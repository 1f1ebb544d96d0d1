import type { Clock, TimerHandle } from '../ports/clock.js';
import { SimulatedTimer, SimulatedTimers } from './simulatedTimers.js';

let nextHandleId = 0;

// setTimeout takes at most a signed 32-bit delay; longer waits are re-armed in steps.
const MAX_TIMEOUT_MS = 2_147_483_647;

/** Wall-clock time with Node timers (unref'd, so a pending timer never keeps a process alive). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(due, fn) {
    const handle = { id: ++nextHandleId, timeout: undefined as NodeJS.Timeout | undefined };
    const arm = () => {
      const delay = due - Date.now();
      if (delay <= 0) return fn();
      handle.timeout = setTimeout(arm, Math.min(delay, MAX_TIMEOUT_MS));
      handle.timeout.unref?.();
    };
    const delay = due - Date.now();
    handle.timeout = setTimeout(arm, Math.max(0, Math.min(delay, MAX_TIMEOUT_MS)));
    handle.timeout.unref?.();
    return handle;
  },
  clearTimer(handle) {
    const timeout = (handle as { timeout?: NodeJS.Timeout }).timeout;
    if (timeout) clearTimeout(timeout);
  },
  sleep(ms, signal) {
    return sleepWith(systemClock, ms, signal);
  },
};

/** `sleep` on top of setTimer/clearTimer, shared by both clocks. */
function sleepWith(
  clock: Clock,
  ms: number,
  signal: AbortSignal | undefined,
  onPark?: (delta: number) => void,
) {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    onPark?.(1);
    const done = () => {
      onPark?.(-1);
      signal?.removeEventListener('abort', abort);
    };
    const handle = clock.setTimer(clock.now() + Math.max(0, ms), () => {
      done();
      resolve();
    });
    const abort = () => {
      clock.clearTimer(handle);
      done();
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/**
 * Simulated time. Timers fire in order of due time, then of scheduling order, so simultaneous
 * events replay identically. Time moves only through {@link SimulatedClock.advance} and friends.
 */
export class SimulatedClock implements Clock {
  private current: number;
  private readonly timers = new SimulatedTimers();
  private seq = 0;
  private parkedCount = 0;
  private readonly parkListeners = new Set<() => void>();

  /** @param start initial time, epoch ms (default 2025-11-13T12:00:00Z) */
  constructor(start = Date.UTC(2025, 10, 13, 12, 0, 0)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(due: number, fn: () => void): TimerHandle {
    const timer = new SimulatedTimer(
      ++nextHandleId,
      this.timers,
      Math.max(due, this.current),
      this.seq++,
      fn,
    );
    this.timers.add(timer);
    return timer;
  }

  clearTimer(handle: TimerHandle): void {
    this.timers.clear(handle);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal, (delta) => {
      this.parkedCount += delta;
      if (delta > 0) for (const listener of this.parkListeners) listener();
    });
  }

  /**
   * Calls `listener` each time a `sleep` starts waiting for time to move (work parking on the
   * clock); returns the unsubscribe. Settling listens to it instead of polling.
   */
  onPark(listener: () => void): () => void {
    this.parkListeners.add(listener);
    return () => {
      this.parkListeners.delete(listener);
    };
  }

  /** How many `sleep` calls are waiting for time to move. */
  get parked(): number {
    return this.parkedCount;
  }

  /** Number of timers scheduled. */
  get pending(): number {
    return this.timers.size;
  }

  /** Due time of the earliest timer, if any. */
  nextDue(): number | undefined {
    return this.timers.peek()?.due;
  }

  /**
   * Fires the earliest timer if it is due at or before `limit` (moving time to it) and returns
   * true; otherwise returns false and leaves time alone.
   */
  fireNext(limit = Number.POSITIVE_INFINITY): boolean {
    const next = this.timers.peek();
    if (!next || next.due > limit) return false;
    const timer = this.timers.take() as SimulatedTimer;
    this.current = Math.max(this.current, timer.due);
    timer.fire();
    return true;
  }

  /**
   * Moves time forward by `ms`, firing every timer due on the way, in order. Synchronous: work a
   * timer starts that awaits promises is not waited for (the test runtime's `advance` does that).
   */
  advanceSync(ms: number): void {
    const target = this.current + ms;
    while (this.fireNext(target)) {}
    this.current = Math.max(this.current, target);
  }

  /** Sets time to `to` if it is later than now (without firing timers). */
  setNow(to: number): void {
    this.current = Math.max(this.current, to);
  }
}
