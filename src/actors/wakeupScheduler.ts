import type { Clock, TimerHandle } from '../ports/clock.js';
import { BinaryHeap } from './binaryHeap.js';

/**
 * Wakes passivated channels at their deadlines with one clock timer, however many there are (a
 * binary heap keyed by time). A key scheduled again moves to its new time.
 */
export class WakeupScheduler {
  private readonly heap = new BinaryHeap<{ key: string; at: number }>((a, b) => a.at < b.at);
  private readonly latest = new Map<string, number>();
  private timer: { handle: TimerHandle; at: number } | undefined;
  private disposed = false;

  constructor(
    private readonly clock: Clock,
    private readonly wake: (key: string) => void,
  ) {}

  /** Wakes `key` at `at` (epoch ms). */
  schedule(key: string, at: number): void {
    if (this.disposed) return;
    this.latest.set(key, at);
    this.heap.push({ key, at });
    // Superseded entries must not pile up while nothing fires: dropped once they are most of it.
    if (this.heap.size > 64 && this.heap.size > 2 * this.latest.size)
      this.heap.keep((item) => this.latest.get(item.key) === item.at);
    this.arm();
  }

  /** How many channels are waiting. */
  get size(): number {
    return this.latest.size;
  }

  /** Cancels everything. */
  dispose(): void {
    this.disposed = true;
    if (this.timer) this.clock.clearTimer(this.timer.handle);
    this.timer = undefined;
    this.heap.clear();
    this.latest.clear();
  }

  private arm(): void {
    const next = this.heap.peek();
    if (!next || (this.timer && this.timer.at <= next.at)) return;
    if (this.timer) this.clock.clearTimer(this.timer.handle);
    const handle = this.clock.setTimer(next.at, () => this.fire());
    this.timer = { handle, at: next.at };
  }

  private fire(): void {
    this.timer = undefined;
    const now = this.clock.now();
    while ((this.heap.peek()?.at ?? Number.POSITIVE_INFINITY) <= now) {
      const item = this.heap.pop();
      // Skip entries superseded by a later schedule of the same key.
      if (!item || this.latest.get(item.key) !== item.at) continue;
      this.latest.delete(item.key);
      this.wake(item.key);
    }
    this.arm();
  }
}
