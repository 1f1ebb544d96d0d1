import type { FloorSnapshot } from '../floor/floorSnapshotSchema.js';
import type { FloorEvent } from '../floor/floorTypes.js';
import type { Logger } from '../logging/logger.js';
import type { Clock, TimerHandle } from '../ports/clock.js';
import type { HistoryEntry, HistoryWriter } from '../ports/history.js';
import type { DocumentOperation, DocumentStore, StoredDocument } from '../ports/store.js';
import { TroupeError } from '../ports/troupeError.js';
import {
  LEDGER,
  type LedgerEntry,
  ledgerEntrySchema,
  ledgerKey,
  ledgerPrefix,
  parseLedgerKey,
} from './channelLedger.js';
import type { UnfoldedHistory } from './unfoldedHistory.js';

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
  | {
      kind: 'restored';
      document: ChannelDocument;
      /** The floor events stored in its ledger since the snapshot, in order: replay them onto it. */
      events: FloorEvent[];
    }
  | { kind: 'invalid'; error: TroupeError };

/** One stored ledger entry of a channel, with the snapshot version it follows. */
export interface StoredLedgerEntry {
  key: string;
  version: number;
  value: unknown;
}

/** What the store holds for a channel: its snapshot and every ledger entry, as stored. */
export interface StoredChannel {
  snapshot: StoredDocument<unknown> | undefined;
  /** In key order (entries of older snapshots, not yet deleted, included). */
  entries: StoredLedgerEntry[];
}

/** Every ledger entry stored for a channel, in key order. */
async function readLedger(documents: DocumentStore, key: string): Promise<StoredLedgerEntry[]> {
  const out: StoredLedgerEntry[] = [];
  const keyPrefix = ledgerPrefix(key);
  let afterKey: string | undefined;
  for (;;) {
    const page = await documents.list<unknown>(LEDGER, {
      keyPrefix,
      limit: 1000,
      ...(afterKey !== undefined ? { afterKey } : {}),
    });
    for (const doc of page) {
      const at = parseLedgerKey(key, doc.key);
      if (at) out.push({ key: doc.key, version: at.version, value: doc.value });
    }
    if (page.length < 1000) return out;
    afterKey = page[page.length - 1]?.key;
  }
}

/** Reads a channel's snapshot and ledger entries, changing nothing. */
export async function readStoredChannel(documents: DocumentStore, key: string): Promise<StoredChannel> {
  const [snapshot, entries] = await Promise.all([
    documents.get<unknown>(CHANNELS, key),
    readLedger(documents, key),
  ]);
  return { snapshot, entries };
}

/**
 * What a channel's stored parts amount to: nothing, a document with the ledger events written
 * after it (entries of older snapshots were folded into it already), or something that does not
 * validate. The floor itself is validated later, by `ChannelFloor.restore`.
 */
export function parseStoredChannel(key: string, stored: StoredChannel): LoadedChannel {
  const { snapshot, entries } = stored;
  if (!snapshot) return { kind: 'fresh' };
  const value = snapshot.value as Partial<ChannelDocument> | null | undefined;
  const floor = value?.floor;
  const spoken = Array.isArray(value?.spoken) ? value.spoken : undefined;
  const seenRaw = value?.seen;
  const seen = Array.isArray(seenRaw) ? seenRaw.filter((id): id is string => typeof id === 'string') : [];
  const events: FloorEvent[] = [];
  let valid = typeof floor === 'object' && floor !== null && spoken !== undefined;
  for (const entry of entries) {
    if (entry.version !== snapshot.version) continue;
    const parsed = ledgerEntrySchema.safeParse(entry.value);
    if (!parsed.success) valid = false;
    else events.push(...(parsed.data.events as FloorEvent[]));
  }
  if (!valid)
    return {
      kind: 'invalid',
      error: new TroupeError(
        'TROUPE_SNAPSHOT_INVALID',
        `The stored state of channel ${key} is not a valid Troupe channel document; it was moved to "${QUARANTINE}" and the channel starts fresh.`,
      ),
    };
  return {
    kind: 'restored',
    document: { floor: floor as FloorSnapshot, spoken: spoken as ChannelDocument['spoken'], seen },
    events,
  };
}

/** What persistence asks for a channel's stored form (the channel actor), at flush time. */
export interface DocumentSource {
  document(): { document: ChannelDocument; wakeAt: number | undefined };
  /** When a restarted runtime must wake the channel (as `document().wakeAt`, without a snapshot). */
  wakeAt(): number | undefined;
}

/** The ledger entries stored after a channel's snapshot. */
interface StoredLedger {
  /** Events in them (the snapshot is written again, folding them in, past {@link ChannelPersistence} `ledgerLimit`). */
  events: number;
  /** Their keys, to delete once a newer snapshot holds them. */
  keys: string[];
  /** The channel that wrote them, to fold them into a snapshot when it is no longer dirty. */
  source?: DocumentSource;
}

/** A flush waiting for the one before it: requests made meanwhile join it. */
interface QueuedFlush {
  /** The channels to write; undefined: every dirty one. */
  keys: Set<string> | undefined;
  /** Write whole snapshots (folding the ledger in), not ledger entries. */
  compact: boolean;
  done: Promise<void>;
  /** Resolves once the flush's writes have been handed to the store (stored or not). */
  issued: Promise<void>;
}

/** A channel's changes taken for a write: put back if it fails. */
interface Pending {
  key: string;
  source: DocumentSource;
  events: FloorEvent[];
}

/**
 * Events a channel's ledger holds at most before the next write folds them into a snapshot. A
 * snapshot costs about as much as 15 ledger writes (and deletes those it folds in); a restore
 * after a crash replays at most this many events (about 5 ms a channel). Passivation and stop
 * fold the ledger in any case.
 */
export const DEFAULT_LEDGER_LIMIT = 256;

/**
 * Persists channel actors' state with compare-and-set, so a process never overwrites a newer
 * state another wrote. Over a store that outlives the process (`writeBehind`), changes are
 * written as they happen, batched (one store write per flush interval, not one per event): the
 * floor events applied since the stored snapshot go into the channel's ledger, a few small
 * entries, and the whole snapshot is written again only when the ledger has grown past
 * `ledgerLimit` events or the channel is passivated, retired or stopped. A channel about to send a
 * reply is flushed at once first, so the outbox never knows a turn the stored floor (snapshot and
 * ledger) does not (no summon turn lost or spent twice). Over a store that dies with the process
 * (memory) there is no restart to prepare for: a channel is written only when flushed explicitly
 * (passivation, retirement, stop), which is when anything reads it back.
 */
export class ChannelPersistence {
  private readonly dirty = new Map<string, DocumentSource>();
  private readonly versions = new Map<string, number>();
  private readonly wakeVersions = new Map<string, number>();
  /** Events applied but not yet stored, per channel (written behind only). */
  private readonly pending = new Map<string, FloorEvent[]>();
  private readonly ledgers = new Map<string, StoredLedger>();
  /** The wake-up last stored per channel (undefined: none), so a ledger write skips an unchanged one. */
  private readonly storedWakeAt = new Map<string, number | undefined>();
  /**
   * The dirty channels a timed flush looks at: those it found with only redeliverable changes are
   * left out until they change again (left for their next write). A timed flush walks this set,
   * not every dirty channel: those left behind were walked past again at every flush.
   */
  private readonly forTimedFlush = new Set<string>();
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
      /** Events a ledger holds before the next write is a whole snapshot (default 256; 0: always snapshots). */
      ledgerLimit?: number;
      /** Told about every store failure (the runtime publishes it on `errors$`). */
      onError: (error: TroupeError, key: string | undefined) => void;
      /** A channel whose stored state moved on without us (another process wrote it). */
      onConflict: (key: string) => void;
      /**
       * Told about each flush a timer starts (the write-behind interval, a retry), so the runtime
       * counts it as work in flight: nothing waits for it otherwise.
       */
      onTimedFlush?: (done: Promise<void>) => void;
      /**
       * History lines that ride the channels' ledgers (see {@link UnfoldedHistory}): a snapshot
       * that folds a channel's ledger writes its lines to `store` in the same commit. Only for a
       * store that keeps writes in order.
       */
      history?: { unfolded: UnfoldedHistory; store: HistoryWriter } | undefined;
    },
  ) {}

  private get ledgerLimit(): number {
    return this.options.writeBehind === false ? 0 : (this.options.ledgerLimit ?? DEFAULT_LEDGER_LIMIT);
  }

  /**
   * Reads a channel with its ledger; a document or ledger entry that does not validate is
   * quarantined, never overwritten.
   */
  async load(key: string): Promise<LoadedChannel> {
    // A channel retired a moment ago may still be being written: read what it left, not older state.
    await this.flushing;
    const stored = await readStoredChannel(this.options.documents, key);
    const loaded = parseStoredChannel(key, stored);
    const { snapshot, entries } = stored;
    if (loaded.kind === 'fresh') {
      // Entries of a channel whose snapshot is gone (expired, quarantined) belong to no floor.
      await this.deleteEntries(entries.map((e) => e.key));
      this.versions.set(key, 0);
      this.ledgers.delete(key);
      return loaded;
    }
    const version = snapshot?.version ?? 0;
    const current = entries.filter((e) => e.version === version);
    if (loaded.kind === 'invalid') {
      const ledger = current.map((e) => e.value);
      await this.quarantine(
        key,
        ledger.length > 0 ? { document: snapshot?.value, ledger } : snapshot?.value,
        version,
      );
      return loaded;
    }
    // Entries of older snapshots were folded in already.
    await this.deleteEntries(entries.filter((e) => e.version !== version).map((e) => e.key));
    this.versions.set(key, version);
    this.ledgers.set(key, { events: loaded.events.length, keys: current.map((e) => e.key) });
    return loaded;
  }

  private async deleteEntries(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((k) => this.options.documents.delete(LEDGER, k)));
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
    await this.deleteEntries((await readLedger(documents, key)).map((e) => e.key));
    this.versions.set(key, 0);
    this.ledgers.delete(key);
  }

  /**
   * Notes that a channel changed; `source` is asked at flush time, so many changes cost one write.
   * `event`, the floor event that changed it, goes to the channel's ledger (written behind only).
   */
  markDirty(key: string, source: DocumentSource, event?: FloorEvent): void {
    this.forTimedFlush.add(key);
    if (this.dirty.get(key) !== source) this.dirty.set(key, source);
    if (event && this.ledgerLimit > 0) {
      const events = this.pending.get(key);
      if (events) events.push(event);
      else this.pending.set(key, [event]);
    }
    if (!this.timer && this.options.writeBehind !== false) {
      const { clock } = this.options;
      this.timer = clock.setTimer(clock.now() + (this.options.flushIntervalMs ?? 250), () => {
        this.timer = undefined;
        this.timedFlush();
      });
    }
  }

  /**
   * Writes a channel's whole snapshot, folding its ledger in, when it has changes or ledger
   * entries (passivation, retirement): afterwards the snapshot alone is its stored state.
   */
  compact(key: string, source: DocumentSource): Promise<void> {
    const ledger = this.ledgers.get(key);
    if (ledger && ledger.events > 0 && !this.dirty.has(key)) this.dirty.set(key, source);
    return this.flush([key], { compact: true });
  }

  /** A flush started by a timer: reported as work (its failure is handled by the flush itself). */
  private timedFlush(): void {
    const done = this.flush().catch(() => undefined);
    this.options.onTimedFlush?.(done);
  }

  /** Stops tracking a channel (after a conflict, its in-memory state is dropped). */
  forget(key: string): void {
    this.forTimedFlush.delete(key);
    this.dirty.delete(key);
    this.versions.delete(key);
    this.wakeVersions.delete(key);
    this.pending.delete(key);
    this.ledgers.delete(key);
    this.storedWakeAt.delete(key);
    this.options.history?.unfolded.forget(key);
  }

  /** True if the channel has changes not yet written. */
  isDirty(key: string): boolean {
    return this.dirty.has(key);
  }

  /**
   * Writes pending changes (of `keys` only, if given) and resolves when they are stored: as ledger
   * entries, or (`compact`, and whenever a ledger is full) as whole snapshots. Flushes run one at a
   * time; requests made while one waits its turn join it (one store write for all the channels
   * about to send in the same tick). A store failure keeps the changes pending and reports the
   * error.
   */
  flush(keys?: readonly string[], options: { compact?: boolean } = {}): Promise<void> {
    return this.enqueue(keys, options.compact ?? false).done;
  }

  /**
   * As {@link ChannelPersistence.flush} of `keys`, but resolves once the writes have been handed
   * to the store, before they are stored (and whether they are or not). On a store that keeps
   * every write in the order it was made, whatever is written after this resolves is stored with
   * these writes or after them: a reply recorded then joins the floor's commit instead of waiting
   * for it.
   */
  flushIssued(keys: readonly string[]): Promise<void> {
    return this.enqueue(keys, false).issued;
  }

  /** The flush that `keys` join: the one waiting its turn, or a new one queued behind the current. */
  private enqueue(keys: readonly string[] | undefined, compact: boolean): QueuedFlush {
    const queued = this.queued;
    if (queued) {
      if (!keys) queued.keys = undefined;
      else if (queued.keys) for (const k of keys) queued.keys.add(k);
      queued.compact ||= compact;
      return queued;
    }
    let markIssued = () => {};
    const issued = new Promise<void>((resolve) => {
      markIssued = resolve;
    });
    const next: QueuedFlush = { keys: keys ? new Set(keys) : undefined, compact, done: issued, issued };
    next.done = this.flushing.then(() => {
      if (this.queued === next) this.queued = undefined;
      // `write` hands its batches to the store before its first wait.
      const written = this.write(next.keys ? [...next.keys] : undefined, next.compact);
      markIssued();
      return written;
    });
    this.queued = next;
    this.flushing = next.done.catch(() => undefined);
    return next;
  }

  private async write(keys: readonly string[] | undefined, compact: boolean): Promise<void> {
    // A compaction also folds the ledger of a channel that is not dirty (its changes may have
    // gone out in the ledger write just before): after it, the snapshot alone is the state.
    const unfolded = (k: string) => {
      const ledger = compact ? this.ledgers.get(k) : undefined;
      return ledger !== undefined && ledger.events > 0 && ledger.source !== undefined;
    };
    // Only a compaction looks past the dirty channels (a timed flush ran over every channel's
    // ledger to pick none of them); a timed flush, past those it left behind.
    const candidates =
      keys ??
      (compact
        ? [...this.dirty.keys(), ...[...this.ledgers.keys()].filter((k) => !this.dirty.has(k))]
        : [...this.forTimedFlush]);
    const timed = keys === undefined && !compact;
    const picked = candidates.filter(
      (k) => (this.dirty.has(k) || unfolded(k)) && !(timed && this.leaveBehind(k)),
    );
    if (picked.length === 0) return;
    const appends: Pending[] = [];
    const snapshots: Pending[] = [];
    for (const key of picked) {
      const source = (this.dirty.get(key) ?? this.ledgers.get(key)?.source) as DocumentSource;
      this.dirty.delete(key);
      this.forTimedFlush.delete(key);
      const events = this.pending.get(key) ?? [];
      this.pending.delete(key);
      const ledger = this.ledgers.get(key);
      const fits =
        !compact &&
        events.length > 0 &&
        ledger !== undefined &&
        (this.versions.get(key) ?? 0) > 0 &&
        ledger.events + events.length <= this.ledgerLimit;
      (fits ? appends : snapshots).push({ key, source, events });
    }
    // Each part puts back what it could not write; the first failure is reported. Most flushes
    // (a reply's) have one part: awaited alone.
    let failure: unknown;
    let failed = false;
    const note = (error: unknown) => {
      if (!failed) failure = error;
      failed = true;
    };
    if (appends.length > 0 && snapshots.length > 0)
      await Promise.all([
        this.appendLedgers(appends).catch(note),
        this.writeSnapshots(snapshots).catch(note),
      ]);
    else if (appends.length > 0) await this.appendLedgers(appends).catch(note);
    else await this.writeSnapshots(snapshots).catch(note);
    if (!failed) return;
    const error = TroupeError.isInstance(failure) ? failure : this.unavailable(failure);
    this.failed(error, picked.length);
    throw error;
  }

  /** {@link ChannelPersistence.onlyRedeliverable}, remembered until the channel changes or is written. */
  private leaveBehind(key: string): boolean {
    if (!this.onlyRedeliverable(key)) return false;
    this.forTimedFlush.delete(key);
    return true;
  }

  /**
   * True when a channel's unwritten changes are only replies delivered (with no mentions), its
   * state is stored, and its next deadline comes no earlier than its stored wake-up: a timed flush
   * then leaves it for the channel's next write (a reply, a message, passivation, stop), sparing a
   * write per reply. Nothing is lost if the process dies first: loading the channel finds those
   * turns in flight with their replies settled in the outbox and applies each delivery again, the
   * same event (the settlement's time, message id and text), and the stored wake-up still comes
   * before any deadline the deliveries set.
   */
  private onlyRedeliverable(key: string): boolean {
    const events = this.pending.get(key);
    const source = this.dirty.get(key);
    if (!events || events.length === 0 || !source || (this.versions.get(key) ?? 0) === 0) return false;
    for (const e of events) if (e.type !== 'turn.delivered' || (e.mentions?.length ?? 0) > 0) return false;
    if (!this.storedWakeAt.has(key)) return false;
    const stored = this.storedWakeAt.get(key);
    const wakeAt = source.wakeAt();
    return wakeAt === undefined || (stored !== undefined && wakeAt >= stored);
  }

  /** Puts back changes a failed write took (before any made since). */
  private keepPending(key: string, source: DocumentSource, events: FloorEvent[]): void {
    if (!this.versions.has(key)) return; // forgotten after a conflict
    if (!this.dirty.has(key)) this.dirty.set(key, source);
    this.forTimedFlush.add(key);
    if (events.length > 0) this.pending.set(key, [...events, ...(this.pending.get(key) ?? [])]);
  }

  private unavailable(error: unknown): TroupeError {
    return new TroupeError(
      'TROUPE_STORE_UNAVAILABLE',
      'Channel state could not be written; it stays in memory and is retried.',
      { retryable: true, cause: error },
    );
  }

  private failed(error: unknown, channels: number): void {
    const { clock, logger } = this.options;
    const failure = TroupeError.isInstance(error) ? error : this.unavailable(error);
    logger.error({ err: failure, channels }, failure.message);
    this.options.onError(failure, undefined);
    // Written behind: retry on a timer. Otherwise the next explicit flush (passivation, stop) retries.
    if (!this.timer && this.options.writeBehind !== false) {
      this.timer = clock.setTimer(clock.now() + Math.max(1000, this.options.flushIntervalMs ?? 250), () => {
        this.timer = undefined;
        this.timedFlush();
      });
    }
  }

  /**
   * One ledger entry per channel (created, never overwritten: a process that lost the channel
   * conflicts), with the channel's wake-up when it came earlier, all in one atomic batch.
   *
   * Between snapshots the stored wake-up only has to come no later than the channel's next
   * deadline (what a restart must not miss): it is written when the deadline moves earlier, and
   * left as it is when the deadline moves later or goes away. An early wake finds nothing due and
   * the channel sleeps again; the snapshot written when it is compacted stores the exact wake-up.
   * Most turns move a deadline later, so most ledger writes carry no wake-up write.
   */
  private async appendLedgers(batch: Pending[]): Promise<void> {
    if (batch.length === 0) return;
    const at = this.options.clock.now();
    const writes = batch.map((b) => {
      const ledger = this.ledgers.get(b.key) as StoredLedger;
      const entryKey = ledgerKey(b.key, this.versions.get(b.key) as number, ledger.keys.length + 1);
      const wakeAt = b.source.wakeAt();
      const stored = this.storedWakeAt.get(b.key);
      const moved =
        wakeAt !== undefined && (!this.storedWakeAt.has(b.key) || stored === undefined || wakeAt < stored);
      const entry: LedgerEntry = { events: b.events };
      const op: DocumentOperation = {
        op: 'put',
        collection: LEDGER,
        key: entryKey,
        value: entry,
        expectedVersion: 0,
      };
      const ops = moved && wakeAt !== undefined ? [...this.wakeupOps(b.key, wakeAt), op] : [op];
      return { key: b.key, source: b.source, events: b.events, wakeAt, moved, ops };
    });
    const written = await this.writeBatch(writes, at);
    writes.forEach((w, i) => {
      if (!written[i]) return;
      const ledger = this.ledgers.get(w.key) as StoredLedger;
      ledger.events += w.events.length;
      ledger.keys.push((w.ops[w.ops.length - 1] as { key: string }).key);
      ledger.source = w.source;
      if (w.moved) this.storedWakeAt.set(w.key, w.wakeAt);
    });
  }

  /**
   * Whole snapshots (compare-and-set) with their wake-ups in one batch, and with them the deletes
   * of the ledger entries they fold in (all or nothing: never a snapshot beside entries it holds).
   */
  private async writeSnapshots(picked: Pending[]): Promise<void> {
    if (picked.length === 0) return;
    const at = this.options.clock.now();
    const writes = picked.map((p) => {
      const { document, wakeAt } = p.source.document();
      const op: DocumentOperation = {
        op: 'put',
        collection: CHANNELS,
        key: p.key,
        value: document,
        expectedVersion: this.versions.get(p.key) ?? 0,
      };
      const folded: DocumentOperation[] = (this.ledgers.get(p.key)?.keys ?? []).map((key) => ({
        op: 'delete',
        collection: LEDGER,
        key,
      }));
      // The snapshot last: a channel's result is its last write's.
      return { ...p, wakeAt, moved: true, ops: [...folded, ...this.wakeupOps(p.key, wakeAt), op] };
    });
    const lines = this.writeLines(picked);
    let written: (number | undefined)[];
    try {
      written = await this.writeBatch(writes, at);
    } catch (error) {
      // Not stored (the commit failed): the lines are still the ledger's, as the events are.
      for (const [key, taken] of lines) this.options.history?.unfolded.putBack(key, taken);
      throw error;
    }
    writes.forEach((w, i) => {
      const version = written[i];
      if (version === undefined) return;
      this.versions.set(w.key, version);
      this.storedWakeAt.set(w.key, w.wakeAt);
      this.ledgers.set(w.key, { events: 0, keys: [] });
    });
    await this.removeWakeups(writes.filter((w, i) => written[i] !== undefined && w.wakeAt === undefined));
  }

  /**
   * Writes the history lines of the channels whose ledgers these snapshots fold, before them: on
   * a store that keeps writes in order they join the snapshots' commit. Returns what was taken.
   */
  private writeLines(picked: readonly Pending[]): Map<string, HistoryEntry[]> {
    const taken = new Map<string, HistoryEntry[]>();
    const history = this.options.history;
    if (!history) return taken;
    for (const { key } of picked) {
      const lines = history.unfolded.take(key);
      if (lines.length === 0) continue;
      taken.set(key, lines);
      this.writeMany(history.store, key, lines);
    }
    return taken;
  }

  /** A channel's lines in one write when the store can; a line it refuses takes no other with it. */
  private writeMany(store: HistoryWriter, key: string, lines: HistoryEntry[]): void {
    if (store.appendMany) {
      try {
        store.appendMany(lines);
        return;
      } catch (error) {
        this.options.logger.warn(
          { err: error, channel: key },
          'history lines refused together; writing each',
        );
      }
    }
    for (const line of lines) this.writeLine(store, line);
  }

  private writeLine(store: HistoryWriter, line: HistoryEntry): void {
    const refused = (error: unknown) =>
      this.options.logger.warn({ err: error, channel: line.channelId }, 'history line not written');
    try {
      if (store.appendNow) store.appendNow(line);
      else store.append(line).catch(refused);
    } catch (error) {
      refused(error);
    }
  }

  /** The write of a channel's wake-up, if it has one (in the batch before its state: never a thread nothing wakes). */
  private wakeupOps(key: string, wakeAt: number | undefined): DocumentOperation[] {
    return wakeAt === undefined ? [] : [{ op: 'put', collection: WAKEUPS, key, value: { wakeAt } }];
  }

  /**
   * Writes every channel's operations in one atomic batch; when one channel moved on elsewhere (a
   * conflict), each channel's on its own, dropping that one. Returns, per channel, the version of
   * its last write (undefined: not written). A failure puts every unwritten channel's changes back.
   */
  private async writeBatch(
    writes: (Pending & { ops: DocumentOperation[] })[],
    at: number,
  ): Promise<(number | undefined)[]> {
    const { documents } = this.options;
    const last = (results: (number | boolean)[]) => results[results.length - 1] as number;
    try {
      const results = await documents.batch(
        writes.flatMap((w) => w.ops),
        at,
      );
      let end = 0;
      for (const w of writes) for (const o of w.ops) if (o.op === 'put') this.noteWake(w.key, o);
      return writes.map((w) => {
        end += w.ops.length;
        return results[end - 1] as number;
      });
    } catch (error) {
      if (!TroupeError.isInstance(error) || error.code !== 'TROUPE_STORE_CONFLICT') {
        for (const w of writes) this.keepPending(w.key, w.source, w.events);
        throw error;
      }
    }
    const failures: unknown[] = [];
    const versions = await Promise.all(
      writes.map(async (w) => {
        try {
          const results = await documents.batch(w.ops, at);
          for (const o of w.ops) if (o.op === 'put') this.noteWake(w.key, o);
          return last(results);
        } catch (error) {
          if (!this.conflicted(error, w.key)) {
            this.keepPending(w.key, w.source, w.events);
            failures.push(error);
          }
          return undefined;
        }
      }),
    );
    if (failures.length > 0) throw failures[0];
    return versions;
  }

  /** True (and the channel dropped) when `error` says another process wrote the channel first. */
  private conflicted(error: unknown, key: string): boolean {
    if (!TroupeError.isInstance(error) || error.code !== 'TROUPE_STORE_CONFLICT') return false;
    this.options.logger.warn(
      { channel: key },
      'channel state changed in the store since it was loaded; reloading it',
    );
    this.options.onError(error, key);
    this.forget(key);
    this.options.onConflict(key);
    return true;
  }

  /** Remembers that a channel's wake-up is stored (to delete it once nothing is due). */
  private noteWake(key: string, op: DocumentOperation): void {
    if (op.collection === WAKEUPS) this.wakeVersions.set(key, 1);
  }

  private async removeWakeups(batch: { key: string }[]): Promise<void> {
    const gone = batch.filter((b) => this.wakeVersions.delete(b.key));
    // All at once: a store that groups the writes of a tick commits them together.
    await Promise.all(gone.map((b) => this.options.documents.delete(WAKEUPS, b.key)));
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
