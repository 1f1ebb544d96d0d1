import { OldestKey } from '../../oldestKey.js';

/** The settled keys of one channel, oldest first. */
interface ChannelKeys {
  channel: string;
  keys: string[];
}

/**
 * Which settled outbox entries an in-memory outbox keeps: the last `perChannel` of each channel,
 * and at most `capacity` in all. A settled entry is read again only for a turn a restored channel
 * still shows in flight (to apply its outcome instead of sending it twice), and those are among the
 * channel's latest answers, so older ones are forgotten. Each cap is applied at every add, so
 * memory never swings between one and two times a cap.
 */
export class SettledKeys {
  /** Every kept key, in the order it was settled, with its channel's list. */
  private readonly all = new Map<string, ChannelKeys>();
  /** Finds the oldest kept key in constant time (see {@link OldestKey}). */
  private readonly oldest = new OldestKey<string>(this.all);
  private readonly channels = new Map<string, ChannelKeys>();

  constructor(
    private readonly capacity: number,
    private readonly perChannel: number,
  ) {}

  /** Notes that `key` (of `channel`) settled; `forget` is called with each key pushed out. */
  add(channel: string, key: string, forget: (key: string) => void): void {
    if (this.capacity <= 0 || this.perChannel <= 0) {
      forget(key);
      return;
    }
    // Kept already (settled twice): its place stands.
    if (this.all.has(key)) return;
    let mine = this.channels.get(channel);
    if (!mine) {
      mine = { channel, keys: [] };
      this.channels.set(channel, mine);
    }
    mine.keys.push(key);
    this.all.set(key, mine);
    this.oldest.changed();
    if (mine.keys.length > this.perChannel) this.dropOldest(mine, forget);
    if (this.all.size > this.capacity) {
      // Settle order is kept in both: the oldest key of all is the oldest of its channel.
      const oldest = this.all.get(this.oldest.next() as string);
      if (oldest) this.dropOldest(oldest, forget);
    }
  }

  /** Keys kept now. */
  get size(): number {
    return this.all.size;
  }

  private dropOldest(list: ChannelKeys, forget: (key: string) => void): void {
    const key = list.keys.shift();
    if (key === undefined) return;
    this.all.delete(key);
    if (list.keys.length === 0) this.channels.delete(list.channel);
    forget(key);
  }
}
