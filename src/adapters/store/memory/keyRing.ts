/**
 * The last `capacity` keys, in a fixed ring: adding one past capacity hands back the oldest, so the
 * caller forgets it at once. Memory stays flat (no batch trimming that lets a structure swing
 * between one and two times its cap).
 */
export class KeyRing {
  private readonly keys: (string | undefined)[] = [];
  private next = 0;

  constructor(private readonly capacity: number) {}

  /** Adds `key`; returns the key it pushed out, if the ring was full. */
  add(key: string): string | undefined {
    if (this.capacity <= 0) return key;
    if (this.keys.length < this.capacity) {
      this.keys.push(key);
      return undefined;
    }
    const oldest = this.keys[this.next];
    this.keys[this.next] = key;
    this.next = (this.next + 1) % this.capacity;
    return oldest;
  }
}
