/** One line of a channel's history, as prompts see it. */
export interface HistoryEntry {
  channelId: string;
  messageId: string;
  at: number;
  author: { kind: 'human' | 'avatar'; id: string; name: string };
  text: string;
}

/**
 * Where domain executors write what was said (docs/architecture.md, invariant 3). Orchestration never holds
 * one: only the turn executor (avatar replies that were delivered) and the inbound recorder
 * (people's messages) write.
 */
export interface HistoryWriter {
  append(entry: HistoryEntry): Promise<void>;
  /**
   * The same write answered at once, when the store can (in memory): returns instead of
   * resolving, throws instead of rejecting. Writers use it when present, sparing a promise.
   */
  readonly appendNow?: (entry: HistoryEntry) => void;
  /**
   * Several lines at once, as `appendNow` each (answered at once, stored with this tick's writes
   * on a store that groups them): a ledger fold writes a channel's lines this way. Writers use it
   * when present.
   */
  readonly appendMany?: (entries: readonly HistoryEntry[]) => void;
}

/**
 * How many recent lines of a channel a turn's prompt reads by default (the runtime's
 * `historyLimit`). The memory store keeps this many per channel unless told otherwise: lines
 * older than the window are never read again.
 */
export const DEFAULT_HISTORY_WINDOW = 30;

/** Reads the recent history of a channel, oldest first, for prompts. */
export interface HistoryReader {
  recent(channelId: string, limit: number): Promise<HistoryEntry[]>;
  /**
   * The most lines `recent` can give per channel, when the store keeps only so many (in memory);
   * the runtime refuses a `historyLimit` above it. Absent: as many as were written.
   */
  readonly keptPerChannel?: number;
}

/** A history store: both sides of the port. */
export type HistoryStore = HistoryWriter & HistoryReader;

/** A line of history as prompt building reads it: the channel is implied. */
export type ChannelHistoryEntry = Omit<HistoryEntry, 'channelId'>;
