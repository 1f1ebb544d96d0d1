import { OldestFirst } from '../oldestFirst.js';

/** An entry, with its key: current while the map holds this very slot under the key. */
interface Slot<K, V> {
  key: K;
  value: V;
}

/**
 * A map that keeps its newest `capacity` entries: setting one past capacity forgets the oldest.
 * The Discord adapter remembers recent messages with it (for quote lines and reply targets), so
 * memory stays flat however long the bot runs. Forgetting the oldest costs the same at any
 * capacity (see {@link OldestFirst}).
 */
export class RecentMap<K, V> {
  private readonly entries = new Map<K, Slot<K, V>>();
  private readonly order = new OldestFirst<Slot<K, V>>((slot) => this.entries.get(slot.key) === slot);

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  set(key: K, value: V): void {
    // Re-setting a key moves it to the newest end: a new slot, the old one no longer current.
    const slot: Slot<K, V> = { key, value };
    this.entries.set(key, slot);
    this.order.push(slot, this.entries.size);
    if (this.entries.size > this.capacity) {
      const oldest = this.order.takeOldest();
      if (oldest) this.entries.delete(oldest.key);
    }
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  /** Forgets every entry. */
  clear(): void {
    this.entries.clear();
    this.order.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
