import type { ModelPrices } from '../../config/modelPrices.js';
import { type Logger, silentLogger } from '../../logging/logger.js';
import type { Clock } from '../../ports/clock.js';
import type { DocumentStore, StoredDocument } from '../../ports/store.js';
import { describe, TroupeError } from '../../ports/troupeError.js';
import type { ModelCallUsage, UsageRow, UsageTotals } from '../../ports/usage.js';
import { systemClock } from '../clock.js';
import {
  avatarOf,
  type BucketParts,
  bucketKeyOf,
  bucketPartsOf,
  bucketValue,
  DAY_MS,
  dayPrefix,
  HOUR_MS,
  hourStart,
  hourText,
  USAGE_COLLECTION,
  type UsageBucketValue,
  usageBucketSchema,
} from './usageBucket.js';
import { UsageDay } from './usageDay.js';
import type { UsageLedger, UsageReportOptions } from './usageLedger.js';
import { groupUsage } from './usageReport.js';
import { addTotals, callTotals, emptyTotals } from './usageTotals.js';

/** How {@link createUsageLedger} stores and prices usage. */
export interface StoredUsageLedgerOptions {
  /** Where the hourly buckets live (any store: memory, SQLite, MongoDB). */
  store: DocumentStore;
  /** Prices in USD per million tokens (see `modelPricesFromEnv`). */
  prices: ModelPrices;
  /** Where a failed write is logged (warn). Default: silent. */
  logger?: Logger;
  /** `until` of a report when none is given. Default: the system clock. */
  clock?: Clock;
  /** The collection of the buckets. Default `usage`. */
  collection?: string;
  /**
   * Runs the coalesced write soon after a record. Default: 1 s later (real time, a timer that
   * does not keep the process alive): every call recorded meanwhile is one write per bucket.
   */
  scheduleFlush?: (flush: () => void) => void;
  /**
   * How long stored buckets are kept after their hour (default 35 days: a month of reports);
   * `Infinity` keeps them all. Each (hour, spender, channel, purpose, model) with calls is a
   * document, so without a limit the collection (and a memory store's heap) grows every hour.
   */
  retentionMs?: number;
  /**
   * Also deletes expired buckets itself, after a flush, at most once per this many ms of its
   * clock (the first flush included). For a ledger no runtime sweeps: a runtime's hourly sweep
   * calls `expire` on its own ledger, but the email assistant's, on its own, would grow for ever.
   * Default: never (the owner calls `expire`).
   */
  expireEveryMs?: number;
}

/** Stored buckets are kept this long after their hour by default. */
export const USAGE_RETENTION_MS = 35 * 86_400_000;

/** A bucket's key: its UTC hour first (`2026-11-28T13|…`). */
const BUCKET_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}\|/u;

/**
 * How long recorded calls wait to be written (real time, not held open): under load every call of
 * that window is one write per bucket, not one per call; a crash loses at most that window. A
 * second: the caps read the ledger in memory, so only another process sharing the store (and a
 * crash) sees the window, and a longer one folds more calls into each bucket's write.
 */
const FLUSH_DELAY_MS = 1000;

function flushSoon(flush: () => void): void {
  setTimeout(flush, FLUSH_DELAY_MS).unref();
}

/** A bucket with calls recorded here and not yet stored. */
interface PendingBucket {
  key: string;
  parts: BucketParts;
  dayIndex: number;
  delta: UsageTotals;
}

/** Writes of one bucket that lost the compare-and-set to another process before giving up (for now). */
const MAX_CONFLICTS = 8;
/** Days whose totals stay in memory: today, and two before (calls that end just after midnight). */
const DAYS_KEPT = 3;

/**
 * How long a ledger on a store that does not outlive the process needs its buckets: the days whose
 * totals it keeps in memory (a month of reports is no use to a process that forgets at exit).
 */
export const USAGE_RETENTION_IN_MEMORY_MS = DAYS_KEPT * DAY_MS;
const PAGE = 500;
const LATEST_DATE_MS = 8.64e15;

/**
 * A {@link UsageLedger} on the document store alone, so every store works unchanged. Each
 * (UTC hour, spender, scope, purpose, model) is one document of sums, keyed
 * `2026-11-28T13|avatar:ada|discord:123|turn|openai:gpt-4o`, so a day or an hour is one key prefix.
 * `record` adds to the day's totals in memory at once; writes are coalesced (one per bucket per
 * flush, soon after a record) and compare-and-set, so processes sharing the store add up. A write
 * that fails is logged and its calls are kept for the next flush: the caller never sees it, and
 * `flush()` never rejects. `load` and `report` reject with the store's error when it cannot be
 * read (the totals in memory stay as they were).
 */
export function createUsageLedger(options: StoredUsageLedgerOptions): UsageLedger {
  return new StoredUsageLedger(options);
}

class StoredUsageLedger implements UsageLedger {
  private readonly store: DocumentStore;
  private readonly collection: string;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly schedule: (flush: () => void) => void;
  private pending = new Map<string, PendingBucket>();
  /**
   * What this ledger last wrote (or read) of each bucket, with its version: the next write of the
   * bucket adds to it without reading, all of a flush in one batch. Today's and yesterday's only.
   */
  private readonly written = new Map<
    string,
    { version: number; dayIndex: number; value: UsageBucketValue }
  >();
  private readonly days = new Map<number, UsageDay>();
  /** Days being loaded: what is recorded meanwhile, added to what the store holds. */
  private readonly loading = new Map<number, UsageDay>();
  private latestDay = Number.NEGATIVE_INFINITY;
  private flushScheduled = false;
  private readonly retentionMs: number;
  /** When this ledger last deleted expired buckets itself (see `expireEveryMs`). */
  private expiredAt = Number.NEGATIVE_INFINITY;
  /** Writes and loads, one at a time (a load must not read while a write of the day is under way). */
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly options: StoredUsageLedgerOptions) {
    this.store = options.store;
    this.collection = options.collection ?? USAGE_COLLECTION;
    this.log = options.logger ?? silentLogger();
    this.clock = options.clock ?? systemClock;
    this.schedule = options.scheduleFlush ?? flushSoon;
    this.retentionMs = Math.max(0, options.retentionMs ?? USAGE_RETENTION_MS);
  }

  /**
   * Deletes the buckets of hours that ended more than `retentionMs` before `now`. Keys sort by
   * hour first, so only the keys before the cutoff are read; a key that is not a bucket's (written
   * by someone else) is left alone.
   */
  async expire(now: number): Promise<number> {
    if (!Number.isFinite(this.retentionMs) || !Number.isFinite(now)) return 0;
    const before = new Date(now - this.retentionMs).toISOString().slice(0, 13);
    let deleted = 0;
    let afterKey: string | undefined;
    for (;;) {
      const page = await this.store.list(this.collection, {
        limit: PAGE,
        ...(afterKey !== undefined ? { afterKey } : {}),
      });
      const old: string[] = [];
      let done = page.length < PAGE;
      for (const doc of page) {
        if (doc.key >= before) {
          done = true;
          break;
        }
        if (BUCKET_KEY.test(doc.key)) old.push(doc.key);
      }
      if (old.length > 0)
        await this.store.batch(old.map((key) => ({ op: 'delete', collection: this.collection, key })));
      deleted += old.length;
      if (done) return deleted;
      afterKey = page[page.length - 1]?.key;
    }
  }

  record(call: ModelCallUsage): void {
    try {
      this.add(call);
    } catch (error) {
      // Counting must never fail a turn.
      this.log.warn(
        { err: error, model: call?.model },
        `usage of a model call not recorded: ${describe(error)}`,
      );
    }
  }

  private add(call: ModelCallUsage): void {
    const at = Number.isFinite(call.at) ? call.at : this.clock.now();
    const totals = callTotals(call, this.options.prices);
    const hourIndex = Math.floor(at / HOUR_MS);
    const dayIndex = Math.floor(at / DAY_MS);
    const key = bucketKeyOf(call, hourIndex);
    const bucket = this.pending.get(key);
    if (bucket) addTotals(bucket.delta, totals);
    else this.pending.set(key, { key, parts: bucketPartsOf(call, hourIndex), dayIndex, delta: totals });
    const avatar = call.spender.kind === 'avatar' ? call.spender.id : undefined;
    this.dayOf(dayIndex).add(avatar, totals);
    this.loading.get(dayIndex)?.add(avatar, totals);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      this.schedule(() => {
        this.flushScheduled = false;
        void this.flush();
      });
    }
  }

  private dayOf(dayIndex: number): UsageDay {
    let day = this.days.get(dayIndex);
    if (!day) {
      day = new UsageDay();
      this.days.set(dayIndex, day);
      if (dayIndex > this.latestDay) {
        this.latestDay = dayIndex;
        for (const old of this.days.keys()) if (old <= dayIndex - DAYS_KEPT) this.days.delete(old);
        this.forgetWrittenBefore(dayIndex - 1);
      }
    }
    return day;
  }

  dayTotals(at: number, avatarId?: string): UsageTotals {
    const day = this.days.get(Math.floor(at / DAY_MS));
    const totals = avatarId === undefined ? day?.total : day?.byAvatar.get(avatarId);
    return totals ? { ...totals } : emptyTotals();
  }

  flush(): Promise<void> {
    return this.enqueue(async () => {
      await this.writePending();
      await this.expireIfDue();
    });
  }

  /** Deletes expired buckets when `expireEveryMs` has passed since it last did (a failure is logged). */
  private async expireIfDue(): Promise<void> {
    const every = this.options.expireEveryMs;
    const now = this.clock.now();
    if (every === undefined || !(now - this.expiredAt >= every)) return;
    this.expiredAt = now;
    try {
      const deleted = await this.expire(now);
      if (deleted > 0) this.log.debug({ deleted }, 'expired usage buckets deleted');
    } catch (error) {
      this.log.warn({ err: error }, `expired usage buckets not deleted: ${describe(error)}`);
    }
  }

  load(at: number): Promise<void> {
    return this.enqueue(async () => {
      await this.writePending();
      const dayIndex = Math.floor(at / DAY_MS);
      // What is not stored yet (a write that failed), and what is recorded while the store is read.
      const unstored = new UsageDay();
      for (const bucket of this.pending.values())
        if (bucket.dayIndex === dayIndex) unstored.add(avatarOf(bucket.parts.spender), bucket.delta);
      this.loading.set(dayIndex, unstored);
      try {
        const day = new UsageDay();
        for (const bucket of await this.readBuckets(dayPrefix(dayIndex), () => true))
          day.add(avatarOf(bucket.spender), bucket);
        day.addDay(unstored);
        this.dayOf(dayIndex); // marks the day as seen (older days are let go)
        this.days.set(dayIndex, day);
      } finally {
        this.loading.delete(dayIndex);
      }
    });
  }

  async report(options: UsageReportOptions): Promise<UsageRow[]> {
    // Within the dates a Date can hold, so the hours read have names.
    const from = Math.floor(Math.max(0, options.since) / HOUR_MS) * HOUR_MS;
    // By default up to now, a call recorded at this very millisecond included.
    const until = Math.min(options.until ?? this.clock.now() + 1, LATEST_DATE_MS);
    if (until <= from) return [];
    const inRange = (hour: string) => {
      const start = hourStart(hour);
      return start >= from && start < until;
    };
    const firstHour = hourText(from / HOUR_MS);
    const lastHour = hourText(Math.floor((until - 1) / HOUR_MS));
    let buckets: UsageBucketValue[] = [];
    // In the queue, after a write: no call is between memory and the store while the store is read.
    await this.enqueue(async () => {
      await this.writePending();
      buckets = await this.readBuckets('', inRange, firstHour, lastHour);
      // Calls whose write failed are not in the store yet; they count all the same.
      for (const bucket of this.pending.values())
        if (inRange(bucket.parts.hour)) buckets.push({ ...bucket.parts, ...bucket.delta });
    });
    const purposes = options.purposes;
    if (purposes) buckets = buckets.filter((bucket) => purposes.includes(bucket.purpose));
    return groupUsage(buckets, options.by);
  }

  /** Runs `task` after every write and load before it; the queue goes on if it fails. */
  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Buckets stored under `prefix` for which `keep(hour)` holds; with `firstHour`, from that hour on
   * and up to `lastHour` (keys sort by hour first).
   */
  private async readBuckets(
    prefix: string,
    keep: (hour: string) => boolean,
    firstHour?: string,
    lastHour?: string,
  ): Promise<UsageBucketValue[]> {
    const out: UsageBucketValue[] = [];
    // Keys of an hour start with `<hour>|`, which sorts after `<hour>` alone.
    let afterKey = firstHour;
    for (;;) {
      const page: StoredDocument[] = await this.store.list(this.collection, {
        limit: PAGE,
        ...(prefix !== '' ? { keyPrefix: prefix } : {}),
        ...(afterKey !== undefined ? { afterKey } : {}),
      });
      for (const doc of page) {
        const bucket = this.readBucket(doc);
        if (lastHour !== undefined && doc.key.slice(0, 13) > lastHour) return out;
        if (bucket && keep(bucket.hour)) out.push(bucket);
      }
      const last = page.at(-1);
      if (page.length < PAGE || !last) return out;
      afterKey = last.key;
    }
  }

  private readBucket(doc: StoredDocument): UsageBucketValue | undefined {
    const parsed = usageBucketSchema.safeParse(doc.value);
    if (parsed.success) return parsed.data;
    this.log.warn(
      { collection: this.collection, key: doc.key },
      'a stored usage bucket is damaged; it is left out',
    );
    return undefined;
  }

  /** Stores every pending bucket; a bucket whose write fails stays pending (merged with newer calls). */
  private async writePending(): Promise<void> {
    if (this.pending.size === 0) return;
    const pending = [...this.pending.values()];
    this.pending = new Map();
    const batch = await this.writeAtOnce(pending);
    if (batch.length === 0) return;
    const results = await Promise.allSettled(batch.map((bucket) => this.writeBucket(bucket)));
    const failed = batch.filter((_, i) => results[i]?.status === 'rejected');
    if (failed.length === 0) return;
    for (const bucket of failed) {
      const newer = this.pending.get(bucket.key);
      if (newer) addTotals(bucket.delta, newer.delta);
      this.pending.set(bucket.key, bucket);
    }
    const error = (results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason;
    this.log.warn(
      { err: error, collection: this.collection, buckets: failed.length },
      `usage not stored yet (kept in memory, written at the next flush): ${describe(error)}`,
    );
  }

  /**
   * Writes every bucket at once (in one tick: a store that groups writes commits them together),
   * each added to what this ledger last wrote of it (a bucket it never wrote must not exist yet),
   * compare-and-set. Buckets are independent, so each stands or fails alone; returns those not
   * written (another process wrote them first, or the store failed), to write on their own,
   * reading first.
   */
  private writeAtOnce(batch: readonly PendingBucket[]): Promise<PendingBucket[]> {
    const at = this.clock.now();
    const unwritten: PendingBucket[] = [];
    // One promise for the flush, not a settled result per bucket (a flush writes thousands).
    return new Promise((resolve) => {
      let left = batch.length;
      const done = () => {
        if (--left === 0) resolve(unwritten);
      };
      for (const bucket of batch) {
        const known = this.written.get(bucket.key);
        const value = bucketValue(
          bucket.parts,
          addTotals(known ? totalsOf(known.value) : emptyTotals(), bucket.delta),
        );
        this.store.put(this.collection, bucket.key, value, { expectedVersion: known?.version ?? 0, at }).then(
          (version) => {
            this.remember(bucket, version, value);
            done();
          },
          () => {
            unwritten.push(bucket);
            done();
          },
        );
      }
      if (batch.length === 0) resolve(unwritten);
    });
  }

  private remember(bucket: PendingBucket, version: number, value: UsageBucketValue): void {
    if (bucket.dayIndex < this.latestDay - 1) return;
    this.written.set(bucket.key, { version, dayIndex: bucket.dayIndex, value });
  }

  /**
   * Lets go of what was written of days before `dayIndex`, once a new day starts (the only time a
   * bucket leaves the window). Swept every 1,024th bucket instead, a map whose size stopped on a
   * multiple of 1,024 was swept whole at every write of a flush.
   */
  private forgetWrittenBefore(dayIndex: number): void {
    for (const [key, entry] of this.written) if (entry.dayIndex < dayIndex) this.written.delete(key);
  }

  /** Adds a bucket's calls to its stored sums, compare-and-set; on a conflict, reads again and adds. */
  private async writeBucket(bucket: PendingBucket): Promise<void> {
    for (let conflicts = 0; ; conflicts++) {
      const stored = await this.store.get(this.collection, bucket.key);
      const base = stored ? this.readBucket(stored) : undefined;
      const value = bucketValue(bucket.parts, addTotals(base ? totalsOf(base) : emptyTotals(), bucket.delta));
      try {
        const version = await this.store.put(this.collection, bucket.key, value, {
          expectedVersion: stored?.version ?? 0,
          at: this.clock.now(),
        });
        this.remember(bucket, version, value);
        return;
      } catch (error) {
        const conflict = TroupeError.isInstance(error) && error.code === 'TROUPE_STORE_CONFLICT';
        if (!conflict || conflicts >= MAX_CONFLICTS) throw error;
      }
    }
  }
}

function totalsOf(bucket: UsageBucketValue): UsageTotals {
  const { calls, callsWithoutUsage, inputTokens, outputTokens, characters, costUsd, unpricedCalls } = bucket;
  return { calls, callsWithoutUsage, inputTokens, outputTokens, characters, costUsd, unpricedCalls };
}
