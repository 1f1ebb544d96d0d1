import type { CapUse, UsageGrouping, UsageRow, UsageTotals } from '../../ports/usage.js';
import type { AvatarUsageCaps, DailyUsageCaps } from './dailyUsageCaps.js';

export type { CapUse };

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

/** `12,400 of 50,000 tokens (24.8%)`, `— reached` once used up. */
export function capFigures(cap: CapUse): string {
  const share = `${((cap.used / cap.limit) * 100).toFixed(1)}%`;
  const figures =
    cap.measure === 'tokens'
      ? `${whole(cap.used)} of ${whole(cap.limit)} tokens`
      : `${usd(cap.used)} of ${usd(cap.limit)}`;
  return `${figures} today (${share})${cap.used >= cap.limit ? ' — reached' : ''}`;
}

/** `ada: 12,400 of 50,000 tokens today (24.8%)`. */
export function capLine(cap: CapUse): string {
  const who = cap.scope === 'avatar' ? (cap.avatar ?? '') : 'All calls';
  return `${who}: ${capFigures(cap)}`;
}

/** `3 calls, 12,400 tokens, $0.043` (tokens or cost `—` when no call reported them), with what is left out. */
export function totalsText(t: UsageTotals): string {
  const [, calls, , , , cost, note] = cells('', t);
  const withUsage = t.calls - t.callsWithoutUsage;
  const tokens = withUsage > 0 || t.calls === 0 ? whole(t.inputTokens + t.outputTokens) : '—';
  const callWord = t.calls === 1 ? 'call' : 'calls';
  return `${calls} ${callWord}, ${tokens} tokens, ${cost}${note ? ` (${note})` : ''}`;
}

/** One avatar's day for {@link capUses}: with `caps`, its own caps (from its definition) replace the per-avatar ones. */
export interface AvatarDay {
  id: string;
  totals: UsageTotals;
  caps?: AvatarUsageCaps | undefined;
}

const tokensOf = (t: UsageTotals) => t.inputTokens + t.outputTokens;

/** The caps of one avatar with its day's use: its own where given, else the per-avatar ones. */
export function avatarCapUses(caps: DailyUsageCaps, avatar: AvatarDay): CapUse[] {
  const tokens = avatar.caps ? avatar.caps.tokens : caps.avatarTokens;
  const costUsd = avatar.caps ? avatar.caps.costUsd : caps.avatarCostUsd;
  const out: CapUse[] = [];
  const base = { scope: 'avatar', avatar: avatar.id } as const;
  if (tokens !== undefined)
    out.push({ ...base, measure: 'tokens', limit: tokens, used: tokensOf(avatar.totals) });
  if (costUsd !== undefined)
    out.push({ ...base, measure: 'costUsd', limit: costUsd, used: avatar.totals.costUsd });
  return out;
}

/** The total caps with the day's use of every call. */
export function totalCapUses(caps: DailyUsageCaps, total: UsageTotals): CapUse[] {
  const out: CapUse[] = [];
  if (caps.totalTokens !== undefined)
    out.push({ scope: 'total', measure: 'tokens', limit: caps.totalTokens, used: tokensOf(total) });
  if (caps.totalCostUsd !== undefined)
    out.push({ scope: 'total', measure: 'costUsd', limit: caps.totalCostUsd, used: total.costUsd });
  return out;
}

/**
 * Every cap set, with the day's use: each avatar given against its caps (its own, else the
 * per-avatar ones), then the totals.
 */
export function capUses(
  caps: DailyUsageCaps,
  day: { total: UsageTotals; avatars: readonly AvatarDay[] },
): CapUse[] {
  return [...day.avatars.flatMap((avatar) => avatarCapUses(caps, avatar)), ...totalCapUses(caps, day.total)];
}
