import { OldestKey } from '../oldestKey.js';

/**
 * A map that keeps its newest `capacity` entries: setting one past capacity forgets the oldest.
 * The Discord adapter remembers recent messages with it (for quote lines and reply targets), so
 * memory stays flat however long the bot runs. Forgetting the oldest costs the same at any
 * capacity (see {@link OldestKey}).
 */
export class RecentMap<K, V> {
  private readonly entries = new Map<K, V>();
  private readonly oldest = new OldestKey<K>(this.entries);

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  set(key: K, value: V): void {
    // Re-setting a key moves it to the newest end.
    this.entries.delete(key);
    this.entries.set(key, value);
    this.oldest.changed();
    // Over capacity the map holds an entry, so there is an oldest key.
    if (this.entries.size > this.capacity) this.entries.delete(this.oldest.next() as K);
  }

  delete(key: K): boolean {
    const deleted = this.entries.delete(key);
    if (deleted) this.oldest.changed();
    return deleted;
  }

  /** Forgets every entry. */
  clear(): void {
    this.entries.clear();
    this.oldest.reset();
  }

  get size(): number {
    return this.entries.size;
  }
}
