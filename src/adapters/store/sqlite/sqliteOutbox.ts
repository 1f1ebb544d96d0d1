import type { Outbox, OutboxEntry, OutboxSettlement } from '../../../ports/outbox.js';
import type { OutgoingResponse } from '../../../ports/outgoingResponse.js';
import type { SentPart } from '../../../ports/routingOutcome.js';
import { TroupeError } from '../../../ports/troupeError.js';
import { checkNumber, decodeJson, encodeJson } from '../jsonValue.js';
import { limitOf, type Row, type SqliteConnection } from './sqliteConnection.js';

/** An entry with its settlement, if any (a settlement lives in `outbox_settled`, keyed by the entry's id). */
const ENTRY_SELECT = `SELECT o.key, o.response, o.recorded_at, o.sent_parts, s.settled, s.last_part
  FROM outbox o LEFT JOIN outbox_settled s ON s.id = o.id`;

/** Rowids of recorded entries kept for their settle at most (beyond: the settle looks its entry up). */
const RECORDED_LIMIT = 10_000;

/** Rows of the outbox one write of an expiry looks at (a few milliseconds' work). */
const EXPIRE_SPAN = 2_000;

/** How long a settled entry is kept after it was recorded, unless told otherwise: 7 days. */
export const DEFAULT_OUTBOX_RETENTION_MS = 7 * 86_400_000;

export class SqliteOutbox implements Outbox {
  /** One connection writes everything, in order (see {@link Outbox.writesInOrder}). */
  readonly writesInOrder = true;

  /**
   * The id of each entry this connection recorded and has not settled yet, so its settle finds
   * the row without its key's index. Checked against the key when used: an id a rolled-back
   * write handed out, or one SQLite handed out again, settles nothing else.
   */
  private readonly recorded = new Map<string, number>();

  constructor(
    private readonly c: SqliteConnection,
    private readonly retentionMs: number = DEFAULT_OUTBOX_RETENTION_MS,
  ) {}

  /**
   * Deletes settled entries recorded before `now - retentionMs`. Entries are stored in the order
   * they were recorded, so the old ones come first: they are deleted from the oldest settled one
   * on, {@link EXPIRE_SPAN} rows at a time, each span its own write (the event loop runs between
   * them, however many a first sweep finds), up to the first span that holds a recent entry. No
   * index by time is kept for this hourly sweep (every record would pay for one).
   */
  async expire(now: number): Promise<number> {
    const before = now - this.retentionMs;
    if (!Number.isFinite(before)) return 0;
    let deleted = 0;
    let from = (
      await this.c.read('outbox.expire', () =>
        this.c.get('SELECT id FROM outbox_settled ORDER BY id LIMIT 1'),
      )
    )?.id;
    while (typeof from === 'number') {
      const start = from;
      const span = await this.c.write('outbox.expire', () => this.expireSpan(start, before));
      deleted += span.deleted;
      from = span.next;
    }
    return deleted;
  }

  /** Deletes one span's old settled entries; `next` is where the next span starts, if any. */
  private expireSpan(from: number, before: number): { deleted: number; next: number | undefined } {
    const to = from + EXPIRE_SPAN;
    const deleted = this.c.change(
      `DELETE FROM outbox WHERE id >= ? AND id < ? AND recorded_at < ?
        AND EXISTS (SELECT 1 FROM outbox_settled s WHERE s.id = outbox.id)`,
      from,
      to,
      before,
    );
    // Their settlements go with them: an id SQLite hands out again must not come settled.
    this.c.change(
      `DELETE FROM outbox_settled WHERE id >= ? AND id < ?
        AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.id = outbox_settled.id)`,
      from,
      to,
    );
    const recent = this.c.get(
      'SELECT 1 AS found FROM outbox WHERE id >= ? AND id < ? AND recorded_at >= ? LIMIT 1',
      from,
      to,
      before,
    );
    const after = recent
      ? undefined
      : this.c.get('SELECT id FROM outbox WHERE id >= ? ORDER BY id LIMIT 1', to);
    return { deleted, next: typeof after?.id === 'number' ? after.id : undefined };
  }

  // The writes are not async: the connection's promise is returned as it is (an async wrapper
  // would add a promise and two turns of the microtask queue per write); a refusal still rejects.
  record(response: OutgoingResponse, at: number): Promise<{ entry: OutboxEntry; created: boolean }> {
    const key = response.idempotencyKey;
    let json: string;
    try {
      json = encodeJson(response, `outbox entry "${key}"`);
      checkNumber(at, 'at', `outbox entry "${key}"`);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.c.write('outbox.record', () => {
      const inserted = this.c
        .statement(
          `INSERT INTO outbox (key, response, recorded_at, sent_parts) VALUES (?, ?, ?, '[]')
            ON CONFLICT (key) DO NOTHING`,
        )
        .run(key, json, at);
      const created = inserted.changes > 0;
      // A new entry holds what the caller gave (stored as its JSON): handed back as it is, not read
      // back, and nothing else is kept but its id (a delivery holds its entry until it settles).
      if (created) {
        this.remember(key, Number(inserted.lastInsertRowid));
        return { entry: { key, response, recordedAt: at, sentParts: [] }, created };
      }
      const row = this.c.get(`${ENTRY_SELECT} WHERE o.key = ?`, key);
      if (!row)
        throw new TroupeError(
          'TROUPE_STORE_CORRUPT',
          `Outbox entry "${key}" vanished while it was recorded.`,
        );
      return { entry: toEntry(row), created };
    });
  }

  markPartSent(key: string, part: SentPart): Promise<void> {
    let json: string;
    try {
      json = encodeJson(part, `outbox part of "${key}"`);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.c.write('outbox.markPartSent', () => this.notePart(key, part, json));
  }

  settle(key: string, settlement: OutboxSettlement, lastPart?: SentPart): Promise<void> {
    let json: string;
    let part: string | undefined;
    try {
      json = encodeJson(settlement, `outbox settlement of "${key}"`);
      part = lastPart ? encodeJson(lastPart, `outbox part of "${key}"`) : undefined;
    } catch (error) {
      return Promise.reject(error);
    }
    return this.c.write('outbox.settle', () => {
      // The part is stored beside the settlement, and joins the entry's parts when it is read
      // (unless a part with its index was noted already): the entry's row is never rewritten.
      const id = this.recorded.get(key);
      this.recorded.delete(key);
      // The remembered id is checked against the key (a row found by its id is at hand): a stale
      // one settles nothing and the entry is looked up by its key instead.
      const settled =
        id !== undefined &&
        this.c.change(
          `INSERT INTO outbox_settled (id, settled, last_part) SELECT id, ?, ? FROM outbox
            WHERE id = ? AND key = ? ON CONFLICT (id) DO NOTHING`,
          json,
          part ?? null,
          id,
          key,
        ) > 0;
      if (!settled)
        this.c.change(
          `INSERT INTO outbox_settled (id, settled, last_part) SELECT id, ?, ? FROM outbox WHERE key = ?
            ON CONFLICT (id) DO NOTHING`,
          json,
          part ?? null,
          key,
        );
    });
  }

  private remember(key: string, id: number): void {
    if (this.recorded.size >= RECORDED_LIMIT) this.recorded.clear();
    this.recorded.set(key, id);
  }

  /**
   * One statement: the part is appended only if no part with its index is there yet, the one a
   * settlement added included (the first part noted stands).
   */
  private notePart(key: string, part: SentPart, json: string): void {
    this.c.change(
      `UPDATE outbox SET sent_parts = json_insert(sent_parts, '$[#]', json(?))
        WHERE key = ?
          AND NOT EXISTS (
            SELECT 1 FROM json_each(outbox.sent_parts) AS p WHERE json_extract(p.value, '$.index') = ?)
          AND NOT EXISTS (
            SELECT 1 FROM outbox_settled s
            WHERE s.id = outbox.id AND json_extract(s.last_part, '$.index') = ?)`,
      json,
      key,
      part.index,
      part.index,
    );
  }

  async unsettled(limit?: number): Promise<OutboxEntry[]> {
    return this.c.read('outbox.unsettled', () =>
      this.c
        .all(
          // No index of unsettled entries (every reply would pay for it): the outbox is read, about
          // 0.3 µs an entry, when a runtime starts.
          `SELECT o.key, o.response, o.recorded_at, o.sent_parts, NULL AS settled, NULL AS last_part
            FROM outbox o WHERE NOT EXISTS (SELECT 1 FROM outbox_settled s WHERE s.id = o.id)
            ORDER BY o.recorded_at, o.id LIMIT ?`,
          limitOf(limit),
        )
        .map(toEntry),
    );
  }

  async get(key: string): Promise<OutboxEntry | undefined> {
    return this.c.read('outbox.get', () => {
      const row = this.c.get(`${ENTRY_SELECT} WHERE o.key = ?`, key);
      return row ? toEntry(row) : undefined;
    });
  }
}

function toEntry(row: Row): OutboxEntry {
  const key = String(row.key);
  const place = `outbox entry "${key}"`;
  const sentParts = decodeJson<SentPart[]>(row.sent_parts, `${place} (sent parts)`);
  if (row.last_part !== null && row.last_part !== undefined) {
    const last = decodeJson<SentPart>(row.last_part, `${place} (last sent part)`);
    if (!sentParts.some((p) => p.index === last.index)) sentParts.push(last);
  }
  return {
    key,
    response: decodeJson<OutgoingResponse>(row.response, place),
    recordedAt: Number(row.recorded_at),
    sentParts,
    ...(row.settled !== null && row.settled !== undefined
      ? { settled: decodeJson<OutboxSettlement>(row.settled, `${place} (settlement)`) }
      : {}),
  };
}
