import type { HistoryEntry, HistoryStore } from '../../../ports/history.js';
import { checkJson, decodeJson, encodeJson } from '../jsonValue.js';
import { limitOf, type SqliteConnection } from './sqliteConnection.js';

/**
 * Channel history: appends are one insert (in the tick's write group); every `perChannel` appends
 * to a channel (and on the first append after opening) the lines older than the newest
 * `perChannel` are deleted in one go.
 */
export class SqliteHistory implements HistoryStore {
  /** Appends per channel since its last trim (in this process). */
  private readonly sinceTrim = new Map<string, number>();

  constructor(
    private readonly c: SqliteConnection,
    private readonly perChannel: number,
  ) {}

  async append(entry: HistoryEntry): Promise<void> {
    const author = this.checked(entry);
    return this.c.write('history.append', () => this.insert(entry, author));
  }

  /**
   * The same append, joined to this tick's write group without a promise (lines are appended
   * twice per reply, and nobody waits for them): stored when the group commits, which a store
   * that cannot commit logs.
   */
  readonly appendNow = (entry: HistoryEntry): void => {
    const author = this.checked(entry);
    this.c.writeNow('history.append', () => this.insert(entry, author));
  };

  /** Checks a line; returns its author as JSON text. */
  private checked(entry: HistoryEntry): string {
    const place = `history line "${entry.channelId}/${entry.messageId}"`;
    checkJson(entry, place);
    return encodeJson(entry.author, place);
  }

  private insert(entry: HistoryEntry, author: string): void {
    this.c.change(
      'INSERT INTO history (channel_id, message_id, at, author, text) VALUES (?, ?, ?, ?, ?)',
      entry.channelId,
      entry.messageId,
      entry.at,
      author,
      entry.text,
    );
    const count = this.sinceTrim.get(entry.channelId);
    if (count === undefined || count + 1 >= this.perChannel) {
      this.c.change(
        `DELETE FROM history WHERE channel_id = ? AND seq <= (
          SELECT seq FROM history WHERE channel_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
        entry.channelId,
        entry.channelId,
        this.perChannel,
      );
      this.sinceTrim.set(entry.channelId, 0);
    } else {
      this.sinceTrim.set(entry.channelId, count + 1);
    }
  }

  async recent(channelId: string, limit: number): Promise<HistoryEntry[]> {
    return this.c.read('history.recent', () => {
      const take = Math.min(limitOf(limit) < 0 ? this.perChannel : limitOf(limit), this.perChannel);
      if (take === 0) return [];
      return this.c
        .all(
          'SELECT seq, message_id, at, author, text FROM history WHERE channel_id = ? ORDER BY seq DESC LIMIT ?',
          channelId,
          take,
        )
        .reverse()
        .map((row) => ({
          channelId,
          messageId: String(row.message_id),
          at: Number(row.at),
          author: decodeJson<HistoryEntry['author']>(
            row.author,
            `history line "${channelId}/${String(row.message_id)}"`,
          ),
          text: String(row.text),
        }));
    });
  }
}
