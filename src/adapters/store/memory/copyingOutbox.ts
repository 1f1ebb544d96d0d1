import type { ImmediateOutboxWrites, Outbox, OutboxEntry, OutboxSettlement } from '../../../ports/outbox.js';
import type { OutgoingResponse } from '../../../ports/outgoingResponse.js';
import type { SentPart } from '../../../ports/routingOutcome.js';
import { checkNumber, copyJson } from '../jsonValue.js';
import { DONE, ensureOpen, limitOf, type MemoryState } from './memoryState.js';
import type { SettledKeys } from './settledKeys.js';

interface OutboxRow {
  key: string;
  /** A checked copy, never handed out. */
  response: OutgoingResponse;
  recordedAt: number;
  sentParts: SentPart[];
  settled?: OutboxSettlement;
}

/**
 * The memory outbox with the store's guarantees: responses are checked and copied as JSON, entries
 * come out as copies, and `unsettled(limit)` gives the oldest entries (settled ones are forgotten
 * past `settledPerChannel` in their channel or `retainSettled` in all).
 */
export class CopyingOutbox implements Outbox {
  private readonly entries = new Map<string, OutboxRow>();
  private readonly forget = (key: string) => {
    this.entries.delete(key);
  };

  constructor(
    private readonly state: MemoryState,
    private readonly settledKeys: SettledKeys,
  ) {}

  /** The writes answered at once: routing calls these and spares a promise per write. */
  readonly immediate: ImmediateOutboxWrites = {
    record: (response, at) => {
      const { row, created } = this.recordRow(response, at);
      return { entry: toEntryState(row), created };
    },
    markPartSent: (key, part) => this.markPartSentNow(key, part),
    settle: (key, settlement) => this.settleNow(key, settlement),
  };

  record(response: OutgoingResponse, at: number): Promise<{ entry: OutboxEntry; created: boolean }> {
    try {
      const { row, created } = this.recordRow(response, at);
      return Promise.resolve({ entry: toEntry(row), created });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  markPartSent(key: string, part: SentPart): Promise<void> {
    try {
      this.markPartSentNow(key, part);
      return DONE;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  settle(key: string, settlement: OutboxSettlement, lastPart?: SentPart): Promise<void> {
    try {
      if (lastPart) this.markPartSentNow(key, lastPart);
      this.settleNow(key, settlement);
      return DONE;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private recordRow(response: OutgoingResponse, at: number): { row: OutboxRow; created: boolean } {
    ensureOpen(this.state);
    const key = response.idempotencyKey;
    const copy = copyJson(response, `outbox entry "${key}"`);
    checkNumber(at, 'at', `outbox entry "${key}"`);
    const existing = this.entries.get(key);
    if (existing) return { row: existing, created: false };
    const row: OutboxRow = { key, response: copy, recordedAt: at, sentParts: [] };
    this.entries.set(key, row);
    return { row, created: true };
  }

  private markPartSentNow(key: string, part: SentPart): void {
    ensureOpen(this.state);
    const copy = copyJson(part, `outbox part of "${key}"`);
    const row = this.entries.get(key);
    if (row && !row.sentParts.some((p) => p.index === part.index)) row.sentParts.push(copy);
  }

  private settleNow(key: string, settlement: OutboxSettlement): void {
    ensureOpen(this.state);
    const copy = copyJson(settlement, `outbox settlement of "${key}"`);
    const row = this.entries.get(key);
    if (!row || row.settled) return;
    row.settled = copy;
    const { kind, id } = row.response.channel;
    this.settledKeys.add(`${kind}:${id}`, key, this.forget);
  }

  async unsettled(limit?: number): Promise<OutboxEntry[]> {
    ensureOpen(this.state);
    const open: OutboxRow[] = [];
    for (const row of this.entries.values()) if (!row.settled) open.push(row);
    // A stable sort: entries recorded at the same time stay in the order they were recorded.
    return open
      .sort((a, b) => a.recordedAt - b.recordedAt)
      .slice(0, limitOf(limit))
      .map(toEntry);
  }

  async get(key: string): Promise<OutboxEntry | undefined> {
    ensureOpen(this.state);
    const row = this.entries.get(key);
    return row ? toEntry(row) : undefined;
  }
}

/** What routing needs of a recorded entry: its parts and settlement, copied. */
function toEntryState(row: OutboxRow): Pick<OutboxEntry, 'sentParts' | 'settled'> {
  const sentParts = row.sentParts.map((p) => ({ ...p }));
  if (!row.settled) return { sentParts };
  const settled = { ...row.settled };
  if (row.settled.error) settled.error = { ...row.settled.error };
  return { sentParts, settled };
}

function toEntry(row: OutboxRow): OutboxEntry {
  return {
    key: row.key,
    response: copyJson(row.response, `outbox entry "${row.key}"`),
    recordedAt: row.recordedAt,
    sentParts: row.sentParts.map((p) => ({ ...p })),
    ...(row.settled
      ? {
          settled: {
            ...row.settled,
            ...(row.settled.error ? { error: { ...row.settled.error } } : {}),
          },
        }
      : {}),
  };
}
