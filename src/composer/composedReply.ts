/**
 * What {@link compose} returns: the finished plain-text reply, the same reply in structured parts
 * (for channels that render tables, buttons or embeds themselves), its telemetry record and the
 * counters to increment.
 */
import type { ComposerCounter, ComposeTelemetry } from './telemetry.js';

/** How serious a reply is: a channel may colour or prefix it. */
export type ReplySeverity = 'info' | 'warning' | 'error';

/** The kind of failure an error reply reports (see `errorCategory.ts` for the code lists). */
export type ErrorCategory = 'permissions' | 'schema' | 'system';

/** A compact preview of a result set: the first rows over the columns they all share. */
export interface ReplyTable {
  /** Column names as they appear in the rows (`vendor_name`), in the first row's order. */
  keys: string[];
  /** Human column headers, one per key (`Vendor name`). */
  columns: string[];
  /** Formatted cells (numbers, dates and nulls made readable, long text clipped), one array per row. */
  rows: string[][];
  /** Rows shown. */
  shown: number;
  /** Rows that matched in all. */
  total: number;
}

/** One numbered option of a disambiguation reply. */
export interface ReplyChoice {
  /** 1-based number the user can reply with. */
  number: number;
  /** The candidate's id, to look it up once chosen. */
  id: string | number;
  /** The candidate's display name. */
  label: string;
  /** Light context that tells options apart (`Calgary`, `status open`); may be empty. */
  context: string;
}

/** The reply in parts. `text` is these parts rendered in order. */
export interface ReplyParts {
  /** The first line: what was found (with the stored name), what is ambiguous, or what went wrong. */
  summary: string;
  /** Success only: the table preview. */
  table?: ReplyTable;
  /** Disambiguation only: the numbered options (at most the configured limit). */
  choices?: ReplyChoice[];
  /** Disambiguation only: how many candidates exist in all (at least `choices.length`). */
  choicesTotal?: number;
  /** Disambiguation only: how to pick. */
  prompt?: string;
  /** Empty only: one sentence per attempt flag that was true, in the specified wording. */
  whatITried?: string[];
  /** Suggested next actions, when there are any. */
  nextSteps?: string[];
  severity: ReplySeverity;
  /** Error only: which kind of failure. */
  errorCategory?: ErrorCategory;
}

/** A composed answer. */
export interface ComposedReply {
  /** The whole reply for a plain-text (markdown-light) channel. Never empty. */
  text: string;
  parts: ReplyParts;
  telemetry: ComposeTelemetry;
  /** Counters to increment once each (see `composerCounters`). */
  counters: ComposerCounter[];
}
