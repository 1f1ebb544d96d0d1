import type { Collection } from 'mongodb';
import type { EventLog, LoggedEvent } from '../../../ports/store.js';
import { checkIncrement, checkNumber, decodeJson, encodeJson } from '../jsonValue.js';
import { type Context, checkName, limitOf, numberOf } from './mongoContext.js';
import { isDuplicateKey } from './mongoErrors.js';

interface EventRow {
  stream: string;
  seq: number;
  at: number;
  json: string;
}

interface CounterRow {
  _id: string;
  value: number;
}

/** The event log (`agent_event_logs`, unique on (stream, seq)) and named counters (`counters`). */
export class MongoEvents implements EventLog {
  private readonly rows: Collection<EventRow>;
  private readonly counters: Collection<CounterRow>;

  constructor(private readonly ctx: Context) {
    this.rows = ctx.collection<EventRow>('events');
    this.counters = ctx.collection<CounterRow>('counters');
  }

  /**
   * Takes the next sequence number from a counter document, then inserts. Appends that overlap
   * may become visible out of seq order (a reader paging with `afterSeq` at that moment can miss
   * the one that lands later with a smaller seq); within one process appends are in order.
   */
  async append(stream: string, data: Record<string, unknown>, at: number): Promise<void> {
    await this.ctx.run(`append to event stream "${stream}"`, async () => {
      checkName('event stream', stream);
      checkNumber(at, 'at', `event of stream "${stream}"`);
      const json = encodeJson(data, `event of stream "${stream}"`);
      const seq = await this.add(`seq/${this.ctx.names.events}`, 1);
      await this.rows.insertOne({ stream, seq, at, json });
    });
  }

  async read(stream: string, options: { afterSeq?: number; limit?: number } = {}): Promise<LoggedEvent[]> {
    return this.ctx.run(`read event stream "${stream}"`, async () => {
      const limit = limitOf(options.limit);
      if (limit === 0) return [];
      const cursor = this.rows.find({ stream, seq: { $gt: options.afterSeq ?? 0 } }).sort({ seq: 1 });
      if (limit !== undefined) cursor.limit(limit);
      return (await cursor.toArray()).map((row) => {
        const place = `event ${row.seq} of stream "${stream}"`;
        return {
          seq: numberOf(row.seq, place, 'seq'),
          stream,
          at: numberOf(row.at, place, 'at'),
          data: decodeJson<Record<string, unknown>>(row.json, place),
        };
      });
    });
  }

  async increment(counter: string, by = 1): Promise<number> {
    return this.ctx.run(`increment counter "${counter}"`, async () => {
      checkIncrement(counter, by);
      checkName('counter', counter);
      return this.add(`counter/${counter}`, by);
    });
  }

  async counter(counter: string): Promise<number> {
    return this.ctx.run(`read counter "${counter}"`, async () => {
      const row = await this.counters.findOne({ _id: `counter/${counter}` });
      return row ? numberOf(row.value, `counter "${counter}"`, 'value') : 0;
    });
  }

  /** `$inc` with upsert; two first increments can race on `_id`, so the loser tries again. */
  private async add(id: string, by: number): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      try {
        const row = await this.counters.findOneAndUpdate(
          { _id: id },
          { $inc: { value: by } },
          { upsert: true, returnDocument: 'after' },
        );
        return numberOf(row?.value, `counter "${id}"`, 'value');
      } catch (error) {
        if (!isDuplicateKey(error) || attempt >= 5) throw error;
      }
    }
  }
}
