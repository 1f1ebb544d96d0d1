import { setTimeout as delay } from 'node:timers/promises';
import { type Collection, ObjectId } from 'mongodb';
import type { HistoryEntry, HistoryStore } from '../../ports/history.js';
import type { Outbox, OutboxEntry, OutboxSettlement } from '../../ports/outbox.js';
import type { OutgoingResponse } from '../../ports/outgoingResponse.js';
import type { SentPart } from '../../ports/routingOutcome.js';
import type {
  EventLog,
  LoggedEvent,
  MemoryRecord,
  ProcessedIds,
  VersionedMemory,
} from '../../ports/store.js';
import { checkIncrement, checkNumber, decodeJson, encodeJson } from './jsonValue.js';
import { type Context, checkName, conflict, corrupt, limitOf, numberOf } from './mongoContext.js';
import { cleanMessage, isDuplicateKey } from './mongoErrors.js';

// The MongoDB store's versioned memory, outbox, event log and counters, processed ids and history.

interface MemoryRow {
  namespace: string;
  key: string;
  version: number;
  json: string;
  at: number;
  source?: string;
}

/** Versioned memory: one MongoDB document per version, unique on (namespace, key, version). */
export class MongoMemory implements VersionedMemory {
  private readonly rows: Collection<MemoryRow>;

  constructor(private readonly ctx: Context) {
    this.rows = ctx.collection<MemoryRow>('memory');
  }

  async get<T = unknown>(namespace: string, key: string): Promise<MemoryRecord<T> | undefined> {
    return this.ctx.run(`read memory "${namespace}/${key}"`, async () => {
      const row = await this.rows.findOne({ namespace, key }, { sort: { version: -1 } });
      return row ? toRecord<T>(row) : undefined;
    });
  }

  /**
   * Inserts version latest+1. The unique index on (namespace, key, version) makes concurrent
   * writers collide: with `expectedVersion` the loser gets a conflict, without it it tries again.
   */
  async put<T = unknown>(
    namespace: string,
    key: string,
    value: T,
    options: { expectedVersion?: number; at?: number; source?: string } = {},
  ): Promise<MemoryRecord<T>> {
    const place = `${namespace}/${key}`;
    return this.ctx.run(`write memory "${place}"`, async () => {
      checkName('memory namespace', namespace);
      checkName('memory key', key);
      checkNumber(options.at, 'at', `memory "${place}"`);
      checkNumber(options.expectedVersion, 'expectedVersion', `memory "${place}"`);
      const json = encodeJson(value, `memory "${place}"`);
      const at = options.at ?? Date.now();
      for (let attempt = 1; ; attempt++) {
        const latest = await this.rows.findOne(
          { namespace, key },
          { sort: { version: -1 }, projection: { version: 1 } },
        );
        const actual = latest ? numberOf(latest.version, `memory "${place}"`, 'version') : 0;
        const { expectedVersion } = options;
        if (expectedVersion !== undefined && expectedVersion !== actual) {
          throw conflict('memory', place, expectedVersion, actual);
        }
        const row: MemoryRow = {
          namespace,
          key,
          version: actual + 1,
          json,
          at,
          ...(options.source !== undefined ? { source: options.source } : {}),
        };
        try {
          await this.rows.insertOne(row);
          return toRecord<T>(row);
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
          if (expectedVersion !== undefined) throw conflict('memory', place, expectedVersion, actual + 1);
          if (attempt >= 50) throw conflict('memory', place, actual, actual + 1);
          if (attempt > 3) await delay(Math.random() * attempt * 2);
        }
      }
    });
  }

  async history<T = unknown>(namespace: string, key: string, limit?: number): Promise<MemoryRecord<T>[]> {
    return this.ctx.run(`read the history of memory "${namespace}/${key}"`, async () => {
      const count = limitOf(limit);
      if (count === 0) return [];
      const cursor = this.rows.find({ namespace, key }).sort({ version: -1 });
      if (count !== undefined) cursor.limit(count);
      return (await cursor.toArray()).map((row) => toRecord<T>(row));
    });
  }

  /** Reads every version of the namespace (key order, newest first) and keeps the first per key. */
  async list<T = unknown>(namespace: string): Promise<MemoryRecord<T>[]> {
    return this.ctx.run(`list memory "${namespace}"`, async () => {
      const latest: MemoryRecord<T>[] = [];
      let lastKey: string | undefined;
      for await (const row of this.rows.find({ namespace }).sort({ key: 1, version: -1 })) {
        if (row.key === lastKey) continue;
        lastKey = row.key;
        latest.push(toRecord<T>(row));
      }
      return latest;
    });
  }
}

function toRecord<T>(row: MemoryRow): MemoryRecord<T> {
  const place = `memory "${row.namespace}/${row.key}" version ${row.version}`;
  return {
    namespace: row.namespace,
    key: row.key,
    value: decodeJson<T>(row.json, place),
    version: numberOf(row.version, place, 'version'),
    at: numberOf(row.at, place, 'at'),
    ...(typeof row.source === 'string' ? { source: row.source } : {}),
  };
}

// ---- outbox ----------------------------------------------------------------------------------

interface OutboxRow {
  _id: string;
  json: string;
  recordedAt: number;
  /** Ties on `recordedAt` keep the order entries were recorded in (per process). */
  order: ObjectId;
  sentParts: SentPart[];
  /** Present (true) until settled: what the partial index of unsettled entries holds. */
  pending?: true;
  settled?: OutboxSettlement;
  /** Settled entries are deleted by the TTL index after the retention time. */
  expiresAt?: Date;
}

/**
 * The outbox: one document per idempotency key (`_id`), so a second `record` of a key finds the
 * first. Unsettled entries carry `pending: true` under a partial index; settled ones are kept for
 * `outboxRetentionMs` (a TTL index deletes them after that).
 */
export class MongoOutbox implements Outbox {
  private readonly rows: Collection<OutboxRow>;

  constructor(
    private readonly ctx: Context,
    private readonly retentionMs: number,
  ) {
    this.rows = ctx.collection<OutboxRow>('outbox');
  }

  async record(response: OutgoingResponse, at: number): Promise<{ entry: OutboxEntry; created: boolean }> {
    const key = response.idempotencyKey;
    return this.ctx.run(`record outbox entry "${key}"`, async () => {
      checkName('outbox key', key);
      checkNumber(at, 'at', `outbox entry "${key}"`);
      const row: OutboxRow = {
        _id: key,
        json: encodeJson(response, `outbox entry "${key}"`),
        recordedAt: at,
        order: new ObjectId(),
        sentParts: [],
        pending: true,
      };
      for (let attempt = 1; ; attempt++) {
        try {
          await this.rows.insertOne(row);
          return { entry: toEntry(row), created: true };
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
        }
        const existing = await this.rows.findOne({ _id: key });
        if (existing) return { entry: toEntry(existing), created: false };
        // It expired between the two calls: record it again.
        if (attempt >= 3) throw conflict('outbox', key, 0, 1);
      }
    });
  }

  async markPartSent(key: string, part: SentPart): Promise<void> {
    await this.ctx.run(`note a sent part of outbox entry "${key}"`, async () => {
      const copy = JSON.parse(encodeJson(part, `outbox part of "${key}"`)) as SentPart;
      await this.rows.updateOne(
        { _id: key, 'sentParts.index': { $ne: part.index } },
        { $push: { sentParts: copy } },
      );
    });
  }

  async settle(key: string, settlement: OutboxSettlement): Promise<void> {
    await this.ctx.run(`settle outbox entry "${key}"`, async () => {
      const copy = JSON.parse(encodeJson(settlement, `outbox settlement of "${key}"`)) as OutboxSettlement;
      await this.rows.updateOne(
        { _id: key, pending: true },
        {
          $set: { settled: copy, expiresAt: new Date(Date.now() + this.retentionMs) },
          $unset: { pending: '' },
        },
      );
    });
  }

  async unsettled(limit?: number): Promise<OutboxEntry[]> {
    return this.ctx.run('list unsettled outbox entries', async () => {
      const count = limitOf(limit);
      if (count === 0) return [];
      const cursor = this.rows.find({ pending: true }).sort({ recordedAt: 1, order: 1 });
      if (count !== undefined) cursor.limit(count);
      return (await cursor.toArray()).map(toEntry);
    });
  }

  async get(key: string): Promise<OutboxEntry | undefined> {
    return this.ctx.run(`read outbox entry "${key}"`, async () => {
      const row = await this.rows.findOne({ _id: key });
      return row ? toEntry(row) : undefined;
    });
  }
}

function toEntry(row: OutboxRow): OutboxEntry {
  const place = `outbox entry "${row._id}"`;
  if (!Array.isArray(row.sentParts)) throw corrupt(place, 'sentParts is not a list');
  return {
    key: row._id,
    response: decodeJson<OutgoingResponse>(row.json, place),
    recordedAt: numberOf(row.recordedAt, place, 'recordedAt'),
    sentParts: row.sentParts.map((p) => ({
      index: p.index,
      kind: p.kind,
      messageId: p.messageId,
      attempts: p.attempts,
    })),
    ...(row.settled
      ? {
          settled: {
            at: row.settled.at,
            sent: row.settled.sent,
            ...(row.settled.error ? { error: { ...row.settled.error } } : {}),
          },
        }
      : {}),
  };
}

// ---- events and counters ---------------------------------------------------------------------

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

// ---- processed ids ---------------------------------------------------------------------------

interface ProcessedRow {
  scope: string;
  id: string;
  at: number;
}

/** Processed ids: a unique index on (scope, id) makes the first insert win across processes. */
export class MongoProcessed implements ProcessedIds {
  private readonly rows: Collection<ProcessedRow>;

  constructor(private readonly ctx: Context) {
    this.rows = ctx.collection<ProcessedRow>('processed');
  }

  async markProcessed(scope: string, id: string, at: number): Promise<boolean> {
    return this.ctx.run(`mark "${scope}/${id}" processed`, async () => {
      checkName('processed scope', scope);
      checkName('processed id', id);
      checkNumber(at, 'at', `processed id "${scope}/${id}"`);
      try {
        await this.rows.insertOne({ scope, id, at });
        return true;
      } catch (error) {
        if (isDuplicateKey(error)) return false;
        throw error;
      }
    });
  }

  async isProcessed(scope: string, id: string): Promise<boolean> {
    return this.ctx.run(`check whether "${scope}/${id}" was processed`, async () => {
      return (await this.rows.findOne({ scope, id }, { projection: { _id: 1 } })) !== null;
    });
  }
}

// ---- history ---------------------------------------------------------------------------------

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
