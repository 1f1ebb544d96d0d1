import type { CoordinationConfig } from '../../config/coordinationConfig.js';
import type { AvatarDayUsage, DayUsage } from '../../ports/usage.js';
import type { AvatarDefinition } from '../avatarDefinition.js';
import { avatarUsageCapsOf, dailyUsageCapsOf } from './dailyUsageCaps.js';
import { dailyCapsOf, ledgerSpendGate } from './spendGate.js';
import type { UsageLedger } from './usageLedger.js';
import { avatarCapUses, capFigures, totalCapUses, totalsText } from './usageText.js';

export type { AvatarDayUsage, DayUsage };

/**
 * The day of `at` for `avatars` (each with its own caps where it sets them) from the runtime's
 * ledger, with the same figures `troupe usage` prints.
 */
export function dayUsageOf(
  ledger: UsageLedger,
  config: CoordinationConfig,
  avatars: readonly AvatarDefinition[],
  at: number,
): DayUsage {
  const caps = dailyUsageCapsOf(config);
  const gate = ledgerSpendGate(ledger, config, new Map(avatars.map((a) => [a.id, a])));
  const total = ledger.dayTotals(at);
  return {
    day: new Date(at).toISOString().slice(0, 10),
    avatars: avatars.map((a) => {
      const totals = ledger.dayTotals(at, a.id);
      return {
        id: a.id,
        name: a.name,
        totals,
        caps: avatarCapUses(caps, { id: a.id, totals, caps: avatarUsageCapsOf(dailyCapsOf(config, a)) }),
        capped: gate(a.id, at),
      };
    }),
    total,
    totalCaps: totalCapUses(caps, total),
  };
}

/** `Ada: 3 calls, 1,200 tokens, $0.0012 today; cap 1,200 of 50,000 tokens today (2.4%)`, and why it is capped. */
export function avatarDayLine(usage: AvatarDayUsage): string {
  const caps = usage.caps.map((cap) => `cap ${capFigures(cap)}`);
  const capped = usage.capped ? ` — capped: ${usage.capped.reason} (${usage.capped.detail})` : '';
  return `${usage.name}: ${[`${totalsText(usage.totals)} today`, ...caps].join('; ')}${capped}`;
}

/** `All calls: 5 calls, …; cap $0.04 of $0.50 today (8.0%)`. */
export function totalDayLine(day: DayUsage): string {
  const caps = day.totalCaps.map((cap) => `cap ${capFigures(cap)}`);
  return `All calls: ${[`${totalsText(day.total)} today`, ...caps].join('; ')}`;
}

/** The day as lines: a heading, a line per avatar, then every call together. */
export function dayUsageLines(day: DayUsage): string[] {
  return [
    `Usage today (UTC ${day.day}; costs estimated from TROUPE_MODEL_PRICES):`,
    ...day.avatars.map(avatarDayLine),
    totalDayLine(day),
  ];
}
