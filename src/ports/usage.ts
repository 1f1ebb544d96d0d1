/**
 * What a model call is for: an avatar's answer, its summon greeting or follow-up, writing a new
 * avatar's persona when summoning creates it, or one of the email assistant's calls (triage, a
 * step of its agent, a preference-memory update).
 */
export type UsagePurpose =
  | 'turn'
  | 'greeting'
  | 'follow-up'
  | 'avatar-creation'
  | 'triage'
  | 'agent-step'
  | 'memory-update';

/** Who a model call spoke for: an avatar (by id) or the email assistant. */
export type UsageSpender = { kind: 'avatar'; id: string } | { kind: 'email' };

/** One model call, as the usage ledger records it. */
export interface ModelCallUsage {
  /** When the call ended (epoch ms). */
  at: number;
  /** `provider:model`, e.g. `openai:gpt-4o-mini` or `offline:scripted`. */
  model: string;
  spender: UsageSpender;
  /** The channel (`kind:id`) or mailbox (`mail:<address>`) the call was made for. */
  scope: string;
  purpose: UsagePurpose;
  /**
   * Tokens the provider reported. Both absent when it reported none: such a call is counted as a
   * call without usage, never as zero tokens.
   */
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  /** Characters the call wrote (the one measure an offline model has). */
  characters: number;
}

/** Sums over model calls. */
export interface UsageTotals {
  calls: number;
  /** Calls whose provider reported no token usage (their tokens and cost are unknown). */
  callsWithoutUsage: number;
  inputTokens: number;
  outputTokens: number;
  characters: number;
  /** Estimated cost in USD of the calls with usage and a known price. */
  costUsd: number;
  /** Calls with usage but no price for their model (not in `costUsd`). */
  unpricedCalls: number;
}

/** How usage rows are grouped. */
export type UsageGrouping = 'avatar' | 'channel' | 'purpose' | 'model';

/** One group of a usage report. */
export interface UsageRow extends UsageTotals {
  /** The group's key: an avatar id (or `email`), a channel or mailbox, a purpose or a model. */
  key: string;
}

/** One daily cap with what of it the UTC day has used. */
export interface CapUse {
  /** `avatar` (one avatar's cap; `avatar` names it) or `total` (every call). */
  scope: 'avatar' | 'total';
  avatar?: string;
  measure: 'tokens' | 'costUsd';
  limit: number;
  used: number;
}

/** One avatar's UTC day: its usage, each daily cap with its use, and the cap that stops it now, if any. */
export interface AvatarDayUsage {
  id: string;
  name: string;
  totals: UsageTotals;
  caps: CapUse[];
  /** The daily cap that keeps it from another turn now (as the floor's spend gate answers), or null. */
  capped: { reason: string; detail: string; resetsAt: number } | null;
}

/** The UTC day's usage as a runtime's ledger holds it, with the daily caps, for every surface. */
export interface DayUsage {
  /** The UTC day, `2026-11-28`. */
  day: string;
  avatars: AvatarDayUsage[];
  /** Every call of the day (avatars and the email assistant). */
  total: UsageTotals;
  totalCaps: CapUse[];
}
