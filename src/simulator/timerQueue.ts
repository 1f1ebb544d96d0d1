/**
 * A simulated clock with a timer queue. Timers fire in order of due time, then of scheduling
 * (insertion) order, so simultaneous events replay identically. xstate's SimulatedClock is not
 * used because it leaves the order of timers due at the same instant unspecified.
 */
export class TimerQueue {
  private readonly timers: { id: number; due: number; seq: number; fn: () => void }[] = [];
  private nextSeq = 0;
  private current: number;

  /** @param start the initial simulated time (epoch ms) */
  constructor(start: number) {
    this.current = start;
  }

  /** The current simulated time (epoch ms). */
  now(): number {
    return this.current;
  }

  /** Schedules `fn` at absolute time `due` (clamped to now); returns an id for {@link cancel}. */
  at(due: number, fn: () => void): number {
    const timer = { id: this.nextSeq, due: Math.max(due, this.current), seq: this.nextSeq, fn };
    this.nextSeq += 1;
    // Keep the array sorted by (due, seq): insert after every timer due at or before this one.
    let i = this.timers.length;
    while (i > 0 && (this.timers[i - 1]?.due ?? 0) > timer.due) i -= 1;
    this.timers.splice(i, 0, timer);
    return timer.id;
  }

  /** Cancels a scheduled timer; unknown or fired ids are ignored. */
  cancel(id: number): void {
    const i = this.timers.findIndex((t) => t.id === id);
    if (i >= 0) this.timers.splice(i, 1);
  }

  /** Number of timers still scheduled. */
  get size(): number {
    return this.timers.length;
  }

  /** Due time of the next timer, if any. */
  peek(): number | undefined {
    return this.timers[0]?.due;
  }

  /** Advances time to the next timer and runs it; returns false when nothing is scheduled. */
  step(): boolean {
    const timer = this.timers.shift();
    if (!timer) return false;
    this.current = timer.due;
    timer.fn();
    return true;
  }
}
