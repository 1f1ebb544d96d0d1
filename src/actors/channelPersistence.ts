import type { Logger } from '../logging/logger.js';
import type { FloorSnapshot } from '../machines/floorSnapshot.js';
import type { Clock, TimerHandle } from '../ports/clock.js';
import type { DocumentStore } from '../ports/store.js';
import { TroupeError } from '../ports/troupeError.js';

/** Where channel state lives in the store. */
export const CHANNELS = 'channels';
/** When a passivated or restarted channel must wake up (its floor's next deadline). */
export const WAKEUPS = 'wakeups';
/** Documents that could not be restored, moved aside instead of overwritten. */
export const QUARANTINE = 'quarantine';

/** A channel as stored: the floor and what the channel actor adds to it. */
export interface ChannelDocument {
  floor: FloorSnapshot;
  /** `[threadId, avatarId, turns spoken]`: the offline model's sense of where it is in a thread. */
  spoken: [string, string, number][];
  /**
   * The latest inbound message ids, oldest first, so a message a gateway redelivers after a
   * restart or passivation is recognised (stored with the floor, atomically).
   */
  seen?: string[];
}

/** What loading a channel found. */
export type LoadedChannel =
  | { kind: 'fresh' }
  | { kind: 'restored'; document: ChannelDocument }
  | { kind: 'invalid'; error: TroupeError };

/** What persistence asks for a channel's stored form (the channel actor), at flush time. */
export interface DocumentSource {
  document(): { document: ChannelDocument; wakeAt: number | undefined };
}

/** A flush waiting for the one before it: requests made meanwhile join it. */
interface QueuedFlush {
  /** The channels to write; undefined: every dirty one. */
  keys: Set<string> | undefined;
  done: Promise<void>;
}

/**
 * Persists channel actors' state with compare-and-set, so a process never overwrites a newer
 * state another wrote. Over a store that outlives the process (`writeBehind`), snapshots are
 * written as they change, batched (one store write per flush interval, not one per event), and a
 * channel about to send a reply is flushed at once first, so the outbox never knows a turn the
 * stored floor does not (no summon turn lost or spent twice). Over a store that dies with the
 * process (memory) there is no restart to prepare for: a channel is written only when flushed
 * explicitly (passivation, retirement, stop), which is when anything reads it back.
 */
export class ChannelPersistence {
  private readonly dirty = new Map<string, DocumentSource>();
  private readonly versions = new Map<string, number>();
  private readonly wakeVersions = new Map<string, number>();
  private timer: TimerHandle | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private queued: QueuedFlush | undefined;

  constructor(
    private readonly options: {
      documents: DocumentStore;
      clock: Clock;
      logger: Logger;
      /** Longest a change waits before it is written (default 250 ms), when written behind. */
      flushIntervalMs?: number;
      /**
       * Write changes behind, on the flush interval (default true). False for a store that does
       * not outlive the process: changes wait for an explicit {@link ChannelPersistence.flush}.
       */
      writeBehind?: boolean;
      /** Told about every store failure (the runtime publishes it on `errors$`). */
      onError: (error: TroupeError, key: string | undefined) => void;
      /** A channel whose stored state moved on without us (another process wrote it). */
      onConflict: (key: string) => void;
    },
  ) {}

  /** Reads a channel; a document that does not validate is quarantined, never overwritten. */
  async load(key: string): Promise<LoadedChannel> {
    // A channel retired a moment ago may still be being written: read what it left, not older state.
    await this.flushing;
    const stored = await this.options.documents.get<ChannelDocument>(CHANNELS, key);
    if (!stored) {
      this.versions.set(key, 0);
      return { kind: 'fresh' };
    }
    // The floor itself is validated once, by ChannelFloor.restore (a bad one is quarantined there).
    const floor = stored.value?.floor;
    const spoken = Array.isArray(stored.value?.spoken) ? stored.value.spoken : undefined;
    const seenRaw = stored.value?.seen;
    const seen = Array.isArray(seenRaw) ? seenRaw.filter((id): id is string => typeof id === 'string') : [];
    if (typeof floor !== 'object' || floor === null || !spoken) {
      await this.quarantine(key, stored.value, stored.version);
      return {
        kind: 'invalid',
        error: new TroupeError(
          'TROUPE_SNAPSHOT_INVALID',
          `The stored state of channel ${key} is not a valid Troupe channel document; it was moved to "${QUARANTINE}" and the channel starts fresh.`,
        ),
      };
    }
    this.versions.set(key, stored.version);
    return { kind: 'restored', document: { floor, spoken, seen } };
  }

  /** Moves a document the runtime cannot use aside, so a fresh state never overwrites it unseen. */
  async quarantine(key: string, value: unknown, version: number): Promise<void> {
    const { documents, clock } = this.options;
    await documents.put(
      QUARANTINE,
      `${CHANNELS}/${key}/${clock.now()}`,
      { collection: CHANNELS, key, value },
      { at: clock.now() },
    );
    await documents.delete(CHANNELS, key, { expectedVersion: version });
    this.versions.set(key, 0);
  }

  /** Notes that a channel changed; `source` is asked at flush time, so many changes cost one write. */
  markDirty(key: string, source: DocumentSource): void {
    if (this.dirty.get(key) !== source) this.dirty.set(key, source);
    if (!this.timer && this.options.writeBehind !== false) {
      const { clock } = this.options;
      this.timer = clock.setTimer(clock.now() + (this.options.flushIntervalMs ?? 250), () => {
        this.timer = undefined;
        void this.flush();
      });
    }
  }

  /** Stops tracking a channel (after a conflict, its in-memory state is dropped). */
  forget(key: string): void {
    this.dirty.delete(key);
    this.versions.delete(key);
    this.wakeVersions.delete(key);
  }

  /** True if the channel has changes not yet written. */
  isDirty(key: string): boolean {
    return this.dirty.has(key);
  }

  /**
   * Writes pending changes (of `keys` only, if given) and resolves when they are stored. Flushes
   * run one at a time; requests made while one waits its turn join it (one store write for all
   * the channels about to send in the same tick). A store failure keeps the changes pending and
   * reports the error.
   */
  flush(keys?: readonly string[]): Promise<void> {
    const queued = this.queued;
    if (queued) {
      if (!keys) queued.keys = undefined;
      else if (queued.keys) for (const k of keys) queued.keys.add(k);
      return queued.done;
    }
    const next: QueuedFlush = { keys: keys ? new Set(keys) : undefined, done: Promise.resolve() };
    next.done = this.flushing.then(() => {
      if (this.queued === next) this.queued = undefined;
      return this.write(next.keys ? [...next.keys] : undefined);
    });
    this.queued = next;
    this.flushing = next.done.catch(() => undefined);
    return next.done;
  }

  private async write(keys: readonly string[] | undefined): Promise<void> {
    const picked = (keys ?? [...this.dirty.keys()]).filter((k) => this.dirty.has(k));
    if (picked.length === 0) return;
    const { documents, clock, logger } = this.options;
    const at = clock.now();
    const batch = picked.map((key) => {
      const source = this.dirty.get(key) as DocumentSource;
      this.dirty.delete(key);
      return { key, source, ...source.document() };
    });
    const writes = batch.map((b) => ({
      key: b.key,
      value: b.document,
      expectedVersion: this.versions.get(b.key) ?? 0,
    }));
    try {
      // Wake-ups first: a crash between the two writes then leaves an extra wake-up (harmless),
      // never a stored thread that nothing wakes.
      await this.writeWakeups(batch, at);
      let versions: (number | undefined)[];
      try {
        versions = await documents.putMany(CHANNELS, writes, at);
      } catch (error) {
        if (!TroupeError.isInstance(error) || error.code !== 'TROUPE_STORE_CONFLICT') throw error;
        // One channel moved on elsewhere: write the others one by one, drop that one.
        versions = await Promise.all(
          writes.map((w) =>
            documents
              .put(CHANNELS, w.key, w.value, { expectedVersion: w.expectedVersion, at })
              .catch((e: unknown) => {
                if (TroupeError.isInstance(e) && e.code === 'TROUPE_STORE_CONFLICT') {
                  logger.warn(
                    { channel: w.key },
                    'channel state changed in the store since it was loaded; reloading it',
                  );
                  this.options.onError(e, w.key);
                  this.forget(w.key);
                  this.options.onConflict(w.key);
                  return undefined;
                }
                throw e;
              }),
          ),
        );
      }
      batch.forEach((b, i) => {
        const v = versions[i];
        if (v !== undefined) this.versions.set(b.key, v);
      });
      await this.removeWakeups(batch.filter((b, i) => versions[i] !== undefined && b.wakeAt === undefined));
    } catch (error) {
      // Keep what could not be written; the next flush tries again.
      for (const b of batch) if (!this.dirty.has(b.key)) this.dirty.set(b.key, b.source);
      const failure = TroupeError.isInstance(error)
        ? error
        : new TroupeError(
            'TROUPE_STORE_UNAVAILABLE',
            'Channel state could not be written; it stays in memory and is retried.',
            {
              retryable: true,
              cause: error,
            },
          );
      logger.error({ err: failure, channels: batch.length }, failure.message);
      this.options.onError(failure, undefined);
      // Written behind: retry on a timer. Otherwise the next explicit flush (passivation, stop) retries.
      if (!this.timer && this.options.writeBehind !== false) {
        this.timer = clock.setTimer(clock.now() + Math.max(1000, this.options.flushIntervalMs ?? 250), () => {
          this.timer = undefined;
          void this.flush();
        });
      }
      throw failure;
    }
  }

  private async writeWakeups(
    batch: { key: string; wakeAt: number | undefined }[],
    at: number,
  ): Promise<void> {
    const writes = batch.flatMap((b) =>
      b.wakeAt !== undefined ? [{ key: b.key, value: { wakeAt: b.wakeAt } }] : [],
    );
    if (writes.length === 0) return;
    await this.options.documents.putMany(WAKEUPS, writes, at);
    for (const w of writes) this.wakeVersions.set(w.key, 1);
  }

  private async removeWakeups(batch: { key: string }[]): Promise<void> {
    for (const b of batch) {
      if (!this.wakeVersions.has(b.key)) continue;
      this.wakeVersions.delete(b.key);
      await this.options.documents.delete(WAKEUPS, b.key);
    }
  }

  /** Every stored wake-up (on start: channels with deadlines that must fire even if nobody writes). */
  async wakeups(): Promise<{ key: string; wakeAt: number }[]> {
    const out: { key: string; wakeAt: number }[] = [];
    let afterKey: string | undefined;
    for (;;) {
      const page = await this.options.documents.list<{ wakeAt?: unknown }>(WAKEUPS, {
        limit: 1000,
        ...(afterKey !== undefined ? { afterKey } : {}),
      });
      for (const doc of page) {
        const wakeAt = doc.value?.wakeAt;
        if (typeof wakeAt === 'number') {
          out.push({ key: doc.key, wakeAt });
          this.wakeVersions.set(doc.key, doc.version);
        }
      }
      if (page.length < 1000) return out;
      afterKey = page[page.length - 1]?.key;
    }
  }

  /** Cancels the pending flush timer (the runtime flushes explicitly on stop). */
  dispose(): void {
    if (this.timer) this.options.clock.clearTimer(this.timer);
    this.timer = undefined;
  }
}
