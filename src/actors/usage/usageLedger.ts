import type {
  ModelCallUsage,
  UsageGrouping,
  UsagePurpose,
  UsageRow,
  UsageTotals,
} from '../../ports/usage.js';

/** What a usage report covers: calls in [since, until), grouped. */
export interface UsageReportOptions {
  by: UsageGrouping;
  /** Epoch ms, inclusive (rounded down to its hour). */
  since: number;
  /** Epoch ms, exclusive; default now. */
  until?: number | undefined;
  /** Only calls of these purposes; default every call. */
  purposes?: readonly UsagePurpose[] | undefined;
}

/**
 * Every model call's usage: recorded at once in memory (so caps see it before the next turn),
 * stored shortly after through the document store, and aggregated per hour and per UTC day.
 */
export interface UsageLedger {
  /** Records one call; its estimated cost comes from the ledger's price table. */
  record(call: ModelCallUsage): void;
  /**
   * Totals of the UTC day containing `at`: of one avatar, or of every call (avatars and the email
   * assistant) when `avatarId` is undefined. Includes calls other processes stored before `load`.
   */
  dayTotals(at: number, avatarId?: string): UsageTotals;
  /** Rows grouped as asked, read from the store (so other processes' calls count too). */
  report(options: UsageReportOptions): Promise<UsageRow[]>;
  /** Reads the stored totals of the day containing `at` (at start, and after a restart). */
  load(at: number): Promise<void>;
  /** Stores what is recorded but not yet stored. */
  flush(): Promise<void>;
  /**
   * Deletes the stored buckets of hours that ended longer ago than the ledger keeps them (the
   * runtime calls it hourly); resolves with how many. Optional: a ledger may keep everything.
   */
  expire?(now: number): Promise<number>;
}
