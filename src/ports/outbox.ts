import type { TroupeErrorCode } from './errorCodes.js';
import type { OutgoingResponse } from './outgoingResponse.js';
import type { SentPart } from './routingOutcome.js';

/** How a response's delivery ended. */
export interface OutboxSettlement {
  at: number;
  sent: boolean;
  error?: { code: TroupeErrorCode; message: string; retryable: boolean };
}

/** One response in the outbox: recorded before the first send, settled after the last. */
export interface OutboxEntry {
  key: string;
  response: OutgoingResponse;
  recordedAt: number;
  /** Parts the transport already took, so a resend after a crash starts where it stopped. */
  sentParts: SentPart[];
  settled?: OutboxSettlement;
}

/**
 * The outbox port (docs/architecture.md, invariant 5): a response is recorded with its idempotency key before it
 * is sent and settled after, so a restart resends only what was not settled. Adapters: memory
 * here; SQLite and MongoDB implement the same port.
 */
export interface Outbox {
  /**
   * Records a response unless its key is already there; returns the stored entry either way, and
   * whether this call created it.
   */
  record(response: OutgoingResponse, at: number): Promise<{ entry: OutboxEntry; created: boolean }>;
  /** Notes that one part was taken by the transport. */
  markPartSent(key: string, part: SentPart): Promise<void>;
  /**
   * Marks the entry finished (sent or failed for good); settled entries are never resent.
   * `lastPart`, when given, is the part the transport took just before: it is noted with the
   * settlement in the same write, as {@link Outbox.markPartSent} then `settle` would (one write
   * per reply instead of two, which a durable store commits once).
   */
  settle(key: string, settlement: OutboxSettlement, lastPart?: SentPart): Promise<void>;
  /** Entries recorded but not settled, oldest first. */
  unsettled(limit?: number): Promise<OutboxEntry[]>;
  get(key: string): Promise<OutboxEntry | undefined>;
  /**
   * Deletes the entries settled and recorded more than the store's retention before `now`, which
   * no resend can still name; an entry not settled is never deleted. Returns how many went.
   * Absent when the store bounds its outbox by itself (the memory store keeps the latest settled
   * entries, MongoDB's TTL index deletes them); the runtime calls it on its hourly sweep.
   */
  expire?(now: number): Promise<number>;
  /** The same writes, answered at once, when the store can (see {@link ImmediateOutboxWrites}). */
  readonly immediate?: ImmediateOutboxWrites | undefined;
  /**
   * True when the store keeps every write in the order it was made, its documents' and its
   * outbox's alike (one SQLite connection): a write made after another is never stored without
   * it. Routing then publishes a delivery's outcome, and starts the channel's next delivery, as
   * soon as it asks for the settlement, not once it is stored: whatever follows (the channel's
   * next writes, the next reply's record) is stored after the settlement, and joins its commit.
   * A channel records its reply as soon as its floor's write is handed to the store, for the same
   * reason.
   */
  readonly writesInOrder?: boolean | undefined;
}

/**
 * The writes of an outbox whose store answers at once (in memory): the same operations with the
 * same effects, returning instead of resolving and throwing instead of rejecting. Routing uses
 * them when an outbox has them, sparing three promises and waits per reply.
 */
export interface ImmediateOutboxWrites {
  /** As {@link Outbox.record}, but the entry comes back without the response (the caller has it). */
  record(
    response: OutgoingResponse,
    at: number,
  ): { entry: Pick<OutboxEntry, 'sentParts' | 'settled'>; created: boolean };
  markPartSent(key: string, part: SentPart): void;
  settle(key: string, settlement: OutboxSettlement): void;
}
