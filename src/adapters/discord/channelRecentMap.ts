import { OldestKey } from '../oldestKey.js';

/** The keys of one channel, oldest first. */
interface ChannelKeys {
  channelId: string;
  keys: string[];
}

interface Slot<V> {
  value: V;
  channel: ChannelKeys;
}

/**
 * A map that keeps the newest `perChannel` entries of each channel and at most `capacity` in all:
 * setting one past either cap forgets the oldest (of the channel, or of all). What the Discord
 * adapter remembers is read soon after it is written, in the same channel (the message an answer
 * quotes, the part a retry may resend), so a busy channel cannot push a quiet one's entries out,
 * and memory grows with the channels in use, a few entries each, never with traffic.
 */
export class ChannelRecentMap<V> {
  /** Every entry, oldest first (a re-set moves an entry to the newest end). */
  private readonly entries = new Map<string, Slot<V>>();
  /** Finds the oldest entry in constant time (see {@link OldestKey}). */
  private readonly oldest = new OldestKey<string>(this.entries);
  private readonly channels = new Map<string, ChannelKeys>();

  constructor(
    private readonly perChannel: number,
    private readonly capacity: number,
  ) {}

  get(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  set(channelId: string, key: string, value: V): void {
    if (this.entries.has(key)) this.delete(key);
    if (this.perChannel <= 0 || this.capacity <= 0) return;
    let channel = this.channels.get(channelId);
    if (!channel) {
      channel = { channelId, keys: [] };
      this.channels.set(channelId, channel);
    }
    channel.keys.push(key);
    this.entries.set(key, { value, channel });
    this.oldest.changed();
    if (channel.keys.length > this.perChannel) this.dropOldest(channel);
    if (this.entries.size > this.capacity) {
      // Kept in the same order: the oldest entry of all is the oldest of its channel.
      const oldest = this.entries.get(this.oldest.next() as string);
      if (oldest) this.dropOldest(oldest.channel);
    }
  }

  delete(key: string): boolean {
    const slot = this.entries.get(key);
    if (!slot) return false;
    this.entries.delete(key);
    this.oldest.changed();
    const keys = slot.channel.keys;
    keys.splice(keys.indexOf(key), 1);
    if (keys.length === 0) this.channels.delete(slot.channel.channelId);
    return true;
  }

  /** Forgets every entry. */
  clear(): void {
    this.entries.clear();
    this.oldest.reset();
    this.channels.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  /** Channels with an entry now. */
  get channelCount(): number {
    return this.channels.size;
  }

  private dropOldest(channel: ChannelKeys): void {
    const key = channel.keys.shift();
    if (key === undefined) return;
    this.entries.delete(key);
    if (channel.keys.length === 0) this.channels.delete(channel.channelId);
  }
}
