import type { HistoryEntry, HistoryStore } from '../../../ports/history.js';

/** Channel history in memory, the last `perChannel` entries of each channel (default 200). */
export class MemoryHistory implements HistoryStore {
  private readonly channels = new Map<string, HistoryEntry[]>();
  private readonly perChannel: number;

  constructor(options: { perChannel?: number } = {}) {
    this.perChannel = options.perChannel ?? 200;
  }

  /** The most lines {@link recent} gives per channel. */
  get keptPerChannel(): number {
    return this.perChannel;
  }

  async append(entry: HistoryEntry): Promise<void> {
    let lines = this.channels.get(entry.channelId);
    if (!lines) {
      lines = [];
      this.channels.set(entry.channelId, lines);
    }
    lines.push({ ...entry, author: { ...entry.author } });
    // Trimmed at every append, so a channel never holds more than its cap.
    if (lines.length > this.perChannel) lines.shift();
  }

  async recent(channelId: string, limit: number): Promise<HistoryEntry[]> {
    const lines = this.channels.get(channelId) ?? [];
    return lines
      .slice(Math.max(0, lines.length - Math.min(limit, this.perChannel)))
      .map((e) => ({ ...e, author: { ...e.author } }));
  }

  /** Every stored entry of a channel, oldest first (tests and tools). */
  all(channelId: string): HistoryEntry[] {
    return [...(this.channels.get(channelId) ?? [])];
  }
}
