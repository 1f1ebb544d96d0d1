/**
 * Items in the order they were added, for bounded maps that forget their oldest entry: the oldest
 * still current is taken in constant time (amortized).
 *
 * A `Map`'s own order cannot do that cheaply. V8 leaves a deleted entry's slot in the table until
 * the table is rebuilt, and `map.keys().next()` walks past every slot deleted since: a map that
 * forgets its first entry at each insert pays for every entry it forgot before, so one insert at
 * 10,000 entries cost about 4 µs, and 26 µs at 100,000.
 *
 * An item can stop being current without being taken (its key deleted, or set again): the owner
 * says which are current through `isCurrent`, and those that are not are skipped when met, or swept
 * out once they outnumber the live ones, so the queue stays within twice the live count.
 */
export class OldestFirst<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  constructor(private readonly isCurrent: (item: T) => boolean) {}

  /** Adds the newest item; `live` is how many items the owner keeps now (for the sweep). */
  push(item: T, live: number): void {
    this.items.push(item);
    if (this.items.length - this.head > 2 * live + SLACK) this.sweep();
  }

  /** Removes and returns the oldest current item (those before it that are not current go too). */
  takeOldest(): T | undefined {
    while (this.head < this.items.length) {
      const item = this.items[this.head] as T;
      this.items[this.head] = undefined;
      this.head += 1;
      if (this.isCurrent(item)) {
        this.shrink();
        return item;
      }
    }
    this.clear();
    return undefined;
  }

  /** Forgets every item. */
  clear(): void {
    this.items = [];
    this.head = 0;
  }

  /** Items queued, current or not (at most twice the live count, and a few more). */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Keeps only the current items, in order. */
  private sweep(): void {
    const kept: T[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i] as T;
      if (this.isCurrent(item)) kept.push(item);
    }
    this.items = kept;
    this.head = 0;
  }

  /** Drops the taken slots at the front once they are half the array (an array shift is O(n)). */
  private shrink(): void {
    if (this.head >= SLACK && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

/** Items not current tolerated beyond the live count before a sweep, and taken slots before a shrink. */
const SLACK = 64;
