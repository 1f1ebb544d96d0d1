import type { Outbox, OutboxEntry, OutboxSettlement } from '../../../ports/outbox.js';
import type { OutgoingResponse } from '../../../ports/outgoingResponse.js';
import type { SentPart } from '../../../ports/routingOutcome.js';
import { createMemoryStore } from './memoryStore.js';

/** Options of {@link MemoryOutbox}. */
export interface MemoryOutboxOptions {
  /** Settled entries kept for duplicate detection, in all (default 10 000). */
  retainSettled?: number;
  /** Settled entries kept per channel (default: `retainSettled`, so only the overall cap applies). */
  settledPerChannel?: number;
}

/**
 * An outbox in memory on its own, for tests and for embedding without disk: the memory store's
 * outbox (`createMemoryStore().outbox`), which checks and copies what goes in and out and keeps
 * the same promises as the durable adapters within one process. It survives nothing. Settled
 * entries past `retainSettled` are forgotten, oldest first, so memory stays bounded. Its writes
 * are promises only (no `immediate` writes): callers take the path a durable outbox takes, and a
 * test may replace one method to make it fail.
 */
export class MemoryOutbox implements Outbox {
  private readonly outbox: Outbox;

  constructor(options: MemoryOutboxOptions = {}) {
    const retainSettled = options.retainSettled ?? 10_000;
    this.outbox = createMemoryStore({
      retainSettled,
      settledPerChannel: options.settledPerChannel ?? retainSettled,
    }).outbox;
  }

  record(response: OutgoingResponse, at: number): Promise<{ entry: OutboxEntry; created: boolean }> {
    return this.outbox.record(response, at);
  }

  markPartSent(key: string, part: SentPart): Promise<void> {
    return this.outbox.markPartSent(key, part);
  }

  settle(key: string, settlement: OutboxSettlement, lastPart?: SentPart): Promise<void> {
    return this.outbox.settle(key, settlement, lastPart);
  }

  unsettled(limit?: number): Promise<OutboxEntry[]> {
    return this.outbox.unsettled(limit);
  }

  get(key: string): Promise<OutboxEntry | undefined> {
    return this.outbox.get(key);
  }
}
