import type { HistoryEntry, HistoryStore } from '../../../ports/history.js';
import { copyJson } from '../jsonValue.js';
import { DONE, ensureOpen, limitOf, type MemoryState } from './memoryState.js';

/**
 * Channel history as `MemoryHistory` keeps it (the last `perChannel` lines, trimmed at every
 * append), behind the store's checks: lines are copied in and handed out as copies.
 */
export class CopyingHistory implements HistoryStore {
  private readonly channels = new Map<string, HistoryEntry[]>();

  constructor(
    private readonly state: MemoryState,
    private readonly perChannel: number,
  ) {}

  get keptPerChannel(): number {
    return this.perChannel;
  }

  append(entry: HistoryEntry): Promise<void> {
    try {
      this.appendNow(entry);
      return DONE;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  readonly appendNow = (entry: HistoryEntry): void => {
    ensureOpen(this.state);
    const line = copyJson(entry, `history line "${entry.channelId}/${entry.messageId}"`);
    let lines = this.channels.get(line.channelId);
    if (!lines) {
      lines = [];
      this.channels.set(line.channelId, lines);
    }
    lines.push(line);
    // Trimmed at every append, so a channel never holds more than its cap.
    if (lines.length > this.perChannel) lines.shift();
  };

  async recent(channelId: string, limit: number): Promise<HistoryEntry[]> {
    ensureOpen(this.state);
    const n = Math.min(limitOf(limit), this.perChannel);
    if (n === 0) return [];
    const lines = this.channels.get(channelId) ?? [];
    return lines
      .slice(Math.max(0, lines.length - n))
      .map((line) => ({ ...line, author: { ...line.author } }));
  }
}
