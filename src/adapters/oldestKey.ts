/**
 * The oldest key of a `Map` or `Set` that forgets its oldest entries, in constant time (amortized).
 *
 * `map.keys().next()` is not constant: V8 leaves a deleted entry's slot in the table until the
 * table is rebuilt, and a new iterator walks past every such slot from the start. A map that
 * forgot its first entry at each insert paid for every entry it forgot before: about 4 µs an
 * insert at 10,000 entries, 25 µs at 100,000. One iterator kept across calls walks each slot once:
 * iterators go on past entries added after them and skip deleted ones, across rebuilds.
 *
 * But a kept iterator also keeps every table rebuilt since it last moved (V8 chains them to it):
 * a map changed without evictions (deletes, keys set again) would hold ever more memory. The owner
 * tells of each change ({@link OldestKey.changed}); past as many changes as the map holds, the
 * iterator is let go and the next call starts a new one, which walks at most the slots deleted
 * since the last rebuild: still constant per change, with at most a table or two held.
 */
export class OldestKey<K> {
  private cursor: Iterator<K> | undefined;
  private changes = 0;

  constructor(private readonly map: { keys(): Iterator<K>; readonly size: number }) {}

  /**
   * The map's oldest key (undefined when it is empty). The caller deletes it before asking again:
   * the cursor has moved past it. A key set again after a delete counts as new (it is at the end).
   */
  next(): K | undefined {
    this.changes = 0;
    if (!this.cursor) this.cursor = this.map.keys();
    let step = this.cursor.next();
    if (step.done) {
      // Run out at some point (the map was emptied): the entries since are ahead of a new one.
      this.cursor = this.map.keys();
      step = this.cursor.next();
    }
    return step.done ? undefined : step.value;
  }

  /** Notes a change of the map other than deleting the key {@link OldestKey.next} gave. */
  changed(): void {
    if (this.cursor && ++this.changes > this.map.size + SLACK) this.reset();
  }

  /** Starts over (after the map is cleared, or once it changed much without evictions). */
  reset(): void {
    this.cursor = undefined;
    this.changes = 0;
  }
}

/** Changes beyond the map's size tolerated before the iterator is let go. */
const SLACK = 64;
