/**
 * A binary min-heap: the item `earlier` puts first is on top. Adding and taking off cost
 * O(log n) however many are held (the simulated clock's timers, the wake-ups of passivated
 * channels). Items that become stale stay until their owner drops them ({@link BinaryHeap.keep}
 * or when they reach the top).
 */
export class BinaryHeap<T> {
  private items: T[] = [];

  /** `earlier(a, b)`: whether `a` comes off before `b`. */
  constructor(private readonly earlier: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  /** The first item, left in place. */
  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const h = this.items;
    let i = h.length;
    h.push(item);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.earlier(item, h[parent] as T)) break;
      h[i] = h[parent] as T;
      i = parent;
    }
    h[i] = item;
  }

  /** Takes the first item off. */
  pop(): T | undefined {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= h.length) break;
      const right = left + 1;
      const child = right < h.length && this.earlier(h[right] as T, h[left] as T) ? right : left;
      if (!this.earlier(h[child] as T, last)) break;
      h[i] = h[child] as T;
      i = child;
    }
    h[i] = last;
    return top;
  }

  /** Keeps only the items `wanted` holds for (a sorted array is a heap). */
  keep(wanted: (item: T) => boolean): void {
    this.items = this.items.filter(wanted).sort((a, b) => (this.earlier(a, b) ? -1 : 1));
  }

  clear(): void {
    this.items = [];
  }
}
