import { type Collection, ObjectId } from 'mongodb';
import type { Outbox, OutboxEntry, OutboxSettlement } from '../../../ports/outbox.js';
import type { OutgoingResponse } from '../../../ports/outgoingResponse.js';
import type { SentPart } from '../../../ports/routingOutcome.js';
import { checkNumber, decodeJson, encodeJson } from '../jsonValue.js';
import { type Context, checkName, conflict, corrupt, limitOf, numberOf } from './mongoContext.js';
import { isDuplicateKey } from './mongoErrors.js';

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

  async settle(key: string, settlement: OutboxSettlement, lastPart?: SentPart): Promise<void> {
    // Two writes, in order, as the caller would make them: the part first.
    if (lastPart) await this.markPartSent(key, lastPart);
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
