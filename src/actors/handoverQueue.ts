import { z } from 'zod';
import type { DocumentStore } from '../ports/store.js';
import { TroupeError } from '../ports/troupeError.js';
import { parseRuntimeEvent } from './parseRuntimeEvent.js';
import type { RuntimeEvent } from './runtimeEvents.js';

/** The collection hand-over queues live in, one document per channel key. */
export const HANDOVER = 'channel-handover';

/** How many events one channel's queue holds at most; past it, events are refused, not stored. */
export const HANDOVER_LIMIT = 500;

/** How often a write retries after another process changed the queue between its read and its write. */
const MAX_ATTEMPTS = 20;

/** One event stored for the channel's lease holder, numbered in order of arrival at the store. */
export interface HandedOverEvent {
  /** 1, 2, 3… per channel, in the order the store took the events (counted since the queue was last empty). */
  seq: number;
  event: RuntimeEvent & { at: number };
}

const storedQueueSchema = z.object({
  /** The number the next event gets. */
  next: z.number().int().positive(),
  entries: z.array(z.object({ seq: z.number().int().positive(), event: z.unknown() })),
});
type StoredQueue = z.infer<typeof storedQueueSchema>;

/**
 * A durable queue of inbound events per channel, kept in the document store (so it works on every
 * store: memory, SQLite, MongoDB): a process that does not hold a channel's lease appends the
 * channel's events here instead of refusing them, and the lease holder reads them in order and
 * removes them once handled. Appends are compare-and-set on the channel's one document: the order
 * of the sequence numbers is the order in which the store took the events.
 */
export class HandoverQueue {
  constructor(private readonly documents: DocumentStore) {}

  /**
   * Appends an event to its channel's queue; resolves with its sequence number.
   *
   * @throws TroupeError `TROUPE_CHANNEL_OWNED` when the queue is full; store errors as thrown.
   */
  async append(key: string, event: RuntimeEvent & { at: number }, at: number): Promise<number> {
    return this.update(key, at, (queue) => {
      if (queue.entries.length >= HANDOVER_LIMIT)
        throw new TroupeError(
          'TROUPE_CHANNEL_OWNED',
          `Channel ${key} is handled by another process and ${HANDOVER_LIMIT} events already wait for it there; this one was refused. Check that the process holding the channel is running.`,
          { retryable: true, details: { channel: key } },
        );
      const seq = queue.next;
      return { value: { next: seq + 1, entries: [...queue.entries, { seq, event }] }, result: seq };
    });
  }

  /** The events waiting for the channel, in order (an entry that no longer reads as an event is skipped). */
  async read(key: string): Promise<HandedOverEvent[]> {
    const stored = await this.documents.get<unknown>(HANDOVER, key);
    return stored ? readable(parseQueue(stored.value).entries) : [];
  }

  /** The channels with events waiting, and their events (one query for every channel). */
  async waiting(limit = 1_000): Promise<Map<string, HandedOverEvent[]>> {
    const docs = await this.documents.list<unknown>(HANDOVER, { limit });
    const byKey = new Map<string, HandedOverEvent[]>();
    for (const doc of docs) {
      const entries = readable(parseQueue(doc.value).entries);
      if (entries.length > 0) byKey.set(doc.key, entries);
    }
    return byKey;
  }

  /**
   * Removes the channel's events numbered `seq` or lower (handled). The queue goes once empty, and
   * numbering starts again from 1: resolves true then.
   */
  async removeThrough(key: string, seq: number, at: number): Promise<boolean> {
    return this.update(key, at, (queue) => {
      const entries = queue.entries.filter((e) => e.seq > seq);
      return entries.length > 0
        ? { value: { next: queue.next, entries }, result: false }
        : { value: undefined, result: true };
    });
  }

  /** Read, change, write with compare-and-set; retried when another process wrote in between. */
  private async update<R>(
    key: string,
    at: number,
    change: (queue: StoredQueue) => { value: StoredQueue | undefined; result: R },
  ): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      const stored = await this.documents.get<unknown>(HANDOVER, key);
      const queue = stored ? parseQueue(stored.value) : { next: 1, entries: [] };
      const { value, result } = change(queue);
      try {
        if (value)
          await this.documents.put(HANDOVER, key, value, { expectedVersion: stored?.version ?? 0, at });
        else if (stored) {
          const deleted = await this.documents.delete(HANDOVER, key, { expectedVersion: stored.version });
          if (!deleted)
            throw new TroupeError('TROUPE_STORE_CONFLICT', `The hand-over queue of ${key} changed.`);
        }
        return result;
      } catch (error) {
        const conflict = TroupeError.isInstance(error) && error.code === 'TROUPE_STORE_CONFLICT';
        if (!conflict || attempt >= MAX_ATTEMPTS) throw error;
      }
    }
  }
}

/** A stored queue as written by this class; anything else reads as empty (and is overwritten). */
function parseQueue(value: unknown): StoredQueue {
  const parsed = storedQueueSchema.safeParse(value);
  return parsed.success ? parsed.data : { next: 1, entries: [] };
}

/** The entries whose event still validates (the stored form is read back through the event schema). */
function readable(entries: StoredQueue['entries']): HandedOverEvent[] {
  const events: HandedOverEvent[] = [];
  for (const entry of entries) {
    const parsed = parseRuntimeEvent(entry.event);
    if (parsed.success && typeof parsed.data.at === 'number')
      events.push({ seq: entry.seq, event: parsed.data as RuntimeEvent & { at: number } });
  }
  return events;
}
