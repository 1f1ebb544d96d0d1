import type { Clock, TimerHandle } from '../ports/clock.js';

/**
 * Wakes passivated channels at their deadlines with one clock timer, however many there are (a
 * binary heap keyed by time). A key scheduled again moves to its new time.
 */
export class WakeupScheduler {
  private heap: { key: string; at: number }[] = [];
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
    this.push({ key, at });
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
    this.heap = [];
    this.latest.clear();
  }

  private arm(): void {
    const next = this.heap[0];
    if (!next || (this.timer && this.timer.at <= next.at)) return;
    if (this.timer) this.clock.clearTimer(this.timer.handle);
    const handle = this.clock.setTimer(next.at, () => this.fire());
    this.timer = { handle, at: next.at };
  }

  private fire(): void {
    this.timer = undefined;
    const now = this.clock.now();
    while (this.heap[0] && this.heap[0].at <= now) {
      const item = this.pop();
      // Skip entries superseded by a later schedule of the same key.
      if (!item || this.latest.get(item.key) !== item.at) continue;
      this.latest.delete(item.key);
      this.wake(item.key);
    }
    this.arm();
  }

  private push(item: { key: string; at: number }): void {
    const h = this.heap;
    h.push(item);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((h[parent] as { at: number }).at <= item.at) break;
      h[i] = h[parent] as { key: string; at: number };
      i = parent;
    }
    h[i] = item;
  }

  private pop(): { key: string; at: number } | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length === 0 || !last) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      const atOf = (j: number) => (j === i ? last.at : (h[j] as { at: number }).at);
      if (l < h.length && atOf(l) < atOf(m)) m = l;
      if (r < h.length && atOf(r) < atOf(m)) m = r;
      if (m === i) break;
      h[i] = h[m] as { key: string; at: number };
      i = m;
    }
    h[i] = last;
    return top;
  }
}
