import type { Outbox, OutboxEntry, OutboxSettlement } from '../../../ports/outbox.js';
import type { OutgoingResponse } from '../../../ports/outgoingResponse.js';
import type { SentPart } from '../../../ports/routingOutcome.js';
import { KeyRing } from './keyRing.js';

/**
 * An outbox in memory: for tests and for embedding without disk. It survives nothing, but it
 * keeps the same promises as the durable adapters within one process. Settled entries older than
 * `retainSettled` are forgotten, so memory stays bounded.
 */
export class MemoryOutbox implements Outbox {
  private readonly entries = new Map<string, OutboxEntry>();
  private readonly retainSettled: number;
  private readonly settledKeys: KeyRing;

  /** @param options.retainSettled how many settled entries to keep for duplicate detection (default 10 000) */
  constructor(options: { retainSettled?: number } = {}) {
    this.retainSettled = options.retainSettled ?? 10_000;
    this.settledKeys = new KeyRing(this.retainSettled);
  }

  async record(response: OutgoingResponse, at: number): Promise<{ entry: OutboxEntry; created: boolean }> {
    const existing = this.entries.get(response.idempotencyKey);
    if (existing) return { entry: clone(existing), created: false };
    // A copy: the caller may reuse or change its object after recording it.
    const entry: OutboxEntry = {
      key: response.idempotencyKey,
      response: structuredClone(response),
      recordedAt: at,
      sentParts: [],
    };
    this.entries.set(entry.key, entry);
    return { entry: clone(entry), created: true };
  }

  async markPartSent(key: string, part: SentPart): Promise<void> {
    const entry = this.entries.get(key);
    if (!entry || entry.sentParts.some((p) => p.index === part.index)) return;
    entry.sentParts.push({ ...part });
  }

  async settle(key: string, settlement: OutboxSettlement): Promise<void> {
    const entry = this.entries.get(key);
    if (!entry || entry.settled) return;
    entry.settled = { ...settlement };
    const forgotten = this.settledKeys.add(key);
    if (forgotten !== undefined) this.entries.delete(forgotten);
  }

  async unsettled(limit = Number.POSITIVE_INFINITY): Promise<OutboxEntry[]> {
    // Oldest first over all of them, then the limit (not the first `limit` in insertion order).
    const pending = [...this.entries.values()].filter((entry) => !entry.settled);
    pending.sort((a, b) => a.recordedAt - b.recordedAt);
    return pending.slice(0, Math.max(0, limit)).map(clone);
  }

  async get(key: string): Promise<OutboxEntry | undefined> {
    const entry = this.entries.get(key);
    return entry ? clone(entry) : undefined;
  }

  /** Number of entries held (settled and not). */
  get size(): number {
    return this.entries.size;
  }
}

function clone(entry: OutboxEntry): OutboxEntry {
  return {
    ...entry,
    response: structuredClone(entry.response),
    sentParts: entry.sentParts.map((p) => ({ ...p })),
    ...(entry.settled ? { settled: { ...entry.settled } } : {}),
  };
}
