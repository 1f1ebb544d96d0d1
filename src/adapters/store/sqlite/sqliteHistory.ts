import type { HistoryEntry, HistoryStore } from '../../../ports/history.js';
import { checkJson, decodeJson, encodeJson } from '../jsonValue.js';
import { limitOf, type SqliteConnection } from './sqliteConnection.js';

/** Rows per multi-row insert of {@link SqliteHistory.appendMany} (5 parameters each). */
const ROWS_PER_INSERT = 64;
const ROW = '(?, ?, ?, ?, ?), ';

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

  /**
   * Several lines of one or more channels, joined to this tick's group without a promise, as
   * {@link SqliteHistory.appendNow}: a ledger fold writes a channel's lines this way, many rows
   * to a statement.
   * @throws TroupeError as `appendNow`: a line that is not JSON (nothing of the call is written).
   */
  readonly appendMany = (entries: readonly HistoryEntry[]): void => {
    if (entries.length === 0) return;
    const authors = entries.map((entry) => this.checked(entry));
    this.c.writeNow('history.append', () => this.insertMany(entries, authors));
  };

  private insertMany(entries: readonly HistoryEntry[], authors: readonly string[]): void {
    for (let start = 0; start < entries.length; start += ROWS_PER_INSERT) {
      const end = Math.min(entries.length, start + ROWS_PER_INSERT);
      const params: unknown[] = [];
      for (let i = start; i < end; i++) {
        const entry = entries[i] as HistoryEntry;
        params.push(entry.channelId, entry.messageId, entry.at, authors[i], entry.text);
      }
      this.c.change(
        `INSERT INTO history (channel_id, message_id, at, author, text) VALUES ${ROW.repeat(end - start - 1)}(?, ?, ?, ?, ?)`,
        ...params,
      );
    }
    const added = new Map<string, number>();
    for (const entry of entries) added.set(entry.channelId, (added.get(entry.channelId) ?? 0) + 1);
    for (const [channelId, n] of added) this.counted(channelId, n);
  }

  /** Checks a line; returns its author as JSON text. */
  private checked(entry: HistoryEntry): string {
    const place = `history line "${entry.channelId}/${entry.messageId}"`;
    // Only the columns and the author are stored: a line of that shape needs no walk of the rest.
    const { channelId, messageId, at, text } = entry;
    const plain =
      typeof channelId === 'string' &&
      typeof messageId === 'string' &&
      typeof text === 'string' &&
      Number.isFinite(at);
    if (!plain) checkJson(entry, place);
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
    this.counted(entry.channelId, 1);
  }

  /** Counts `n` lines appended to a channel; trims it once `perChannel` were since its last trim. */
  private counted(channelId: string, n: number): void {
    const count = this.sinceTrim.get(channelId);
    if (count === undefined || count + n >= this.perChannel) {
      this.c.change(
        `DELETE FROM history WHERE channel_id = ? AND seq <= (
          SELECT seq FROM history WHERE channel_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
        channelId,
        channelId,
        this.perChannel,
      );
      this.sinceTrim.set(channelId, 0);
    } else {
      this.sinceTrim.set(channelId, count + n);
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
