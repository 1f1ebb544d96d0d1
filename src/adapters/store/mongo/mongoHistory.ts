import { type Collection, ObjectId } from 'mongodb';
import type { HistoryEntry, HistoryStore } from '../../../ports/history.js';
import { decodeJson, encodeJson } from '../jsonValue.js';
import { type Context, checkName, limitOf } from './mongoContext.js';
import { cleanMessage } from './mongoErrors.js';

interface HistoryRow {
  channelId: string;
  messageId: string;
  at: number;
  order: ObjectId;
  json: string;
}

/** Channel history: lines by (channelId, at), trimmed to `perChannel` lines as channels grow. */
export class MongoHistory implements HistoryStore {
  private readonly rows: Collection<HistoryRow>;
  /** Appends per channel since this process last trimmed it. */
  private readonly sinceTrim = new Map<string, number>();
  private readonly trimEvery: number;

  constructor(
    private readonly ctx: Context,
    private readonly perChannel: number,
  ) {
    this.rows = ctx.collection<HistoryRow>('history');
    this.trimEvery = Math.max(10, Math.floor(perChannel / 4));
  }

  async append(entry: HistoryEntry): Promise<void> {
    await this.ctx.run(`append to the history of channel "${entry.channelId}"`, async () => {
      checkName('channel id', entry.channelId);
      const json = encodeJson(entry, `history line "${entry.channelId}/${entry.messageId}"`);
      await this.rows.insertOne({
        channelId: entry.channelId,
        messageId: entry.messageId,
        at: entry.at,
        order: new ObjectId(),
        json,
      });
      const count = (this.sinceTrim.get(entry.channelId) ?? 0) + 1;
      this.sinceTrim.set(entry.channelId, count);
      if (count >= this.trimEvery) {
        this.sinceTrim.delete(entry.channelId);
        // The line is written; a failed trim only leaves old lines for the next one.
        await this.trim(entry.channelId).catch((error: unknown) =>
          this.ctx.logger.warn(
            { channelId: entry.channelId, reason: cleanMessage(error) },
            'MongoDB history trim failed',
          ),
        );
      }
    });
  }

  async recent(channelId: string, limit: number): Promise<HistoryEntry[]> {
    return this.ctx.run(`read the history of channel "${channelId}"`, async () => {
      const count = Math.min(limitOf(limit) ?? this.perChannel, this.perChannel);
      if (count === 0) return [];
      const rows = await this.rows.find({ channelId }).sort({ at: -1, order: -1 }).limit(count).toArray();
      return rows
        .reverse()
        .map((row) => decodeJson<HistoryEntry>(row.json, `history line "${channelId}/${row.messageId}"`));
    });
  }

  /** Deletes lines older than the `perChannel`-th newest (lines sharing its time stay). */
  private async trim(channelId: string): Promise<void> {
    const [edge] = await this.rows
      .find({ channelId }, { projection: { at: 1 } })
      .sort({ at: -1, order: -1 })
      .skip(this.perChannel - 1)
      .limit(1)
      .toArray();
    if (edge) await this.rows.deleteMany({ channelId, at: { $lt: edge.at } });
  }
}
