import type { HistoryEntry, HistoryStore } from '../../../ports/history.js';
import { createMemoryStore } from './memoryStore.js';

/**
 * Channel history in memory on its own, for tests and for embedding without disk: the memory
 * store's history (`createMemoryStore().history`), the last `perChannel` lines of each channel
 * (default 200), checked and copied in and out. Its writes are promises only (no `appendNow`), as a
 * durable store's are.
 */
export class MemoryHistory implements HistoryStore {
  private readonly history: HistoryStore;
  private readonly perChannel: number;

  constructor(options: { perChannel?: number } = {}) {
    this.perChannel = options.perChannel ?? 200;
    this.history = createMemoryStore({ historyPerChannel: this.perChannel }).history;
  }

  /** The most lines {@link recent} gives per channel. */
  get keptPerChannel(): number {
    return this.perChannel;
  }

  append(entry: HistoryEntry): Promise<void> {
    return this.history.append(entry);
  }

  recent(channelId: string, limit: number): Promise<HistoryEntry[]> {
    return this.history.recent(channelId, limit);
  }

  /** Every kept line of a channel, oldest first (tests and tools). */
  all(channelId: string): Promise<HistoryEntry[]> {
    return this.history.recent(channelId, this.perChannel);
  }
}
