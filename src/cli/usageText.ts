import type { UsageGrouping, UsageRow, UsageTotals } from '../ports/usage.js';
import type { DailyUsageCaps } from './usageCaps.js';

/** One cap with what of it the UTC day has used. */
export interface CapUse {
  /** `avatar` (one avatar's cap; `avatar` names it) or `total` (every call). */
  scope: 'avatar' | 'total';
  avatar?: string;
  measure: 'tokens' | 'costUsd';
  limit: number;
  used: number;
}

const whole = (n: number) => Math.round(n).toLocaleString('en');

/** USD with enough places to show a fraction of a cent. */
export function usd(n: number): string {
  if (n === 0) return '$0';
  return n >= 1
    ? `$${n.toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`
    : `$${n.toPrecision(2)}`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${whole(n)} ${n === 1 ? one : many}`;

/** What a row's figures leave out: calls without usage, unpriced calls. */
function notes(row: UsageTotals): string {
  const out: string[] = [];
  if (row.callsWithoutUsage > 0) out.push(`${plural(row.callsWithoutUsage, 'call')} without usage`);
  if (row.unpricedCalls > 0) out.push(`${plural(row.unpricedCalls, 'call')} unpriced`);
  return out.join('; ');
}

/** The cells of one row: tokens unknown when no call of it reported any, cost unknown when none was priced. */
function cells(label: string, row: UsageTotals): string[] {
  const withUsage = row.calls - row.callsWithoutUsage;
  const priced = withUsage - row.unpricedCalls;
  return [
    label,
    whole(row.calls),
    withUsage > 0 ? whole(row.inputTokens) : '—',
    withUsage > 0 ? whole(row.outputTokens) : '—',
    whole(row.characters),
    priced > 0 || row.calls === 0 ? usd(row.costUsd) : '—',
    notes(row),
  ];
}

const HEADINGS: Record<UsageGrouping, string> = {
  avatar: 'avatar',
  channel: 'channel',
  purpose: 'purpose',
  model: 'model',
};

/** The report as an aligned table: a row per group, then the total. */
export function usageTable(by: UsageGrouping, rows: readonly UsageRow[], total: UsageTotals): string[] {
  const table = [
    [HEADINGS[by], 'calls', 'tokens in', 'tokens out', 'characters', 'cost', ''],
    ...rows.map((row) => cells(row.key, row)),
    cells('total', total),
  ];
  const widths = table[0]?.map((_, c) => Math.max(...table.map((r) => (r[c] ?? '').length))) ?? [];
  return table.map((r) =>
    r
      .map((cell, c) =>
        c === 0 || c === r.length - 1 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0),
      )
      .join('  ')
      .trimEnd(),
  );
}

/** `ada: 12,400 of 50,000 tokens today (24.8%)`. */
export function capLine(cap: CapUse): string {
  const who = cap.scope === 'avatar' ? (cap.avatar ?? '') : 'All calls';
  const share = `${((cap.used / cap.limit) * 100).toFixed(1)}%`;
  const figures =
    cap.measure === 'tokens'
      ? `${whole(cap.used)} of ${whole(cap.limit)} tokens`
      : `${usd(cap.used)} of ${usd(cap.limit)}`;
  return `${who}: ${figures} today (${share})${cap.used >= cap.limit ? ' — reached' : ''}`;
}

/** Every cap set, with the day's use: each avatar that spent today against the per-avatar caps, then the totals. */
export function capUses(
  caps: DailyUsageCaps,
  day: { total: UsageTotals; avatars: readonly { id: string; totals: UsageTotals }[] },
): CapUse[] {
  const tokens = (t: UsageTotals) => t.inputTokens + t.outputTokens;
  const out: CapUse[] = [];
  for (const { id, totals } of day.avatars) {
    if (caps.avatarTokens !== undefined)
      out.push({
        scope: 'avatar',
        avatar: id,
        measure: 'tokens',
        limit: caps.avatarTokens,
        used: tokens(totals),
      });
    if (caps.avatarCostUsd !== undefined)
      out.push({
        scope: 'avatar',
        avatar: id,
        measure: 'costUsd',
        limit: caps.avatarCostUsd,
        used: totals.costUsd,
      });
  }
  if (caps.totalTokens !== undefined)
    out.push({ scope: 'total', measure: 'tokens', limit: caps.totalTokens, used: tokens(day.total) });
  if (caps.totalCostUsd !== undefined)
    out.push({ scope: 'total', measure: 'costUsd', limit: caps.totalCostUsd, used: day.total.costUsd });
  return out;
}
